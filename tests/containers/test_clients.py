"""Clients on the host, against the image on the default port and on another port.

On 9092 the image's defaults are enough. On any other host port, the published
port and the advertised listener must agree: a client is always sent back to the
address the broker advertises.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from ..clientflows import FLOWS, MESSAGES, payloads
from .conftest import REPORT, Docker, free_port, port_is_free, wait_until_answers

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.timeout(900)

DEFAULT_PORT = 9092


@pytest.fixture(scope="module")
def on_default_port(image: str) -> Iterator[int]:
    if not port_is_free(DEFAULT_PORT):
        pytest.skip(f"127.0.0.1:{DEFAULT_PORT} is taken on this machine by something else")
    made = Docker(image)
    try:
        start = time.monotonic()
        made.run("-p", f"127.0.0.1:{DEFAULT_PORT}:9092", "-e", "KCSIM_INITIAL_REBALANCE_DELAY_MS=0")
        wait_until_answers(DEFAULT_PORT)
        REPORT["docker run to ready"] = f"{time.monotonic() - start:.2f} s"
        yield DEFAULT_PORT
    finally:
        made.close()


@pytest.fixture(scope="module")
def on_another_port(image: str) -> Iterator[int]:
    port = free_port()
    made = Docker(image)
    try:
        made.run("-p", f"127.0.0.1:{port}:9092", "-e", "KCSIM_INITIAL_REBALANCE_DELAY_MS=0",
                 "-e", f"KCSIM_ADVERTISED_LISTENERS=PLAINTEXT_HOST://127.0.0.1:{port}")
        wait_until_answers(port)
        yield port
    finally:
        made.close()


def _check(client: str, port: int, names: Any) -> None:
    topic = names("topic")
    seen = FLOWS[client](f"127.0.0.1:{port}", topic, names("group"))
    assert seen.brokers == [("127.0.0.1", port)]
    assert seen.values == payloads(topic)
    assert seen.committed == MESSAGES


@pytest.mark.parametrize("client", FLOWS)
def test_host_clients_on_the_default_port(on_default_port: int, names: Any, client: str) -> None:
    _check(client, on_default_port, names)


@pytest.mark.parametrize("client", FLOWS)
def test_host_clients_on_a_remapped_port(on_another_port: int, names: Any, client: str) -> None:
    _check(client, on_another_port, names)
