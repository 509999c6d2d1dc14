"""pytest fixtures for testing Kafka clients against an in-process kcsim.

Installed with kcsim (entry point `pytest11`): any test can ask for

- `kcsim`: a broker started in-process on a free port with in-memory state,
  one per test; use `kcsim.bootstrap` as `bootstrap.servers`;
- `kcsim_persistent`: the same with its state on disk under `tmp_path`;
  `kcsim_persistent.restart()` stops it and starts it again on the same port;
- `kcsim_trio`: for `async def` tests (pytest-trio): a broker inside the test's
  own trio run; ask for `autojump_clock` too and its time is trio's MockClock;
- `kcsim_ssl`: the same as `kcsim` on an SSL listener (`kcsim_ssl.bootstrap`), with a
  PLAINTEXT one beside it, serving a certificate of a CA made for it: clients trust
  `kcsim_ssl.ssl_ca_file`; `kcsim_ssl.issue_client_cert("client")` gives a client
  certificate for mutual TLS (client certificates are requested, not required);
- `kcsim_sasl`: the same with SASL_PLAINTEXT (`kcsim_sasl.bootstrap`), SASL_SSL and
  PLAINTEXT listeners (`kcsim_sasl.bootstrap_of("SASL_SSL")`): PLAIN accepts
  `alice`/`alice-secret`; SCRAM users are made with AlterUserScramCredentials (an admin
  client on any listener);
- `kcsim_embedded_factory`: start brokers with settings, e.g.
  `kcsim_embedded_factory(default_partitions=3, initial_rebalance_delay_ms=0)`.

Settings for `kcsim`, `kcsim_ssl`, `kcsim_sasl`, `kcsim_persistent` and `kcsim_trio` come from a marker:
`@pytest.mark.kcsim(default_partitions=3)`. Each broker carries the controls
(kcsim.testing): `.clock`, `.faults`, `.requests(...)`, `.wait_for_group(...)`, ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .embedded import EmbeddedServer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Iterator
    from pathlib import Path

    from .in_trio import TrioKcsim


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "kcsim(**settings): broker settings for the kcsim fixtures of this test")


def _marked(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings of every kcsim marker on the test (the closest wins)."""
    settings: dict[str, Any] = {}
    for marker in reversed(list(request.node.iter_markers("kcsim"))):
        if marker.args:
            raise TypeError("@pytest.mark.kcsim takes settings as keyword arguments")
        settings.update(marker.kwargs)
    return settings


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
def kcsim(request: pytest.FixtureRequest,
          kcsim_embedded_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return kcsim_embedded_factory(**_marked(request))


SSL_SETTINGS = {"listeners": "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
                "ssl_client_auth": "requested"}


@pytest.fixture
def kcsim_ssl(request: pytest.FixtureRequest,
              kcsim_embedded_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return kcsim_embedded_factory(**{**SSL_SETTINGS, **_marked(request)})


SASL_SETTINGS = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,"
                              "PLAINTEXT://127.0.0.1:0",
                 "sasl_plain_users": "alice:alice-secret"}


@pytest.fixture
def kcsim_sasl(request: pytest.FixtureRequest,
               kcsim_embedded_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    return kcsim_embedded_factory(**{**SASL_SETTINGS, **_marked(request)})


@pytest.fixture
def kcsim_persistent(request: pytest.FixtureRequest, tmp_path: Path,
                     kcsim_embedded_factory: Callable[..., EmbeddedServer]) -> EmbeddedServer:
    settings = {"data_dir": str(tmp_path / "kcsim-data"), **_marked(request), "in_memory": False}
    return kcsim_embedded_factory(**settings)


try:
    from pytest_trio import trio_fixture
except ImportError:  # without pytest-trio the trio fixture says what it needs

    @pytest.fixture
    def kcsim_trio() -> None:
        pytest.skip("the kcsim_trio fixture needs pytest-trio (pip install pytest-trio)")

else:

    @trio_fixture
    async def kcsim_trio(request: pytest.FixtureRequest) -> AsyncIterator[TrioKcsim]:
        from .in_trio import open_trio_kcsim

        async with open_trio_kcsim(**_marked(request)) as broker:
            yield broker
