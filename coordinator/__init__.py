"""The pure group coordinator: classic groups, KIP-848 consumer groups, KIP-1249
paused partitions and committed offsets, as a fold of records driven by
(request, now_ms). No trio, no sockets, no clock, no file I/O.

What the server needs is exported here; the parts are layered (see pyproject's
import contracts): `shared` (runtime state, time-outs, offset store, paused sets)
at the bottom, then classic `groups` and KIP-848 `consumer` groups, then the
handlers that span both (`offsets`, `txn_offsets`, `admin`, `pause`, `failures`), and the
`GroupCoordinator` facade on top. The `transactions` coordinator (transactional ids,
producer ids and epochs, transaction states) stands beside the groups on the shared parts.
"""

from .consumer.assignors import ASSIGNORS, assignor_names
from .coordinator import SUPPORTED_VERSIONS, GroupCoordinator
from .shared.interface import (
    Caller,
    Ending,
    Failure,
    GroupConfig,
    Outcome,
    RequestContext,
    TopicLookup,
)
from .transactions.coordinator import TransactionCoordinator, TxnConfig

__all__ = [
    "ASSIGNORS",
    "SUPPORTED_VERSIONS",
    "Caller",
    "Ending",
    "Failure",
    "GroupConfig",
    "GroupCoordinator",
    "Outcome",
    "RequestContext",
    "TopicLookup",
    "TransactionCoordinator",
    "TxnConfig",
    "assignor_names",
]
