"""KIP-1071 streams groups in the pure core: joins, the topology and its internal topics,
tasks split and reconciled, fencing, static members, and what the other group APIs say
about a streams group."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator.streams.internal_topics import Status
from kcsim.coordinator.streams.rules import (
    CARRIES,
    ON_TOPOLOGY,
    Field,
    Kind,
    OnTopology,
    TopologyCase,
    kind_of,
)
from kcsim.protocol.errors import ErrorCode as E
from tests.coordinator.consumer_harness import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)
from tests.coordinator.state_dump import dump
from tests.coordinator.streams_harness import (
    CHANGELOG,
    REPARTITION,
    StreamsHarness,
    T,
    streams_config,
    tasks_of,
    word_count,
)

ALL_TASKS = {(s, p) for s in ("0", "1") for p in range(4)}


def statuses(response: Any) -> dict[int, str]:
    return {s.status_code: s.status_detail for s in response.status or ()}


def ready(h: StreamsHarness, member: str = "m1") -> Any:
    """A member joined, its internal topics created, and its tasks given."""
    joined = h.join(member)
    return h.beat(member, joined.member_epoch, set())


def settle(h: StreamsHarness, members: dict[str, int], rounds: int = 6) -> dict[str, set]:
    """Heartbeat every member, reporting what it was given, until nothing changes."""
    group = h.gc.streams_group("app")
    assert group is not None
    owned: dict[str, set] = {m: held(group.members[m].assigned.active) for m in members}
    for _ in range(rounds):
        for m in members:
            r = h.beat(m, members[m], owned[m])
            assert r.error_code == 0, r
            members[m] = r.member_epoch
            if r.active_tasks is not None:
                owned[m] = tasks_of(r.active_tasks)
    return owned


def held(tasks: dict[str, frozenset[int]]) -> set[tuple[str, int]]:
    return {(s, p) for s, ps in tasks.items() for p in ps}


# -- the topology and its internal topics --------------------------------------------


def test_the_first_member_stores_the_topology_and_waits_for_internal_topics() -> None:
    h = StreamsHarness()
    r = h.join("m1")
    assert r.error_code == 0 and r.member_epoch == 1
    assert statuses(r) == {Status.MISSING_INTERNAL_TOPICS:
                           f"Internal topics are missing: {REPARTITION}, {CHANGELOG}"}
    assert tasks_of(r.active_tasks) == set()
    asked = {t.name: t for t in h.asked}
    # The repartition topic takes its writer's source count, the changelog its task count.
    assert asked[REPARTITION].partitions == 4 and asked[CHANGELOG].partitions == 4
    assert asked[CHANGELOG].configs == {"cleanup.policy": "compact",
                                        "message.timestamp.type": "CreateTime"}
    assert h.describe().group_state == "NotReady"
    r = h.beat("m1", r.member_epoch, set())
    assert r.status == [] and tasks_of(r.active_tasks) == ALL_TASKS
    assert h.describe().group_state == "Stable"


def test_a_missing_source_topic_is_a_status_and_no_topic_is_created() -> None:
    h = StreamsHarness(topics={})
    r = h.join("m1")
    assert statuses(r) == {Status.MISSING_SOURCE_TOPICS: "Source topics words are missing."}
    assert h.asked == []
    h.topics.create("words", 2)
    r = h.beat("m1", r.member_epoch, set())
    assert Status.MISSING_INTERNAL_TOPICS in statuses(r)
    assert {t.name: t.partitions for t in h.asked} == {REPARTITION: 2, CHANGELOG: 2}


def test_copartitioned_repartition_topics_take_the_external_topics_count() -> None:
    h = StreamsHarness(topics={"left": 3, "words": 5})
    join = T.Topology(epoch=1, subtopologies=[
        T.Subtopology(subtopology_id="0", source_topics=["words"],
                      repartition_sink_topics=["app-rekey"]),
        T.Subtopology(subtopology_id="1", source_topics=["left"],
                      repartition_source_topics=[T.TopicInfo(name="app-rekey")],
                      copartition_groups=[T.CopartitionGroup(source_topics=[0],
                                                             repartition_source_topics=[0])]),
    ])
    h.join("m1", join)
    assert {t.name: t.partitions for t in h.asked} == {"app-rekey": 3}


def test_copartitioned_source_topics_of_different_sizes_are_incorrectly_partitioned() -> None:
    h = StreamsHarness(topics={"left": 3, "right": 4})
    join = T.Topology(epoch=1, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["left", "right"],
        copartition_groups=[T.CopartitionGroup(source_topics=[0, 1])])])
    r = h.join("m1", join)
    assert r.error_code == 0
    assert statuses(r) == {Status.INCORRECTLY_PARTITIONED_TOPICS:
                           "Topics not co-partitioned: [{left=3, right=4}]"}
    assert h.describe().group_state == "NotReady"


def _loop(*subs: Any) -> Any:
    return T.Topology(epoch=1, subtopologies=list(subs))


def _copartitioned(*indexes: int) -> Any:
    return T.CopartitionGroup(repartition_source_topics=list(indexes))


def test_a_loop_of_repartition_topics_without_a_count_is_an_invalid_topology() -> None:
    """Kafka 4.4's answer (from the oracle broker): no topic of the loop can be sized."""
    h = StreamsHarness()
    r = h.join("m1", _loop(
        T.Subtopology(subtopology_id="0", repartition_source_topics=[T.TopicInfo(name="pa")],
                      repartition_sink_topics=["pb"]),
        T.Subtopology(subtopology_id="1", repartition_source_topics=[T.TopicInfo(name="pb")],
                      repartition_sink_topics=["pa"])))
    assert (r.error_code, r.error_message) == (
        E.STREAMS_INVALID_TOPOLOGY, "Failed to compute number of partitions for all "
        "repartition topics. There may be loops in the topology that cannot be resolved.")
    assert h.records == [] and h.asked == []


def test_copartitioned_repartition_topics_of_different_sizes_in_a_loop() -> None:
    """Words in, rekeyed to two repartition topics of fixed, different sizes that one
    subtopology reads copartitioned and writes back to the first: Kafka 4.4's status."""
    h = StreamsHarness()
    r = h.join("m1", _loop(
        T.Subtopology(subtopology_id="0", source_topics=["words"],
                      repartition_source_topics=[T.TopicInfo(name="pc")],
                      repartition_sink_topics=["pa2", "pb2"]),
        T.Subtopology(subtopology_id="1", repartition_source_topics=[
            T.TopicInfo(name="pa2", partitions=2), T.TopicInfo(name="pb2", partitions=3)],
            repartition_sink_topics=["pc"], copartition_groups=[_copartitioned(0, 1)])))
    assert r.error_code == 0
    assert statuses(r) == {Status.INCORRECTLY_PARTITIONED_TOPICS: "Following topics do not "
                           "have the same number of partitions: [{pa2=2, pb2=3}]"}
    assert h.asked == [] and h.describe().group_state == "NotReady"


def test_a_repartition_topic_copartitioned_with_a_source_of_another_size() -> None:
    h = StreamsHarness(topics={"pw": 4, "pl": 3})
    r = h.join("m1", _loop(
        T.Subtopology(subtopology_id="0", source_topics=["pw"],
                      repartition_sink_topics=["px"]),
        T.Subtopology(subtopology_id="1", source_topics=["pl"],
                      repartition_source_topics=[T.TopicInfo(name="px", partitions=4)],
                      copartition_groups=[T.CopartitionGroup(source_topics=[0],
                                                             repartition_source_topics=[0])])))
    assert statuses(r) == {Status.INCORRECTLY_PARTITIONED_TOPICS: "Number of partitions [4] "
                           "of repartition topic [px] doesn't match number of partitions "
                           "[3] of the source topic."}


def test_a_loop_copartitioned_with_sources_of_different_sizes_takes_each_sources_count() -> None:
    """Each repartition topic of the loop is copartitioned with its own subtopology's
    source (3 and 4 partitions): Kafka 4.4 sizes each after that source and asks for both."""
    h = StreamsHarness(topics={"pl": 3, "pr": 4})
    r = h.join("m1", _loop(
        T.Subtopology(subtopology_id="0", source_topics=["pl"],
                      repartition_source_topics=[T.TopicInfo(name="pd")],
                      repartition_sink_topics=["pe"],
                      copartition_groups=[T.CopartitionGroup(source_topics=[0],
                                                             repartition_source_topics=[0])]),
        T.Subtopology(subtopology_id="1", source_topics=["pr"],
                      repartition_source_topics=[T.TopicInfo(name="pe")],
                      repartition_sink_topics=["pd"],
                      copartition_groups=[T.CopartitionGroup(source_topics=[0],
                                                             repartition_source_topics=[0])])))
    assert statuses(r) == {Status.MISSING_INTERNAL_TOPICS: "Internal topics are missing: "
                           "pd, pe"}
    assert {t.name: t.partitions for t in h.asked} == {"pd": 3, "pe": 4}


@pytest.mark.parametrize(("topology", "error", "message"), [
    (T.Topology(epoch=1, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["words"],
        state_changelog_topics=[T.TopicInfo(name="c", partitions=3)])]),
     E.STREAMS_INVALID_TOPOLOGY,
     "Changelog topic c must have an undefined partition count, but it is set to 3."),
    (T.Topology(epoch=1, subtopologies=[T.Subtopology(subtopology_id="0",
                                                      source_topic_regex=["w.*"])]),
     E.INVALID_REQUEST, "Regular expressions for source topics are not supported yet."),
    (T.Topology(epoch=1, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["words"],
        copartition_groups=[T.CopartitionGroup(source_topics=[3])])]),
     E.STREAMS_INVALID_TOPOLOGY,
     "Copartition group of subtopology 0 names a topic the subtopology does not read."),
    (T.Topology(epoch=1, subtopologies=[T.Subtopology(
        subtopology_id="0", repartition_source_topics=[T.TopicInfo(name="nobody-writes")])]),
     E.STREAMS_INVALID_TOPOLOGY,
     "Failed to compute number of partitions for all repartition topics, because a "
     "repartition source topic is never used as a sink topic."),
    (T.Topology(epoch=1, subtopologies=[T.Subtopology(subtopology_id="0")]),
     E.STREAMS_INVALID_TOPOLOGY, "No source topics found for subtopology 0"),
])
def test_a_bad_topology_gets_kafkas_error_and_writes_nothing(topology: Any, error: int,
                                                            message: str) -> None:
    h = StreamsHarness()
    h.advance(0)  # the coordinator has started: only the request could change it now
    before = dump(h.gc)
    r = h.join("m1", topology)
    assert (r.error_code, r.error_message) == (error, message)
    assert h.records == [] and dump(h.gc) == before


# -- the rules tables ----------------------------------------------------------------


def _breaking(field: Field, kind: Kind) -> dict[str, Any]:
    """Request fields that meet every condition of `kind` but `field`."""
    epoch = {Kind.JOIN: 0, Kind.HEARTBEAT: 1, Kind.LEAVE: -1, Kind.LEAVE_STATIC: -2}[kind]
    fields: dict[str, Any] = {"group_id": "app", "member_id": "m1", "member_epoch": epoch,
                                  "rebalance_timeout_ms": 30000 if kind is Kind.JOIN else -1,
                                  "topology": word_count() if kind is Kind.JOIN else None,
                                  "instance_id": "i" if kind is Kind.LEAVE_STATIC else None}
    if kind is Kind.JOIN:
        fields.update(active_tasks=[], standby_tasks=[], warmup_tasks=[])
    broken = {Field.REBALANCE_TIMEOUT: {"rebalance_timeout_ms": -1},
              Field.NO_ACTIVE_TASKS: {"active_tasks": [T.TaskIds(subtopology_id="0",
                                                                 partitions=[0])],
                                      "standby_tasks": [], "warmup_tasks": []},
              Field.NO_STANDBY_TASKS: {"standby_tasks": [T.TaskIds(subtopology_id="0",
                                                                   partitions=[0])],
                                       "active_tasks": [], "warmup_tasks": []},
              Field.NO_WARMUP_TASKS: {"warmup_tasks": [T.TaskIds(subtopology_id="0",
                                                                 partitions=[0])],
                                      "active_tasks": [], "standby_tasks": []},
              Field.TOPOLOGY: {"topology": None},
              Field.INSTANCE_ID: {"instance_id": None},
              Field.NO_TOPOLOGY: {"topology": word_count()}}[field]
    return {**fields, **broken}


@pytest.mark.parametrize(("kind", "field"), [(k, f) for k, fs in CARRIES.items() for f in fs],
                         ids=lambda v: v.name)
def test_each_condition_of_the_heartbeat_table_is_refused_with_kafkas_message(
        kind: Kind, field: Field) -> None:
    h = StreamsHarness()
    r = h.call(88, 1, T(**_breaking(field, kind)))
    assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, field.value)


def test_every_member_epoch_falls_in_one_kind() -> None:
    null = StreamsHarness().call(88, 1, T(group_id="app", member_id="m", member_epoch=0,
                                          rebalance_timeout_ms=1, topology=word_count()))
    assert (null.error_code, null.error_message) == (
        E.INVALID_REQUEST, "ActiveTasks must be empty when (re-)joining.")
    assert [kind_of(e) for e in (-3, -2, -1, 0, 1, 7)] == [
        Kind.INVALID, Kind.LEAVE_STATIC, Kind.LEAVE, Kind.JOIN, Kind.HEARTBEAT, Kind.HEARTBEAT]
    r = StreamsHarness().call(88, 1, T(group_id="app", member_id="m", member_epoch=-3))
    assert (r.error_code, r.error_message) == (
        E.INVALID_REQUEST, "MemberEpoch is -3, but must be greater than or equal to -2.")


def _topology_case(case: TopologyCase) -> tuple[StreamsHarness, Any]:
    """A group in which a second member joins with a topology of the given case."""
    h = StreamsHarness()
    if case is TopologyCase.FIRST:
        return h, h.join("m2")
    ready(h)
    sent = {TopologyCase.OLDER: word_count(epoch=0), TopologyCase.SAME: word_count(),
            TopologyCase.OTHER: word_count(repartition_partitions=8)}[case]
    return h, h.join("m2", sent)


@pytest.mark.parametrize("case", list(TopologyCase), ids=lambda c: c.name)
def test_each_row_of_the_topology_table_does_what_it_says(case: TopologyCase) -> None:
    h, r = _topology_case(case)
    does = ON_TOPOLOGY[case]
    if does is OnTopology.REFUSE:
        assert (r.error_code, r.error_message) == (E.INVALID_REQUEST,
                                                   "Topology updates are not supported yet.")
        return
    assert r.error_code == 0
    stale = statuses(r).get(Status.STALE_TOPOLOGY)
    if does is OnTopology.STALE:
        assert stale == "The member's topology epoch 0 is behind the group's topology epoch 1."
    else:
        assert stale is None
    assert h.describe().topology.epoch == 1


# -- tasks between members ----------------------------------------------------------------


def test_a_second_member_gets_half_the_tasks_only_once_the_first_revoked_them() -> None:
    h = StreamsHarness()
    first = ready(h)
    epoch1 = first.member_epoch
    second = h.join("m2")
    assert tasks_of(second.active_tasks) == set()  # all still held by m1
    r = h.beat("m1", epoch1, ALL_TASKS)
    kept = tasks_of(r.active_tasks)
    assert len(kept) == 4 and r.member_epoch == epoch1  # revoking: same epoch
    r2 = h.beat("m2", second.member_epoch, set())
    assert tasks_of(r2.active_tasks) in (None, set())  # m1 has not released them yet
    r = h.beat("m1", epoch1, kept)
    assert r.member_epoch > epoch1
    r2 = h.beat("m2", second.member_epoch, set())
    assert tasks_of(r2.active_tasks) == ALL_TASKS - kept
    owned = settle(h, {"m1": r.member_epoch, "m2": r2.member_epoch})
    assert owned["m1"] | owned["m2"] == ALL_TASKS and not owned["m1"] & owned["m2"]
    assert h.describe().group_state == "Stable"


def test_a_member_with_a_wrong_epoch_is_fenced() -> None:
    h = StreamsHarness()
    r = ready(h)
    ahead = h.beat("m1", r.member_epoch + 1, ALL_TASKS)
    assert (ahead.error_code, ahead.error_message) == (
        E.FENCED_MEMBER_EPOCH, f"The streams group member has a greater member epoch "
        f"({r.member_epoch + 1}) than the one known by the group coordinator "
        f"({r.member_epoch}). The member must abandon all its partitions and rejoin.")
    # The previous epoch passes only with tasks the member was given (a lost answer).
    assert h.beat("m1", r.member_epoch - 1, ALL_TASKS).error_code == E.NONE
    stale = h.beat("m1", r.member_epoch - 1, ALL_TASKS | {("0", 9)})
    assert (stale.error_code, stale.error_message) == (
        E.FENCED_MEMBER_EPOCH, f"The streams group member has a smaller member epoch "
        f"({r.member_epoch - 1}) than the one known by the group coordinator "
        f"({r.member_epoch}). The member must abandon all its partitions and rejoin.")
    unknown = h.beat("nobody", 1, set())
    assert (unknown.error_code, unknown.error_message) == (
        E.UNKNOWN_MEMBER_ID, "Member nobody is not a member of group app.")


def test_a_silent_member_is_fenced_when_its_session_expires_and_its_tasks_move() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_session_timeout_ms=10_000))
    ready(h)
    r2 = h.join("m2")
    members = {"m1": 2, "m2": r2.member_epoch}
    settle(h, members)
    for _ in range(3):
        h.advance(4_000)
        r2 = h.beat("m2", members["m2"], None)
        members["m2"] = r2.member_epoch
    assert [m.member_id for m in h.describe().members] == ["m2"]
    owned = settle(h, {"m2": members["m2"]})
    assert owned["m2"] == ALL_TASKS


def test_a_static_member_back_under_a_new_id_gets_its_tasks_on_its_next_heartbeat() -> None:
    """As Kafka 4.4: the rejoin is answered at the group's epoch with no tasks (the group
    stays Stable, the new id's target holds the old tasks); the next heartbeat bumps the
    group epoch and hands them back."""
    h = StreamsHarness()
    joined = h.join("m1", instance_id="app-1")
    r = h.beat("m1", joined.member_epoch, set())
    h.join("m2", instance_id="app-2")
    owned = settle(h, {"m1": r.member_epoch, "m2": 3})
    epoch = h.describe().group_epoch
    left = h.call(88, 1, T(group_id="app", member_id="m1", member_epoch=-2, instance_id="app-1"))
    assert (left.error_code, left.member_epoch) == (0, -2)
    back = h.join("m1-again", instance_id="app-1")
    assert (back.error_code, back.member_epoch, back.active_tasks) == (0, epoch, [])
    described = h.describe()
    assert (described.group_epoch, described.group_state) == (epoch, "Stable")
    again = next(m for m in described.members if m.member_id == "m1-again")
    assert tasks_of(again.assignment.active_tasks) == set()
    assert tasks_of(again.target_assignment.active_tasks) == owned["m1"]
    nxt = h.beat("m1-again", back.member_epoch, set(), instance_id="app-1")
    assert (nxt.error_code, nxt.member_epoch) == (0, epoch + 1)
    assert tasks_of(nxt.active_tasks) == owned["m1"]
    assert h.describe().group_epoch == epoch + 1
    quiet = h.beat("m1-again", nxt.member_epoch, owned["m1"], instance_id="app-1")
    assert (quiet.member_epoch, quiet.active_tasks) == (epoch + 1, None)
    taken = h.join("m3", instance_id="app-2")
    assert taken.error_code == E.UNRELEASED_INSTANCE_ID


def test_leaving_removes_the_member_and_its_tasks_go_to_the_others() -> None:
    h = StreamsHarness()
    r = ready(h)
    r2 = h.join("m2")
    settle(h, {"m1": r.member_epoch, "m2": r2.member_epoch})
    left = h.call(88, 1, T(group_id="app", member_id="m1", member_epoch=-1))
    assert (left.error_code, left.member_epoch) == (0, -1)
    owned = settle(h, {"m2": h.describe().members[0].member_epoch})
    assert owned["m2"] == ALL_TASKS


def test_the_shutdown_flag_reaches_every_member() -> None:
    h = StreamsHarness()
    r = ready(h)
    r2 = h.join("m2")
    h.beat("m2", r2.member_epoch, None, shutdown_application=True)
    other = h.beat("m1", r.member_epoch, None)
    assert statuses(other)[Status.SHUTDOWN_APPLICATION] == (
        "Streams group member m2 encountered a fatal error and requested a shutdown for the "
        "entire application.")


# -- the other group APIs ------------------------------------------------------------


def test_list_describe_and_delete_answer_as_kafka_does_for_a_streams_group() -> None:
    h = StreamsHarness()
    r = ready(h)
    listed = h.call(16, 5, ListGroupsRequest(types_filter=["streams"])).groups
    assert [(g.group_id, g.group_type, g.group_state) for g in listed] == [
        ("app", "streams", "Stable")]
    assert h.call(16, 5, ListGroupsRequest(types_filter=["consumer"])).groups == []
    described = h.call(15, 6, DescribeGroupsRequest(groups=["app"])).groups[0]
    assert (described.error_code, described.error_message, described.group_state) == (
        E.GROUP_ID_NOT_FOUND, "Group app is not a classic group.", "Dead")
    consumer = h.call(69, 1, request_69(["app"])).groups[0]
    assert (consumer.error_code, consumer.error_message) == (
        E.GROUP_ID_NOT_FOUND, "Group app is not a consumer group.")
    deleted = h.call(42, 2, DeleteGroupsRequest(groups_names=["app"])).results[0]
    assert deleted.error_code == E.NON_EMPTY_GROUP
    h.call(88, 1, T(group_id="app", member_id="m1", member_epoch=-1))
    assert r.error_code == 0
    deleted = h.call(42, 2, DeleteGroupsRequest(groups_names=["app"])).results[0]
    assert deleted.error_code == E.NONE
    assert h.describe().error_code == E.GROUP_ID_NOT_FOUND
    assert h.gc.streams_group("app") is None and dump(h.replayed())["streams"] == {}


def request_69(groups: list[str]) -> Any:
    from kcsim.protocol.codecs import request_class
    return request_class(69)(group_ids=groups)


def test_describe_names_another_kind_of_group_and_unknown_ids() -> None:
    h = StreamsHarness()
    h.call(8, 9, OffsetCommitRequest(group_id="simple", generation_id_or_member_epoch=-1,
                                     topics=[commit_topic("words", 0, 5)]))
    assert h.describe("simple").error_message == "Group simple is not a streams group."
    assert h.describe("nothing").error_message == "Group nothing not found."


def commit_topic(name: str, partition: int, offset: int) -> Any:
    return OffsetCommitRequest.OffsetCommitRequestTopic(
        name=name, partitions=[OffsetCommitRequest.OffsetCommitRequestPartition(
            partition_index=partition, committed_offset=offset)])


@pytest.mark.parametrize(("member", "epoch", "error"), [
    ("m1", None, E.NONE), ("m1", -5, E.STALE_MEMBER_EPOCH), ("nobody", None, E.UNKNOWN_MEMBER_ID),
    ("", -1, E.UNKNOWN_MEMBER_ID)])
def test_offset_commits_of_a_streams_group_are_checked_against_member_epochs(
        member: str, epoch: int | None, error: int) -> None:
    h = StreamsHarness()
    r = ready(h)
    given = r.member_epoch if epoch is None else epoch
    answer = h.call(8, 9, OffsetCommitRequest(
        group_id="app", member_id=member, generation_id_or_member_epoch=given,
        topics=[commit_topic("words", 0, 42)]))
    assert answer.topics[0].partitions[0].error_code == error
    fetch_group = OffsetFetchRequest.OffsetFetchRequestGroup
    fetched = h.call(9, 9, OffsetFetchRequest(groups=[fetch_group(
        group_id="app", member_id=member or None, member_epoch=given, topics=None)]))
    # A fetch without a member (an admin's) is always answered.
    assert fetched.groups[0].error_code == (error if member else E.NONE)
    assert "app" in dump(h.gc)["streams"] and "app" not in dump(h.gc)["classic"]


def test_replaying_the_log_rebuilds_the_group() -> None:
    h = StreamsHarness()
    r = ready(h)
    r2 = h.join("m2", instance_id="i2")
    settle(h, {"m1": r.member_epoch, "m2": r2.member_epoch})
    live, replayed = dump(h.gc)["streams"], dump(h.replayed())["streams"]
    for state in (live, replayed):
        state["app"].pop("shutdown_requested_by")  # soft, as in Kafka
    assert replayed == live


def test_a_member_commits_with_offset_commit_v9_or_later() -> None:
    h = StreamsHarness()
    r = ready(h)
    answer = h.call(8, 8, OffsetCommitRequest(
        group_id="app", member_id="m1", generation_id_or_member_epoch=r.member_epoch,
        topics=[commit_topic("words", 0, 42)]))
    assert answer.topics[0].partitions[0].error_code == E.UNSUPPORTED_VERSION


def test_transactional_commits_are_checked_against_member_epochs() -> None:
    from kcsim.protocol.codecs import request_class
    h = StreamsHarness()
    r = ready(h)
    Txn = request_class(28)

    def txn_commit(member: str, epoch: int) -> int:
        answer = h.call(28, 4, Txn(
            transactional_id="tx", group_id="app", producer_id=1, producer_epoch=0,
            member_id=member, generation_id_or_member_epoch=epoch, topics=[
                Txn.TxnOffsetCommitRequestTopic(name="words", partitions=[
                    Txn.TxnOffsetCommitRequestPartition(partition_index=0,
                                                        committed_offset=1)])]))
        return int(answer.topics[0].partitions[0].error_code)

    assert txn_commit("m1", r.member_epoch - 1) == E.STALE_MEMBER_EPOCH
    assert txn_commit("stranger", r.member_epoch) == E.UNKNOWN_MEMBER_ID


def test_describe_shows_the_internal_topics_partition_counts_once_they_exist() -> None:
    h = StreamsHarness(create=False)
    joined = h.join("m1")
    assert [t.partitions for s in h.describe().topology.subtopologies
            for t in s.repartition_source_topics] == [0]
    for topic in h.asked:
        h.topics.create(topic.name, topic.partitions)
    h.beat("m1", joined.member_epoch, set())
    subtopologies = h.describe().topology.subtopologies
    assert [(t.name, t.partitions) for s in subtopologies
            for t in s.repartition_source_topics + s.state_changelog_topics] == [
        (REPARTITION, 4), (CHANGELOG, 4)]


def test_a_member_that_keeps_tasks_past_its_rebalance_timeout_is_fenced() -> None:
    h = StreamsHarness()
    r = ready(h, "m1")
    second = h.join("m2")
    revoking = h.beat("m1", r.member_epoch, ALL_TASKS)
    assert len(tasks_of(revoking.active_tasks)) == 4  # asked to give up the other four
    assert h.gc.streams_group("app").members["m1"].state.name == "UNREVOKED_TASKS"
    h.advance(29_000)
    h.beat("m1", r.member_epoch, ALL_TASKS)  # still holding them: its session goes on
    h.beat("m2", second.member_epoch, set())
    h.advance(2_000)  # the 30 s m1 had to revoke in have passed
    assert [m.member_id for m in h.describe().members] == ["m2"]
    assert h.beat("m1", r.member_epoch, ALL_TASKS).error_code == E.UNKNOWN_MEMBER_ID


def test_reported_task_offsets_are_described_and_a_duplicate_is_refused() -> None:
    h = StreamsHarness()
    r = ready(h)
    offset = T.TaskOffset
    h.beat("m1", r.member_epoch, None, task_offsets=[offset(subtopology_id="1", partition=2,
                                                            offset=40)],
           task_end_offsets=[offset(subtopology_id="1", partition=2, offset=50)])
    h.beat("m1", r.member_epoch, None, task_end_offsets=[
        offset(subtopology_id="1", partition=2, offset=55)])  # offsets: unchanged
    (member,) = h.describe().members
    assert [(t.subtopology_id, t.partition, t.offset) for t in member.task_offsets] == [
        ("1", 2, 40)]
    assert [t.offset for t in member.task_end_offsets] == [55]
    twice = h.beat("m1", r.member_epoch, None, task_offsets=[
        offset(subtopology_id="1", partition=2, offset=1)] * 2)
    assert (twice.error_code, twice.error_message) == (
        E.INVALID_REQUEST, "Task offsets contain a duplicate entry for subtopology 1 and "
        "partition 2.")


@pytest.mark.parametrize(("owned", "message"), [
    ({("9", 0)}, "Subtopology 9 does not exist in the topology."),
    ({("0", 4)}, "Task 4 for subtopology 0 is invalid. Number of tasks for this subtopology: 4"),
])
def test_a_task_the_topology_does_not_have_is_refused(owned: set, message: str) -> None:
    h = StreamsHarness()
    r = ready(h)
    wrong = h.beat("m1", r.member_epoch, owned)
    assert (wrong.error_code, wrong.error_message) == (E.INVALID_REQUEST, message)


def test_a_new_groups_first_assignment_waits_for_the_initial_rebalance_delay() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_initial_rebalance_delay_ms=3000))
    first = h.join("m1")
    assert statuses(first)[Status.ASSIGNMENT_DELAYED] == (
        "Assignment delayed due to the configured initial rebalance delay.")
    assert (first.member_epoch, tasks_of(first.active_tasks)) == (1, set())
    h.advance(1000)
    second = h.join("m2")
    assert Status.ASSIGNMENT_DELAYED in statuses(second)
    assert h.describe().group_state == "Assigning"
    h.advance(2000)  # the delay is over: one target for both members
    owned = settle(h, {"m1": first.member_epoch, "m2": second.member_epoch})
    assert owned["m1"] | owned["m2"] == ALL_TASKS and len(owned["m1"]) == 4
    assert h.describe().group_state == "Stable"


def test_a_new_target_waits_for_the_assignment_interval() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_assignment_interval_ms=1000))
    r = ready(h)
    h.advance(100)
    second = h.join("m2")  # within the interval of the first target: nothing for it yet
    assert statuses(second)[Status.ASSIGNMENT_DELAYED] == (
        "Assignment delayed due to the configured assignment interval.")
    assert tasks_of(second.active_tasks) == set()
    assert h.describe().group_state == "Assigning"
    h.advance(1000)
    owned = settle(h, {"m1": r.member_epoch, "m2": second.member_epoch})
    assert owned["m1"] | owned["m2"] == ALL_TASKS and len(owned["m2"]) == 4
