"""Two listeners on one server: every real client is sent to the listener it came through.

The listeners bind two loopback addresses, so the address a client is handed
(in Metadata, DescribeCluster and FindCoordinator) tells which listener it
came from; the consumer-group round trip then runs over that address.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ...clientflows import FLOWS, MESSAGES, payloads

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def two_listeners(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from ...conftest import KcsimProcess

    base = tmp_path_factory.mktemp("listeners")
    server = KcsimProcess(base / "data", base / "kcsim.stderr.log",
                          listeners="FIRST://127.0.0.1:0,SECOND://127.0.0.2:0",
                          initial_rebalance_delay_ms=0, in_memory=True).start()
    try:
        yield server
    finally:
        server.stop()


def advertised(ready_line: str) -> dict[str, tuple[str, int]]:
    """Listener name -> advertised (host, port), from the ready line."""
    return {name: (host, int(port))
            for name, host, port in re.findall(r"(\w+)://([^,:\s]+):(\d+)", ready_line)}


@pytest.mark.parametrize("listener", ["FIRST", "SECOND"])
@pytest.mark.parametrize("client", FLOWS)
def test_a_client_is_sent_to_its_own_listener(two_listeners: Any, unique_name: Any,
                                              client: str, listener: str) -> None:
    addresses = advertised(two_listeners.ready_line)
    assert set(addresses) == {"FIRST", "SECOND"}
    assert addresses["FIRST"][0] == "127.0.0.1" and addresses["SECOND"][0] == "127.0.0.2"
    host, port = addresses[listener]
    topic = unique_name(listener.lower())
    seen = FLOWS[client](f"{host}:{port}", topic, unique_name("group"))
    assert seen.brokers == [(host, port)]
    assert seen.values == payloads(topic)
    assert seen.committed == MESSAGES
