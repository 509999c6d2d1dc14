"""The two brokers of the differential tier, configured alike, and a `compare` fixture."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.server.embedded import EmbeddedServer

from .harness import TALLY, Endpoint, compare, each_version, shared_versions
from .kafka import GROUP_SETTINGS

_HERE = Path(__file__).resolve().parent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .harness import Difference
    from .kafka import KafkaBroker

@pytest.fixture(scope="session")
def kafka(kafka_broker: KafkaBroker) -> Endpoint:
    return Endpoint(f"kafka {kafka_broker.version}", kafka_broker.host, kafka_broker.port)


@pytest.fixture(scope="session")
def twin() -> Iterator[Endpoint]:
    """An in-process kcsim with the same group settings as the Kafka broker."""
    settings: dict[str, Any] = {name: value for name, _, value in GROUP_SETTINGS}
    server = EmbeddedServer(host="127.0.0.1", node_id=1, auto_create_topics=True, **settings).start()
    try:
        assert server.port is not None
        yield Endpoint("kcsim", "127.0.0.1", server.port)
    finally:
        server.stop()


@pytest.fixture
def differential(twin: Endpoint, kafka: Endpoint) -> Callable[..., list[Difference]]:
    """differential(scenario, *args): run on both brokers, fail on unlisted differences."""

    def run(scenario: Callable[..., Any], *args: Any, name: str | None = None) -> list[Difference]:
        return compare(scenario, twin, kafka, *args, name=name)

    return run


@pytest.fixture
def across(twin: Endpoint, kafka: Endpoint,
           differential: Callable[..., list[Difference]]) -> Callable[..., list[int]]:
    """across(api_key, scenario, *args): scenario(run, version, *args) at every version of
    the API both brokers serve; returns the versions compared."""

    def run(api_key: int, scenario: Callable[..., Any], *args: Any) -> list[int]:
        versions = shared_versions(api_key, twin, kafka)
        assert versions, f"no version of API {api_key} is served by both brokers"
        each_version(versions, lambda v: differential(scenario, v, *args))
        return versions

    return run


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY.scenarios:
        allowed = sum(TALLY.allowed.values())
        terminalreporter.write_line(
            f"kafka oracle: {TALLY.scenarios} differential scenario runs, {TALLY.steps} answers "
            f"compared, {allowed} allowlisted differences seen "
            f"({len(TALLY.allowed)} distinct entries)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first oracle test may fetch Kafka with Maven and start it: allow for that."""
    for item in items:
        if _HERE in item.path.parents and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(600))
