"""The group coordinator (classic and KIP-848 groups, KIP-1249 pauses): a pure state machine
over records."""

from .coordinator import SUPPORTED_VERSIONS, GroupCoordinator
from .interface import Caller, GroupConfig, Outcome, RequestContext, TopicLookup

__all__ = [
    "SUPPORTED_VERSIONS",
    "Caller",
    "GroupConfig",
    "GroupCoordinator",
    "Outcome",
    "RequestContext",
    "TopicLookup",
]
