"""The classic (pre-KIP-848) group coordinator: a pure state machine over records."""

from .coordinator import SUPPORTED_VERSIONS, GroupCoordinator
from .interface import GroupConfig, Outcome, RequestContext, TopicLookup

__all__ = [
    "SUPPORTED_VERSIONS",
    "GroupConfig",
    "GroupCoordinator",
    "Outcome",
    "RequestContext",
    "TopicLookup",
]
