"""The coordinator's timers: one key shape for every time-out, whichever kind of group it guards.

A timer is named by what it guards (`kind`), the group and, for a member's
timers, the member; scheduling the same key again moves it. The facade fires a
due timer through the handler registered for its kind. Groups read back from
the log get their timers when the coordinator first sees the time (`loaded`),
so a restart gives every member a full session, as a Kafka coordinator's load
does.
"""

from __future__ import annotations

from typing import NamedTuple

# Classic groups: a member's session, the join phase, the sync phase.
HEARTBEAT = "heartbeat"
JOIN = "join"
SYNC = "sync"
# KIP-848 consumer groups: a member's session, its time to revoke partitions.
SESSION = "cg-session"
REBALANCE = "cg-rebalance"
# KIP-1071 streams groups: a member's session, its time to revoke tasks.
STREAMS_SESSION = "sg-session"
STREAMS_REBALANCE = "sg-rebalance"
STREAMS_INITIAL_DELAY = "sg-initial-delay"  # a new group's first assignment waits
# KIP-932 share groups: a member's session.
SHARE_SESSION = "shg-session"
# Offsets retention (KIP-211): one timer for the whole coordinator.
RETENTION = "retention"


class TimerKey(NamedTuple):
    kind: str
    group_id: str = ""
    member_id: str = ""


_make_key = tuple.__new__  # skips NamedTuple's Python-level __new__ on every heartbeat


def heartbeat_key(group_id: str, member_id: str) -> TimerKey:
    return _make_key(TimerKey, (HEARTBEAT, group_id, member_id))


def join_key(group_id: str) -> TimerKey:
    return TimerKey(JOIN, group_id)


def sync_key(group_id: str) -> TimerKey:
    return TimerKey(SYNC, group_id)


def session_key(group_id: str, member_id: str) -> TimerKey:
    return TimerKey(SESSION, group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> TimerKey:
    return TimerKey(REBALANCE, group_id, member_id)


def streams_session_key(group_id: str, member_id: str) -> TimerKey:
    return TimerKey(STREAMS_SESSION, group_id, member_id)


def streams_rebalance_key(group_id: str, member_id: str) -> TimerKey:
    return TimerKey(STREAMS_REBALANCE, group_id, member_id)


def streams_initial_delay_key(group_id: str) -> TimerKey:
    return TimerKey(STREAMS_INITIAL_DELAY, group_id)


def share_session_key(group_id: str, member_id: str) -> TimerKey:
    return TimerKey(SHARE_SESSION, group_id, member_id)


RETENTION_KEY = TimerKey(RETENTION)
