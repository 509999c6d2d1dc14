"""OffsetCommit, OffsetFetch (KIP-88, KIP-709), OffsetDelete (KIP-496) and retention (KIP-211)."""

from __future__ import annotations

import uuid

from kcsim.coordinator import GroupConfig
from kcsim.coordinator.records import GroupMetadataKey, OffsetCommitKey
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, OffsetCommitRequest, OffsetFetchRequest, SyncGroupRequest


def errors(response) -> dict:
    out = {}
    for topic in response.topics:
        name = topic.name or topic.topic_id
        for p in topic.partitions:
            out[(name, p.partition_index)] = p.error_code
    return out


def fetched(response) -> dict:
    return {
        (t.name, p.partition_index): (p.committed_offset, p.metadata, p.error_code)
        for t in response.topics
        for p in t.partitions
    }


# -- OffsetCommit --------------------------------------------------------------


def test_simple_commit_creates_a_group_without_protocol_type():
    h = Harness()
    r = h.commit("g", {("t", 0): 10, ("t", 1): 11}, metadata="meta")
    assert errors(r) == {("t", 0): E.NONE, ("t", 1): E.NONE}
    assert h.gc.group_state("g") == "Empty"
    assert h.gc.group("g").protocol_type is None
    offsets = h.gc.committed_offsets("g")
    assert offsets[("t", 0)].offset == 10 and offsets[("t", 0)].metadata == "meta"
    assert offsets[("t", 0)].commit_timestamp == h.now and offsets[("t", 0)].expire_timestamp == -1
    assert [type(rec.key) for rec in h.records] == [OffsetCommitKey, OffsetCommitKey]
    assert h.list_groups().groups[0].protocol_type == ""


def test_null_metadata_is_stored_as_empty():
    h = Harness()
    h.commit("g", {("t", 0): 1}, metadata=None)
    assert h.gc.committed_offsets("g")[("t", 0)].metadata == ""


def test_simple_commit_is_refused_while_the_group_has_members():
    h = Harness()
    h.stable_group("g", 1)
    assert set(errors(h.commit("g", {("t", 0): 1})).values()) == {E.UNKNOWN_MEMBER_ID}
    assert h.gc.committed_offsets("g") == {}


def test_member_commits_are_checked_against_generation_and_member():
    h = Harness()
    a, b = h.stable_group("g", 2)
    assert errors(h.commit("g", {("t", 0): 5}, generation=1, member_id=a)) == {("t", 0): E.NONE}
    assert errors(h.commit("g", {("t", 0): 6}, generation=2, member_id=a)) == {
        ("t", 0): E.ILLEGAL_GENERATION
    }
    assert errors(h.commit("g", {("t", 0): 6}, generation=1, member_id="x")) == {
        ("t", 0): E.UNKNOWN_MEMBER_ID
    }
    assert errors(
        h.commit("g", {("t", 0): 6}, generation=1, member_id=a, instance="i", version=7)
    ) == {("t", 0): E.UNKNOWN_MEMBER_ID}
    # During PreparingRebalance the current generation may still commit.
    h.join("g", a)
    assert errors(h.commit("g", {("t", 0): 7}, generation=1, member_id=b)) == {("t", 0): E.NONE}
    h.join("g", b)
    assert h.gc.group_state("g") == "CompletingRebalance"
    assert errors(h.commit("g", {("t", 0): 8}, generation=2, member_id=b)) == {
        ("t", 0): E.REBALANCE_IN_PROGRESS
    }
    assert h.gc.committed_offsets("g")[("t", 0)].offset == 7


def test_static_member_commit_with_a_stale_id_is_fenced():
    h = Harness()
    a, _b = h.stable_group("g", 2, static=True)
    assert errors(
        h.commit("g", {("t", 0): 1}, generation=1, member_id="stale", instance="inst-0", version=8)
    ) == {("t", 0): E.FENCED_INSTANCE_ID}
    assert errors(
        h.commit("g", {("t", 0): 1}, generation=1, member_id=a, instance="inst-0", version=8)
    ) == {("t", 0): E.NONE}


def test_generation_commit_to_an_unknown_group_depends_on_version():
    h = Harness()
    assert set(
        errors(h.commit("g", {("t", 0): 1}, generation=3, member_id="m", version=9)).values()
    ) == {E.GROUP_ID_NOT_FOUND}
    assert set(
        errors(h.commit("g", {("t", 0): 1}, generation=3, member_id="m", version=8)).values()
    ) == {E.ILLEGAL_GENERATION}
    assert h.gc.groups() == []


def test_metadata_too_large_is_per_partition():
    h = Harness(GroupConfig(offset_metadata_max_bytes=4))
    r = h.commit("g", {("t", 0): 1}, metadata="12345")
    assert errors(r) == {("t", 0): E.OFFSET_METADATA_TOO_LARGE}
    r = h.commit("g", {("t", 1): 1}, metadata="1234")
    assert errors(r) == {("t", 1): E.NONE}
    assert list(h.gc.committed_offsets("g")) == [("t", 1)]


def test_unknown_topics_and_partitions_never_reach_the_group():
    h = Harness()
    r = h.commit("g", {("nope", 0): 1, ("t", 9): 1})
    assert errors(r) == {
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("t", 9): E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert h.gc.groups() == []
    r = h.commit("g", {("t", 9): 1, ("t", 0): 1, ("u", 2): 3})
    assert errors(r) == {("t", 9): E.UNKNOWN_TOPIC_OR_PARTITION, ("t", 0): E.NONE, ("u", 2): E.NONE}


def test_v10_commits_by_topic_id():
    h = Harness()
    r = h.commit("g", {("t", 0): 4, ("ghost", 0): 5}, version=10)
    t_id = h.topics.topic_id("t")
    ghost_id = uuid.uuid5(uuid.NAMESPACE_DNS, "ghost")
    assert errors(r) == {(t_id, 0): E.NONE, (ghost_id, 0): E.UNKNOWN_TOPIC_ID}
    assert h.gc.committed_offsets("g")[("t", 0)].offset == 4


def test_explicit_retention_in_v2_to_v4():
    h = Harness()
    h.commit("g", {("t", 0): 1}, version=2, retention=5_000)
    assert h.gc.committed_offsets("g")[("t", 0)].expire_timestamp == h.now + 5_000
    h.commit("g", {("t", 1): 1}, version=5, retention=5_000)
    assert h.gc.committed_offsets("g")[("t", 1)].expire_timestamp == -1


def test_old_versions_commit_as_simple_consumers():
    h = Harness()
    assert errors(h.commit("g", {("t", 0): 1}, version=0)) == {("t", 0): E.NONE}
    assert errors(h.commit("g", {("t", 1): 2}, version=1)) == {("t", 1): E.NONE}
    assert len(h.gc.committed_offsets("g")) == 2


# -- OffsetFetch ----------------------------------------------------------------


def test_fetch_named_partitions():
    h = Harness()
    h.commit("g", {("t", 0): 10}, metadata="m")
    r = h.fetch("g", {"t": [0, 1], "zzz": [0]}, version=1)
    assert fetched(r) == {("t", 0): (10, "m", 0), ("t", 1): (-1, "", 0), ("zzz", 0): (-1, "", 0)}


def test_fetch_all_partitions_with_null_topics():
    h = Harness()
    h.commit("g", {("t", 0): 10, ("u", 2): 3})
    r = h.fetch("g", None, version=2)
    assert r.error_code == E.NONE
    assert fetched(r) == {("t", 0): (10, "", 0), ("u", 2): (3, "", 0)}


def test_unknown_group_has_no_offsets_and_no_error():
    h = Harness()
    assert h.fetch("nope", None, version=7).topics == []
    assert fetched(h.fetch("nope", {"t": [0]}, version=7)) == {("t", 0): (-1, "", 0)}
    assert h.gc.groups() == []


def test_fetch_many_groups_at_once():
    h = Harness()
    h.commit("a", {("t", 0): 1})
    h.commit("b", {("u", 1): 2})
    r = h.fetch_many({"a": {"t": [0, 1]}, "b": None, "c": None, "d": {"t": [3]}}, version=8)
    by_group = {g.group_id: g for g in r.groups}
    assert list(by_group) == ["a", "b", "c", "d"]
    assert all(g.error_code == 0 for g in r.groups)
    assert fetched(by_group["a"]) == {("t", 0): (1, "", 0), ("t", 1): (-1, "", 0)}
    assert fetched(by_group["b"]) == {("u", 1): (2, "", 0)}
    assert by_group["c"].topics == []
    assert fetched(by_group["d"]) == {("t", 3): (-1, "", 0)}


def test_fetch_by_topic_id_in_v10():
    h = Harness()
    h.commit("a", {("t", 0): 1})
    r = h.fetch_many({"a": {"t": [0], "ghost": [0]}, "b": None}, version=10)
    a = r.groups[0]
    t_id = h.topics.topic_id("t")
    assert [
        (t.topic_id, [(p.partition_index, p.committed_offset, p.error_code) for p in t.partitions])
        for t in a.topics
    ] == [
        (t_id, [(0, 1, 0)]),
        (uuid.uuid5(uuid.NAMESPACE_DNS, "ghost"), [(0, -1, E.UNKNOWN_TOPIC_ID)]),
    ]
    everything = h.fetch_many({"a": None}, version=10).groups[0]
    assert [t.topic_id for t in everything.topics] == [t_id]


def test_fetch_returns_the_leader_epoch_and_accepts_require_stable():
    h = Harness()
    request = OffsetCommitRequest
    h.answer(
        8,
        9,
        request(
            group_id="g",
            generation_id_or_member_epoch=-1,
            member_id="",
            topics=[
                request.OffsetCommitRequestTopic(
                    name="t",
                    partitions=[
                        request.OffsetCommitRequestPartition(
                            partition_index=0,
                            committed_offset=3,
                            committed_leader_epoch=7,
                            committed_metadata="",
                        )
                    ],
                )
            ],
        ),
    )
    r = h.answer(9, 7, OffsetFetchRequest(group_id="g", topics=None, require_stable=True))
    assert r.topics[0].partitions[0].committed_leader_epoch == 7


# -- OffsetDelete ------------------------------------------------------------------


def test_offset_delete_errors():
    h = Harness()
    assert h.delete_offsets("", {"t": [0]}).error_code == E.INVALID_GROUP_ID
    r = h.delete_offsets("nope", {"t": [0]})
    assert r.error_code == E.GROUP_ID_NOT_FOUND and r.topics == []


def test_offset_delete_in_an_empty_group_writes_tombstones():
    h = Harness()
    h.commit("g", {("t", 0): 1, ("t", 1): 2})
    before = len(h.records)
    r = h.delete_offsets("g", {"t": [0, 5], "nope": [0], "u": [9]})
    assert r.error_code == E.NONE
    assert errors(r) == {
        ("t", 0): E.NONE,
        ("t", 5): E.NONE,
        ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
        ("u", 9): E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert [(rec.key.topic, rec.key.partition, rec.value) for rec in h.records[before:]] == [
        ("t", 0, None)
    ]
    assert list(h.gc.committed_offsets("g")) == [("t", 1)]


def test_offset_delete_refuses_subscribed_topics_of_an_active_consumer_group():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1, ("u", 0): 1}, generation=1, member_id=a)
    r = h.delete_offsets("g", {"t": [0], "u": [0]})
    assert errors(r) == {("t", 0): E.GROUP_SUBSCRIBED_TO_TOPIC, ("u", 0): E.NONE}
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]


def test_offset_delete_refuses_non_consumer_groups_with_members():
    h = Harness()
    token = h.join("g", version=3, protocol_type="connect", protocols=[("default", b"x")])
    h.advance(100)
    assert h.response(token).error_code == 0
    assert h.delete_offsets("g", {"t": [0]}).error_code == E.NON_EMPTY_GROUP


# -- retention (KIP-211) -------------------------------------------------------------

DAY = 24 * 3600 * 1000


def _retention_harness() -> Harness:
    return Harness(
        GroupConfig(
            initial_rebalance_delay_ms=100,
            offsets_retention_ms=DAY,
            offsets_retention_check_interval_ms=60_000,
        )
    )


def test_simple_group_offsets_expire_from_their_commit_time():
    h = _retention_harness()
    h.commit("g", {("t", 0): 1})
    h.advance(DAY // 2)
    h.commit("g", {("t", 1): 1})
    h.advance(DAY // 2 + 60_000)
    assert list(h.gc.committed_offsets("g")) == [("t", 1)]
    before = len(h.records)
    h.advance(DAY // 2)
    assert h.gc.committed_offsets("g") == {}
    assert h.gc.groups() == []
    assert [(type(r.key), r.value) for r in h.records[before:]] == [
        (OffsetCommitKey, None),
        (GroupMetadataKey, None),
    ]


def test_consumer_group_offsets_expire_from_when_the_group_became_empty():
    h = _retention_harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)
    for _ in range(int(1.5 * DAY) // 5_000):  # stays Stable well beyond the retention
        h.advance(5_000)
        h.heartbeat("g", a, 1)
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]  # subscribed: never expires while active
    h.leave("g", (a, None))
    empty_since = h.now
    assert h.gc.group_state("g") == "Empty"
    h.advance(DAY - 120_000)
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]
    h.advance(120_000 + 60_000)  # the first check after a day of being Empty
    assert h.now - empty_since >= DAY
    assert h.gc.committed_offsets("g") == {}
    assert h.gc.groups() == []


def test_stable_consumer_group_expires_only_unsubscribed_topics():
    h = _retention_harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1, ("u", 0): 1}, generation=1, member_id=a)
    for _ in range((DAY + 120_000) // 5_000):
        h.advance(5_000)
        h.heartbeat("g", a, 1)
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]
    assert h.gc.group_state("g") == "Stable"


def test_non_consumer_groups_keep_offsets_while_active():
    h = _retention_harness()
    token = h.join(
        "g", version=3, protocol_type="connect", protocols=[("default", b"x")], session=30_000
    )
    h.advance(100)
    r = h.response(token)
    h.answer(
        14,
        3,
        SyncGroupRequest(group_id="g", generation_id=1, member_id=r.member_id, assignments=[]),
    )
    h.commit("g", {("t", 0): 1}, generation=1, member_id=r.member_id)
    for _ in range((DAY + 120_000) // 20_000):
        h.advance(20_000)
        h.heartbeat("g", r.member_id, 1)
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]


def test_explicit_expire_timestamp_wins():
    h = _retention_harness()
    h.commit("g", {("t", 0): 1}, version=3, retention=90_000)
    h.advance(60_000)
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]
    h.advance(60_000)
    assert h.gc.committed_offsets("g") == {}


def test_empty_groups_without_offsets_are_removed_at_the_next_check():
    h = _retention_harness()
    h.response(h.join("g"))  # MEMBER_ID_REQUIRED leaves an Empty group behind
    assert h.gc.groups() == ["g"]
    h.advance(60_000)
    assert h.gc.groups() == []


def test_the_check_runs_on_its_interval():
    h = _retention_harness()
    start = h.now
    h.tick()  # the first check is due one interval after the coordinator starts
    h.advance(30_000)
    h.commit("g", {("t", 0): 1})
    h.advance(DAY)  # expired now, but the next check is at start + DAY + 60 s
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]
    h.now = start + DAY + 59_999
    h.tick()
    assert list(h.gc.committed_offsets("g")) == [("t", 0)]
    h.advance(1)
    assert h.gc.committed_offsets("g") == {}
