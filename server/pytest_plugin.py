"""pytest fixtures for testing Kafka clients against an in-process kcsim.

Installed with kcsim (entry point `pytest11`): any test can ask for

- `kcsim`: a broker started in-process on a free port with in-memory state,
  one per test; use `kcsim.bootstrap` as `bootstrap.servers`;
- `kcsim_embedded_factory`: start brokers with settings, e.g.
  `kcsim_embedded_factory(default_partitions=3, initial_rebalance_delay_ms=0)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .embedded import EmbeddedServer

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


@pytest.fixture
def kcsim_embedded_factory() -> Iterator[Callable[..., EmbeddedServer]]:
    started: list[EmbeddedServer] = []

    def start(**settings: Any) -> EmbeddedServer:
        server = EmbeddedServer(**settings).start()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.stop()


@pytest.fixture
def kcsim(kcsim_embedded_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return kcsim_embedded_factory()
