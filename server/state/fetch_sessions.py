"""Incremental fetch sessions (KIP-227): what each fetcher last asked for and was told.

A fetcher that keeps a session names only the partitions whose fetch position changed
(and those it stops fetching), and is answered only for partitions with something new;
the broker fills in the rest from the session. This module is the broker's side of it,
free of the wire: sessions, their partitions and the bounded cache that holds them, with
Kafka's rules (FetchSession.scala: FetchSession, FetchSessionCacheShard, FetchManager).

- A session is opened by a full fetch (epoch 0) when the cache has a slot for it, and
  answers at epoch 1; each incremental fetch must name the epoch the session expects,
  which then moves on (after 2**31-1 it wraps to 1).
- A session is keyed by topic id from Fetch v13 on, by topic name before; a request of
  the other kind is refused (FETCH_SESSION_TOPIC_ID_ERROR), as are an unknown id
  (FETCH_SESSION_ID_NOT_FOUND) and a wrong epoch (INVALID_FETCH_SESSION_EPOCH).
- A partition is left out of an incremental answer when it returned no records, has no
  error, and its high watermark and log start offset are what the session last told
  (`SessionPartition.must_answer`). One that returned records moves to the back of
  the session, so the others are read first next time (the fetch budget is shared).
- The cache has `max.incremental.fetch.session.cache.slots` slots split evenly over
  8 shards; each new session goes to the next shard in turn and draws a random id
  from that shard's range. A full shard makes room only as Kafka's does
  (`CacheShard._try_evict`): the session unused longest if unused for over
  two minutes; otherwise the least valuable evictable one (a follower's ranks above a
  consumer's, then more partitions above fewer) if the newcomer is worth more. A
  session becomes evictable by a consumer's only once it is over two minutes old,
  judged when it was last used. Sessions are kept by id, not by connection: a client
  may carry its session over a new connection, as with Kafka.

Time is handed in (the broker's clock, `now_ms`); nothing here reads it.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterable

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
SHARDS = 8  # Kafka's NumFetchSessionCacheShards
EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
INT32_MAX = 0x7FFFFFFF

PartitionKey = tuple["uuid.UUID | str", int]  # (topic id, or name before v13; partition)


def next_epoch(epoch: int) -> int:
    """The epoch after `epoch` (Kafka's FetchMetadata.nextEpoch)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class SessionPartition:
    """One partition of a session: what the fetcher asked last (named as in the request,
    so the session's partitions read like a request's) and what it was last told."""

    __slots__ = ("current_leader_epoch", "fetch_offset", "high_watermark", "log_start_offset",
                 "partition", "partition_max_bytes", "told_log_start")

    def __init__(self, partition: int, fetch_offset: int, partition_max_bytes: int,
                 current_leader_epoch: int = -1, log_start_offset: int = -1) -> None:
        self.partition = partition
        self.fetch_offset = fetch_offset
        self.partition_max_bytes = partition_max_bytes
        self.current_leader_epoch = current_leader_epoch
        self.log_start_offset = log_start_offset  # the fetcher's own (a follower's)
        self.high_watermark = -1  # as last told; -1: never, or after an error
        self.told_log_start = -1  # the partition's log start offset, as last told

    def asked(self, fetch_offset: int, partition_max_bytes: int, current_leader_epoch: int,
              log_start_offset: int) -> None:
        self.fetch_offset = fetch_offset
        self.partition_max_bytes = partition_max_bytes
        self.current_leader_epoch = current_leader_epoch
        self.log_start_offset = log_start_offset

    def told(self, high_watermark: int, log_start: int, error: int) -> None:
        """Remember an answer given in full (the one that opened the session)."""
        self.high_watermark = -1 if error else high_watermark
        self.told_log_start = log_start

    def must_answer(self, has_records: bool, high_watermark: int, log_start: int,
                    error: int, preferred_replica: int) -> bool:
        """Whether an incremental answer must carry this partition, remembering what it
        tells (Kafka's CachedPartition.maybeUpdateResponseData)."""
        answer = has_records or preferred_replica >= 0
        if self.high_watermark != high_watermark:
            self.high_watermark = high_watermark
            answer = True
        if self.told_log_start != log_start:
            self.told_log_start = log_start
            answer = True
        if error:
            self.high_watermark = -1  # so that the partition is told again once it recovers
            answer = True
        return answer


class FetchSession:
    """A session's partitions, in the order they are read, and its place in the cache."""

    __slots__ = ("by_topic_id", "cached_size", "created_ms", "epoch", "evictable_by_all",
                 "evictable_by_privileged", "id", "last_used_ms", "partitions", "privileged",
                 "shard")

    def __init__(self, session_id: int, shard: CacheShard, privileged: bool, by_topic_id: bool,
                 partitions: dict[PartitionKey, SessionPartition], now_ms: int) -> None:
        self.id = session_id
        self.shard = shard
        self.privileged = privileged  # a follower's (replica id >= 0)
        self.by_topic_id = by_topic_id
        self.partitions = partitions
        self.created_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.cached_size = len(partitions)  # the size the cache last judged it by
        self.evictable_by_all = False
        self.evictable_by_privileged = False

    def update(self, asked: Iterable[tuple[PartitionKey, Any]],
               forgotten: Iterable[PartitionKey]) -> None:
        """Add or update the partitions a request names (each with a request partition's
        fields), then drop those it forgets."""
        partitions = self.partitions
        for key, p in asked:
            cached = partitions.get(key)
            if cached is None:
                partitions[key] = SessionPartition(p.partition, p.fetch_offset,
                                                   p.partition_max_bytes,
                                                   p.current_leader_epoch, p.log_start_offset)
            else:
                cached.asked(p.fetch_offset, p.partition_max_bytes, p.current_leader_epoch,
                             p.log_start_offset)
        for key in forgotten:
            partitions.pop(key, None)

    def to_back(self, key: PartitionKey) -> None:
        """Read this partition last next time (it returned records)."""
        self.partitions[key] = self.partitions.pop(key)


class CacheShard:
    """One of the cache's shards: its sessions, up to `slots`, with ids in its own range."""

    def __init__(self, number: int, slots: int, rng: random.Random) -> None:
        self.number = number
        self.slots = slots
        self.sessions: dict[int, FetchSession] = {}
        self._rng = rng
        span = INT32_MAX // SHARDS
        self._ids = (max(1, number * span), (number + 1) * span)

    def create(self, now_ms: int, privileged: bool, by_topic_id: bool,
               partitions: dict[PartitionKey, SessionPartition]) -> FetchSession | None:
        """A new session over `partitions`, or None when there is no room for it."""
        if len(self.sessions) >= self.slots and not self._try_evict(
                privileged, len(partitions), now_ms):
            return None
        session = FetchSession(self._new_id(), self, privileged, by_topic_id, partitions, now_ms)
        self.sessions[session.id] = session
        self.touch(session, now_ms)
        return session

    def _new_id(self) -> int:
        low, high = self._ids
        while True:
            session_id = self._rng.randrange(low, high)
            if session_id not in self.sessions:
                return session_id

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """The session was used: note when, its size, and whom it may now be evicted by."""
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        old = now_ms - session.created_ms > EVICTION_MS
        session.evictable_by_privileged = old or not session.privileged
        session.evictable_by_all = old

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Make room for a session of `size` partitions if Kafka would (tryEvict)."""
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stale.last_used_ms > EVICTION_MS:
            self.remove(stale.id)
            return True
        if privileged:
            candidates = [s for s in self.sessions.values() if s.evictable_by_privileged]
        else:
            candidates = [s for s in self.sessions.values() if s.evictable_by_all]
        if not candidates:
            return False
        cheapest = min(candidates, key=lambda s: (s.privileged, s.cached_size, s.id))
        if (privileged, size, 0) < (cheapest.privileged, cheapest.cached_size, cheapest.id):
            return False
        self.remove(cheapest.id)
        return True

    def remove(self, session_id: int) -> FetchSession | None:
        return self.sessions.pop(session_id, None)


class FetchSessionCache:
    """Every fetch session of the broker, by id, in `SHARDS` shards."""

    def __init__(self, slots: int = 1000, rng: random.Random | None = None) -> None:
        rng = rng if rng is not None else random.Random()
        self.shards = [CacheShard(n, slots // SHARDS, rng) for n in range(SHARDS)]
        self._span = INT32_MAX // SHARDS
        self._turn = 0

    def get(self, session_id: int) -> FetchSession | None:
        if not 0 < session_id < self._span * SHARDS:
            return None
        return self.shards[session_id // self._span].sessions.get(session_id)

    def remove(self, session_id: int) -> FetchSession | None:
        session = self.get(session_id)
        return None if session is None else session.shard.remove(session_id)

    def create(self, now_ms: int, privileged: bool, by_topic_id: bool,
               partitions: dict[PartitionKey, SessionPartition]) -> FetchSession | None:
        """A new session in the next shard, or None when it has no room (the fetch is then
        answered with no session, as a sessionless one)."""
        shard = self.shards[self._turn % SHARDS]
        self._turn += 1
        return shard.create(now_ms, privileged, by_topic_id, partitions)

    def __len__(self) -> int:
        return sum(len(s.sessions) for s in self.shards)
