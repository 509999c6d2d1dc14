"""What tests use to run and steer kcsim (docs/testing.md).

- ``EmbeddedServer``: a broker on a background thread of this process;
  ``open_trio_kcsim``: one inside the caller's trio run (``TrioKcsim``);
- on either: ``.clock`` (advance, freeze, resume simulated time), ``.faults``
  (fault rules: errors, latency, held requests, closed connections, coordinator
  loading or unavailable), ``.requests(...)`` (the request log), ``.group(...)``,
  ``.groups()``, ``.paused(...)``, ``.committed(...)`` and ``.lag(...)`` (state views; a
  streams group's members show their active, standby and warm-up tasks),
  ``.share_partition(...)`` (a share group's in-flight records: state, delivery count,
  holder, lock deadline),
  ``.events(...)`` (the group event log: ``GroupEventValue``s, each with its cause),
  ``run_log_maintenance()`` (topics' retention and log cleaner, now), ``.nodes``
  (with ``brokers=N``: stop and start a node, move a partition's leader or a
  group's coordinator, shuffle leaders; ``.bootstrap_servers`` names every node), and the
  waits ``wait_for_group``, ``wait_for_committed``, ``wait_for_request``,
  ``wait_for_fault`` and ``wait_for_event``, which raise ``WaitTimeout`` showing the
  state they saw;
- ``kcsim serve --control-port`` serves the same controls over HTTP
  (docs/control-http.md);
- the pytest fixtures ``kcsim``, ``kcsim_persistent``, ``kcsim_trio`` and
  ``kcsim_embedded_factory``, installed as a pytest plugin with kcsim; importing
  them from here is for projects that register plugins explicitly. They are
  loaded on first use, so this module imports where pytest is not installed.

Rules, log entries, statuses and views are msgspec structs: ``msgspec.to_builtins``
gives their plain-data (JSON) form, and ``FaultRule`` converts from a dict. An event's
form by field name is ``kcsim.coordinator.shared.events.event_fields(event)``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.records import GroupEventValue
from kcsim.server.control.faults import FaultRule, FaultStatus
from kcsim.server.control.request_log import RequestRecord
from kcsim.server.control.views import (
    GroupView,
    InFlightRecord,
    LagView,
    MemberView,
    SharePartitionView,
    TasksView,
)
from kcsim.server.control.waits import WaitTimeout
from kcsim.server.embedded import EmbeddedServer
from kcsim.server.in_trio import TrioKcsim, open_trio_kcsim

if TYPE_CHECKING:
    from kcsim.server.pytest_plugin import (
        kcsim,
        kcsim_embedded_factory,
        kcsim_persistent,
        kcsim_trio,
    )

_PLUGIN = "kcsim.server.pytest_plugin"
_FIXTURES = ("kcsim", "kcsim_embedded_factory", "kcsim_persistent", "kcsim_trio")

__all__ = [
    "EmbeddedServer",
    "FaultRule",
    "FaultStatus",
    "GroupEventValue",
    "GroupView",
    "InFlightRecord",
    "LagView",
    "MemberView",
    "RequestRecord",
    "SharePartitionView",
    "TasksView",
    "TrioKcsim",
    "WaitTimeout",
    "kcsim",
    "kcsim_embedded_factory",
    "kcsim_persistent",
    "kcsim_trio",
    "open_trio_kcsim",
]


def __getattr__(name: str) -> Any:
    """The fixtures, from the pytest plugin, which needs pytest."""
    if name not in _FIXTURES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        plugin = importlib.import_module(_PLUGIN)
    except ModuleNotFoundError as exc:
        if exc.name != "pytest":
            raise
        raise ImportError(f"kcsim.testing.{name} is a pytest fixture: it needs pytest "
                          "(pip install pytest)") from exc
    value = getattr(plugin, name)
    globals()[name] = value
    return value
