"""Consumer groups beside classic ones: one namespace, one offset store, Kafka 4.x admin answers."""

from __future__ import annotations

from kcsim.protocol.errors import ErrorCode as E

from .consumer_harness import Client, Harness, JoinGroupRequest, config, settle
from .group_harness import subscription


def classic_join(h: Harness, group: str, member_id: str = "") -> object:
    cls = JoinGroupRequest
    return h.call(11, 9, cls(
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=member_id, group_instance_id=None, protocol_type="consumer",
        protocols=[cls.JoinGroupRequestProtocol(name="range", metadata=subscription("t"))],
        reason=None))


def test_list_groups_shows_consumer_groups_with_their_type_and_state() -> None:
    h = Harness()
    Client(h, "new").join()
    h.commit("old", {("t", 0): 1})
    assert h.list_groups() == [("new", "consumer", "Stable", "consumer"),
                               ("old", "", "Empty", "classic")]
    assert h.list_groups(types=["consumer"]) == [("new", "consumer", "Stable", "consumer")]
    assert h.list_groups(types=["classic"]) == [("old", "", "Empty", "classic")]
    assert h.list_groups(states=["stable"]) == [("new", "consumer", "Stable", "consumer")]


def test_group_states_on_the_wire() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    assert h.describe("g").groups[0].group_state == "Stable"
    b = Client(h, "g")
    b.join()
    assert h.describe("g").groups[0].group_state == "Reconciling"
    settle([a, b])
    b.leave()
    # b's leave bumps the group epoch; the target follows at the next heartbeat
    assert h.describe("g").groups[0].group_state == "Assigning"
    settle([a])
    a.leave()
    assert h.describe("g").groups[0].group_state == "Empty"


def test_describe_answers_per_group_kind_as_kafka_4() -> None:
    h = Harness()
    Client(h, "new").join()
    h.commit("old", {("t", 0): 1})
    described = {g.group_id: g for g in h.describe("new", "old", "none").groups}
    assert described["new"].error_code == 0
    assert described["new"].assignor_name == "uniform"
    assert described["new"].authorized_operations > 0
    assert (described["old"].error_code, described["old"].error_message) == (
        E.GROUP_ID_NOT_FOUND, "Group old is not a consumer group.")
    assert (described["none"].error_code, described["none"].error_message) == (
        E.GROUP_ID_NOT_FOUND, "Group none not found.")

    classic = h.describe_classic("new", version=6).groups[0]
    assert (classic.error_code, classic.group_state, classic.error_message) == (
        E.GROUP_ID_NOT_FOUND, "Dead", "Group new is not a classic group.")
    old_version = h.describe_classic("new", version=5).groups[0]
    assert (old_version.error_code, old_version.group_state) == (0, "Dead")


def test_member_commits_need_their_current_epoch() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    assert h.commit("g", {("t", 0): 5}, epoch=a.epoch, member_id=a.member_id) == {("t", 0): 0}
    stale = h.commit("g", {("t", 0): 6}, epoch=a.epoch - 1, member_id=a.member_id)
    assert stale == {("t", 0): E.STALE_MEMBER_EPOCH}
    assert h.commit("g", {("t", 0): 6}, epoch=1, member_id="stranger") == {
        ("t", 0): E.UNKNOWN_MEMBER_ID}
    old_api = h.commit("g", {("t", 0): 6}, epoch=a.epoch, member_id=a.member_id, version=8)
    assert old_api == {("t", 0): E.UNSUPPORTED_VERSION}
    assert h.commit("g", {("t", 0): 6}) == {("t", 0): E.UNKNOWN_MEMBER_ID}
    assert h.gc.committed_offsets("g")[("t", 0)].offset == 5


def test_offset_fetch_checks_the_member_epoch_from_v9() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    h.commit("g", {("t", 1): 9}, epoch=a.epoch, member_id=a.member_id)
    assert h.fetch("g") == (0, {("t", 1): 9})
    assert h.fetch("g", member_id=a.member_id, epoch=a.epoch) == (0, {("t", 1): 9})
    assert h.fetch("g", member_id=a.member_id, epoch=a.epoch + 1)[0] == E.STALE_MEMBER_EPOCH
    assert h.fetch("g", member_id="stranger", epoch=1)[0] == E.UNKNOWN_MEMBER_ID


def test_delete_groups_refuses_an_active_group_and_deletes_an_empty_one_with_its_offsets() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    h.commit("g", {("t", 0): 3}, epoch=a.epoch, member_id=a.member_id)
    assert h.delete_groups("g") == {"g": E.NON_EMPTY_GROUP}
    a.leave()
    assert h.delete_groups("g", "none") == {"g": 0, "none": E.GROUP_ID_NOT_FOUND}
    assert h.gc.consumer_group("g") is None
    assert h.gc.committed_offsets("g") == {}
    fresh = h.replayed()
    assert fresh.consumer_group("g") is None and fresh.committed_offsets("g") == {}


def test_offset_delete_refuses_subscribed_topics() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    h.commit("g", {("t", 0): 3, ("u", 0): 4}, epoch=a.epoch, member_id=a.member_id)
    from .consumer_harness import OffsetDeleteRequest as R
    response = h.call(47, 0, R(group_id="g", topics=[
        R.OffsetDeleteRequestTopic(name=t, partitions=[R.OffsetDeleteRequestPartition(
            partition_index=0)]) for t in ("t", "u")]))
    errors = {t.name: t.partitions[0].error_code for t in response.topics}
    assert errors == {"t": E.GROUP_SUBSCRIBED_TO_TOPIC, "u": 0}


def test_an_empty_classic_group_becomes_a_consumer_group_and_keeps_its_offsets() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 42})
    a = Client(h, "g")
    assert a.join().error_code == 0
    assert h.gc.consumer_group("g") is not None
    assert h.gc.group("g") is None
    assert h.fetch("g") == (0, {("t", 0): 42})
    restarted = h.replayed()
    assert restarted.consumer_group("g") is not None and restarted.group("g") is None


def test_a_running_classic_group_is_not_a_consumer_group() -> None:
    h = Harness()
    _joining_classic_group(h, "g")
    r = Client(h, "g").join()
    assert (r.error_code, r.error_message) == (E.GROUP_ID_NOT_FOUND,
                                               "Group g is not a consumer group.")
    assert h.gc.group("g") is not None and h.gc.consumer_group("g") is None


def _joining_classic_group(h: Harness, group: str) -> None:
    """A classic member in the middle of joining (its JoinGroup parks for the rebalance)."""
    from kcsim.coordinator import Caller

    from .consumer_harness import Token

    first = classic_join(h, group)
    cls = JoinGroupRequest
    outcome = h.gc.handle(11, 9, cls(
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=first.member_id, group_instance_id=None, protocol_type="consumer",
        protocols=[cls.JoinGroupRequestProtocol(name="range", metadata=subscription("t"))],
        reason=None), Caller(token=Token(0, 11, 9), client_id="c", client_host="h"),
        h.now)
    h.records.extend(outcome.records)
    assert h.gc.group_state(group) == "PreparingRebalance"


def test_classic_members_cannot_join_a_running_consumer_group() -> None:
    h = Harness()
    Client(h, "g").join()
    assert classic_join(h, "g").error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_an_empty_consumer_group_gives_way_to_a_classic_group() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    a.leave()
    r = classic_join(h, "g")
    assert r.error_code == E.MEMBER_ID_REQUIRED
    assert h.gc.consumer_group("g") is None
    assert h.gc.group("g") is not None
    assert h.replayed().consumer_group("g") is None


def test_offset_expiry_deletes_an_empty_consumer_group() -> None:
    h = Harness(config(offsets_retention_ms=60_000, offsets_retention_check_interval_ms=10_000))
    a = Client(h, "g")
    a.join()
    h.commit("g", {("t", 0): 3}, epoch=a.epoch, member_id=a.member_id)
    a.leave()
    h.advance(59_000)
    assert h.gc.consumer_group("g") is not None
    h.advance(12_000)
    assert h.gc.consumer_group("g") is None
    assert h.gc.committed_offsets("g") == {}
