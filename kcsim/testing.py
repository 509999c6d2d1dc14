"""What tests use to run and steer kcsim: the embedded server and the pytest fixtures.

The fixtures (``kcsim``, ``kcsim_embedded_factory``) are installed as a pytest
plugin with kcsim; importing them from here is for projects that register
plugins explicitly.
"""

from __future__ import annotations

from kcsim.server.embedded import EmbeddedServer
from kcsim.server.pytest_plugin import kcsim, kcsim_embedded_factory

__all__ = ["EmbeddedServer", "kcsim", "kcsim_embedded_factory"]
