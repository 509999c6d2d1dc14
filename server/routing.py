"""Which broker coordinates a group: the one place multi-broker routing will live."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import Config


def coordinator_node(config: Config, key: str, key_type: int = 0) -> tuple[int, str, int]:
    """(node id, host, port) of the coordinator for a group (or transactional) key."""
    host, port = config.advertised
    return config.node_id, host, port
