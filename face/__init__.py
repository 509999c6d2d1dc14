"""kcsim: a simulated Kafka broker and group coordinator that real Kafka clients talk to.

The public face is small; everything else is internal and may change:

- ``kcsim.EmbeddedServer``: a broker inside this process (also ``kcsim.testing``);
- ``kcsim.Config`` and ``kcsim.load_config``: server settings;
- ``kcsim.admin``: the admin client (``AdminClient``, ``TrioAdminClient``), which
  works against any Kafka cluster;
- ``kcsim.testing``: what tests use (embedded server, pytest fixtures);
- ``kcsim.testcontainers``: ``KcsimContainer``, the Docker image under
  testcontainers-python (the ``testcontainers`` extra).

The project's top-level folders (protocol, coordinator, storage, server, admin,
tools, pipeline) are its subpackages, mapped in pyproject.toml; this folder is
``face/``. Names are resolved on first use, so ``import kcsim`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcsim.server.config import Config
    from kcsim.server.config import load as load_config
    from kcsim.server.embedded import EmbeddedServer

__all__ = ["Config", "EmbeddedServer", "load_config"]

_LAZY = {
    "Config": ("kcsim.server.config", "Config"),
    "load_config": ("kcsim.server.config", "load"),
    "EmbeddedServer": ("kcsim.server.embedded", "EmbeddedServer"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'kcsim' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
