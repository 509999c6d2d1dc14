"""The pure group coordinator: classic groups, KIP-848 consumer groups, KIP-1249
paused partitions and committed offsets, as a fold of records driven by
(request, now_ms). No trio, no sockets, no clock, no file I/O.

What the server needs is exported here; the parts are layered (see pyproject's
import contracts): `shared` (runtime state, time-outs, offset store, paused sets)
at the bottom, then classic `groups` and KIP-848 `consumer` groups, then the
handlers that span both (`offsets`, `admin`, `pause`, `failures`), and the
`GroupCoordinator` facade on top.
"""

from .consumer.assignors import ASSIGNORS, assignor_names
from .coordinator import SUPPORTED_VERSIONS, GroupCoordinator
from .shared.interface import (
    Caller,
    Failure,
    GroupConfig,
    Outcome,
    RequestContext,
    TopicLookup,
)

__all__ = [
    "ASSIGNORS",
    "SUPPORTED_VERSIONS",
    "Caller",
    "Failure",
    "GroupConfig",
    "GroupCoordinator",
    "Outcome",
    "RequestContext",
    "TopicLookup",
    "assignor_names",
]
