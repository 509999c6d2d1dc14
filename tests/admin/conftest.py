"""Fixtures of the admin tests: one kcsim server per module, topics with known records."""

from __future__ import annotations

import time
from typing import Any

import pytest

from .helpers import create_topic, produce
from .streams_app import STREAMS_SETTINGS

RECORDS = 10  # per partition
PARTITIONS = 3
NOW_MS = int(time.time() * 1000)
MINUTE_MS = 60_000


def record_timestamp(partition: int, i: int) -> int:
    """Record i of every partition is (RECORDS - i) * 10 minutes old."""
    return NOW_MS - (RECORDS - i) * 10 * MINUTE_MS


@pytest.fixture(scope="module")
def bootstrap(kcsim_module_server: Any) -> str:
    return str(kcsim_module_server.bootstrap)


@pytest.fixture(scope="module")
def streams_server() -> Any:
    """An embedded kcsim that assigns a streams group's tasks at once (no initial delay)."""
    from kcsim.server.embedded import EmbeddedServer

    with EmbeddedServer(**STREAMS_SETTINGS) as server:
        yield server


@pytest.fixture
def topic(bootstrap: str, unique_name: Any) -> str:
    """A 3-partition topic with 10 records in each partition, timestamped 100..10 minutes ago."""
    name = unique_name("orders")
    create_topic(bootstrap, name, PARTITIONS)
    produce(bootstrap, name, RECORDS, PARTITIONS, timestamp=record_timestamp)
    return name
