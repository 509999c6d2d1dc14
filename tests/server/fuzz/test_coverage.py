"""The fuzzer's seeds reach every API the broker serves, at every version it serves: the
log APIs (DeleteRecords, OffsetForLeaderEpoch, WriteTxnMarkers, DescribeLogDirs) too."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from .frames import seeds
from .harness import served_versions

if TYPE_CHECKING:
    from kcsim.server.embedded import EmbeddedServer

LOG_APIS = {21: (0, 2), 23: (2, 4), 27: (1, 2), 35: (1, 5)}  # what Kafka 4.4 serves


def test_seeds_cover_every_served_version_of_the_log_apis(kcsim: EmbeddedServer) -> None:
    assert kcsim.port is not None
    served = served_versions(kcsim.port)
    assert {key: served.get(key) for key in LOG_APIS} == LOG_APIS
    seeded = {(s.api_key, s.version) for s in seeds(served, {}, random.Random(7))}
    assert seeded == {(key, v) for key, (lo, hi) in served.items() for v in range(lo, hi + 1)}
