"""State is a fold over records: replaying what a coordinator wrote rebuilds its durable state."""

from __future__ import annotations

from msgspec import Struct

from kcsim.coordinator import GroupConfig, GroupCoordinator
from kcsim.coordinator.records import COORDINATOR_RECORD_TYPES
from kcsim.protocol.errors import ErrorCode as E
from kcsim.storage.records import Record, RecordTypes
from kcsim.storage.segment import decode_frames, encode_frames

from .group_harness import Harness

TYPES = RecordTypes(COORDINATOR_RECORD_TYPES)


def replayed(h: Harness, config: GroupConfig | None = None) -> Harness:
    """A fresh coordinator fed every record h wrote, through the storage encoding."""
    fresh = Harness(config or h.config, topics=h.topics.partitions, now=h.now)
    frames = b"".join(frame for frame, _count in encode_frames(TYPES, h.records, 0))
    for record in decode_frames(TYPES, frames, 0, len(frames)):
        fresh.gc.apply(record)
    return fresh


def test_offsets_and_tombstones_replay():
    h = Harness()
    h.commit("a", {("t", 0): 1, ("t", 1): 2})
    h.commit("a", {("t", 0): 3})
    h.commit("b", {("u", 0): 4})
    h.delete_offsets("a", {"t": [1]})
    h.commit("c", {("t", 0): 5})
    h.delete_groups("c")
    r = replayed(h)
    for group in ("a", "b", "c"):
        assert r.gc.committed_offsets(group) == h.gc.committed_offsets(group)
    assert sorted(r.gc.groups()) == ["a", "b"]


def test_a_stable_group_comes_back_stable_with_its_assignment():
    h = Harness()
    a, b = h.stable_group("g", 2)
    live = h.gc.group("g")
    r = replayed(h)
    group = r.gc.group("g")
    assert r.gc.group_state("g") == "Stable"
    assert (group.generation, group.protocol_type, group.protocol_name, group.leader_id) == (
        live.generation,
        live.protocol_type,
        live.protocol_name,
        live.leader_id,
    )
    assert {m: x.assignment for m, x in group.members.items()} == {
        m: x.assignment for m, x in live.members.items()
    }
    synced = r.response(r.sync("g", b, 1))
    assert synced.assignment == live.members[b].assignment
    assert r.heartbeat("g", a, 1).error_code == E.NONE


def test_loaded_sessions_start_at_the_first_call_after_load():
    h = Harness()
    a, _b = h.stable_group("g", 2)
    r = replayed(h)
    r.now += 3_600_000  # the broker was down for an hour
    r.tick()
    assert r.gc.group_state("g") == "Stable"
    r.advance(9_999)
    assert r.heartbeat("g", a, 1).error_code == E.NONE
    r.advance(1)  # b never came back: its session, started at load, is over
    assert list(r.gc.group("g").members) == [a]
    assert r.gc.group_state("g") == "PreparingRebalance"


def test_next_deadline_asks_for_an_immediate_first_tick():
    h = Harness()
    h.stable_group("g", 1)
    fresh = GroupCoordinator(GroupConfig(), h.topics)
    for record in h.records:
        fresh.apply(record)
    assert fresh.next_deadline() == 0
    fresh.tick(50_000)
    assert fresh.next_deadline() == 50_000 + 10_000  # the member's session


def test_an_empty_group_keeps_when_it_became_empty():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)
    h.leave("g", (a, None))
    empty_since = h.now
    r = replayed(h)
    assert r.gc.group_state("g") == "Empty"
    assert r.gc.group("g").state_timestamp == empty_since
    assert r.gc.group("g").generation == 2


def test_live_records_are_not_applied_twice():
    h = Harness()
    h.stable_group("g", 2)
    h.commit("s", {("t", 0): 1})
    group = h.gc.group("g")
    snapshot = (group.state, group.generation, dict(group.members), h.gc.committed_offsets("s"))
    for record in h.records[-2:]:
        h.gc.apply(record)  # re-applying the latest records (already applied live) changes nothing
    assert h.gc.group("g") is group
    assert (
        group.state,
        group.generation,
        dict(group.members),
        h.gc.committed_offsets("s"),
    ) == snapshot


class ForeignKey(Struct, frozen=True, array_like=True):
    name: str


def test_records_of_other_owners_are_ignored():
    h = Harness()
    h.gc.apply(Record(ForeignKey("t"), 3))
    assert h.gc.groups() == []


def test_an_oversized_loaded_group_rebalances():
    h = Harness()
    h.stable_group("g", 3)
    r = replayed(h, GroupConfig(group_max_size=2))
    r.tick()
    assert r.gc.group_state("g") == "PreparingRebalance"


def test_a_later_metadata_record_replaces_the_earlier_one():
    h = Harness()
    a, b = h.stable_group("g", 2)
    h.join("g", a)
    h.join("g", b)
    h.sync("g", b, 2)
    h.sync("g", a, 2, assignments={a: b"A", b: b"B"})
    r = replayed(h)
    group = r.gc.group("g")
    assert group.generation == 2
    assert {m: x.assignment for m, x in group.members.items()} == {a: b"A", b: b"B"}
