"""The fetch session cache's limits and eviction, as Kafka's FetchSessionCacheShard has them.

Slots are split over 8 shards, new sessions go to the shards in turn, and a full shard
evicts only a stale session (unused over two minutes), or a less valuable evictable one.
"""

from __future__ import annotations

import random

from kcsim.server.state.fetch_sessions import (
    EVICTION_MS,
    INT32_MAX,
    SHARDS,
    FetchSession,
    FetchSessionCache,
    SessionPartition,
    next_epoch,
)

T0 = 1_000_000


def parts(n: int) -> dict[tuple[str, int], SessionPartition]:
    return {("t", i): SessionPartition(i, 0, 1024) for i in range(n)}


def fill(cache: FetchSessionCache, now: int, size: int = 2) -> list[FetchSession]:
    """One session per shard (slots=8: every shard is then full)."""
    made = [cache.create(now, False, False, parts(size)) for _ in range(SHARDS)]
    assert all(s is not None for s in made)
    return [s for s in made if s is not None]


def test_sessions_are_spread_over_the_shards_with_ids_in_each_shards_range() -> None:
    cache = FetchSessionCache(16, random.Random(1))
    made = [cache.create(T0, False, False, parts(1)) for _ in range(16)]
    span = INT32_MAX // SHARDS
    for n, session in enumerate(made):
        assert session is not None and session.epoch == 1
        assert max(1, (n % SHARDS) * span) <= session.id < (n % SHARDS + 1) * span
        assert cache.get(session.id) is session
    assert len({s.id for s in made if s}) == 16 == len(cache)
    assert cache.create(T0, False, False, parts(1)) is None  # every shard is full


def test_fewer_slots_than_shards_leave_no_room_at_all() -> None:
    assert FetchSessionCache(7).create(T0, False, False, parts(1)) is None


def test_unknown_and_out_of_range_ids_find_nothing() -> None:
    cache = FetchSessionCache(8)
    for session_id in (0, -1, INT32_MAX, 12345):
        assert cache.get(session_id) is None
        assert cache.remove(session_id) is None


def test_a_young_session_is_not_evicted_for_a_consumer() -> None:
    cache = FetchSessionCache(8)
    fill(cache, T0)
    assert cache.create(T0 + EVICTION_MS, False, False, parts(100)) is None


def test_a_session_unused_for_over_two_minutes_is_evicted_for_anyone() -> None:
    cache = FetchSessionCache(8)
    sessions = fill(cache, T0)
    assert cache.create(T0 + EVICTION_MS, False, False, parts(1)) is None  # not yet stale
    newcomer = cache.create(T0 + EVICTION_MS + 1, False, False, parts(1))  # in shard 1
    assert newcomer is not None and cache.get(sessions[1].id) is None
    assert cache.get(newcomer.id) is newcomer


def test_an_old_session_in_use_is_evicted_only_for_a_bigger_one() -> None:
    cache = FetchSessionCache(8)
    sessions = fill(cache, T0, size=2)
    later = T0 + EVICTION_MS + 1
    for s in sessions:  # used since: none stale, but each older than two minutes
        s.shard.touch(s, later)
    assert cache.create(later, False, False, parts(2)) is None  # as big: kept
    bigger = cache.create(later, False, False, parts(3))
    assert bigger is not None
    assert cache.get(sessions[1].id) is None  # the turn had moved on to shard 1
    assert cache.get(sessions[0].id) is sessions[0]


def test_a_followers_session_evicts_a_young_consumer_session() -> None:
    cache = FetchSessionCache(8)
    sessions = fill(cache, T0, size=50)
    follower = cache.create(T0 + 1, True, False, parts(1))
    assert follower is not None and follower.privileged
    assert cache.get(sessions[0].id) is None
    for _ in range(SHARDS - 1):
        cache.create(T0 + 1, False, False, parts(1))
    # a consumer cannot evict the young follower session, however big
    assert cache.create(T0 + 2, False, False, parts(500)) is None
    assert cache.get(follower.id) is follower


def test_epochs_wrap_to_1_and_the_final_epoch_stays() -> None:
    assert next_epoch(0) == 1
    assert next_epoch(41) == 42
    assert next_epoch(INT32_MAX) == 1
    assert next_epoch(-1) == -1
