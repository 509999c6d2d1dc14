"""KIP-932 share groups, kcsim against Kafka: ShareGroupHeartbeat, ShareGroupDescribe,
ShareFetch and ShareAcknowledge at every version both serve.

Members speak raw frames (as tests/server/test_share_wire.py); their ids are derived
from the scenario's prefix, so both brokers' simple assignors see the same members.
Kafka initializes a share group's partitions in the background once a member is
assigned them and bumps the group's epoch for it (differences.py, KIP-932 notes): the
scenarios compare the join, wait (uncompared) until Kafka has given the member its
partitions, and mask epoch values, comparing only 0, -1 and the others as "<epoch>".
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.shared.java import java_string_hash
from kcsim.protocol.codecs import request_class
from kcsim.protocol.record_batch import iter_batches
from tests.server.fuzz.batches import batch

from . import ops

if TYPE_CHECKING:
    from .harness import Run

Across = Any
HEARTBEAT, DESCRIBE, FETCH, ACK = 76, 77, 78, 79
PRODUCE, ALTER_CONFIGS = 0, 44
ACCEPT, RELEASE, REJECT = 1, 2, 3
H, D, F, A = (request_class(k) for k in (HEARTBEAT, DESCRIBE, FETCH, ACK))
_EPOCHS = frozenset({"member_epoch", "group_epoch", "assignment_epoch"})
WAIT_MS = 5000  # a first fetch waits this long for Kafka to initialize the share partition


def member(run: Run, name: str) -> str:
    """A member id the same on both brokers' runs (the prefix is shared): a UUID, as
    clients make them (Kafka refuses ids longer than 36 characters)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{run.prefix}/{name}"))


def _mask(value: Any) -> Any:
    """Epoch values masked (see the module docstring); 0 and -1 stay."""
    if isinstance(value, dict):
        return {k: ("<epoch>" if k in _EPOCHS and isinstance(v, int) and v > 0 else _mask(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _batches(answer: Any) -> None:
    """A ShareFetch's records reduced to the batches returned (base offset, count): kcsim
    keeps a batch's partition leader epoch as the producer sent it (-1) where Kafka
    stamps its own (0), a difference of the Produce path (as tests/oracle/test_log_admin.py)."""
    for topic in getattr(answer, "responses", None) or ():
        for part in getattr(topic, "partitions", ()):
            records = getattr(part, "records", None)
            if records:
                part.records = repr([(int.from_bytes(records[b.start:b.start + 8], "big"),
                                      b.record_count) for b in iter_batches(records)]).encode()


def _compared(run: Run, api: int, version: int, request: Any, on: str, label: str,
              compare: bool) -> Any:
    if compare:
        run.normalise(api, request)  # requests introduce member and topic ids first
    answer = run.call(api, version, request, on=on, compare=False)
    if compare:
        _batches(answer)
        run.record(api, version, answer, label)
        run.steps[-1].answer = _mask(run.steps[-1].answer)
    return answer


def heartbeat(run: Run, group: str, member_id: str, epoch: int, *, topics: list[str] | None = None,
              version: int = 1, on: str = "main", compare: bool = True, label: str = "") -> Any:
    return _compared(run, HEARTBEAT, version, H(
        group_id=group, member_id=member_id, member_epoch=epoch, rack_id=None,
        subscribed_topic_names=topics), on, label, compare)


def describe(run: Run, groups: list[str], *, version: int = 1, label: str = "") -> Any:
    return _compared(run, DESCRIBE, version, D(group_ids=groups,
                                               include_authorized_operations=False),
                     "main", label, True)


def share_fetch(run: Run, group: str, member_id: str, session_epoch: int, tid: Any, *,
                version: int, acks: list[tuple[int, int, int]] = [],  # noqa: B006
                max_records: int = 10, wait_ms: int = 0, partition: int = 0,
                compare: bool = True, label: str = "") -> Any:
    return _compared(run, FETCH, version, F(
        group_id=group, member_id=member_id, share_session_epoch=session_epoch,
        max_wait_ms=wait_ms, min_bytes=1, max_records=max_records, batch_size=max_records,
        topics=[F.FetchTopic(topic_id=tid, partitions=[F.FetchPartition(
            partition_index=partition, acknowledgement_batches=[
                F.AcknowledgementBatch(first_offset=a, last_offset=b, acknowledge_types=[t])
                for a, b, t in acks])])],
        forgotten_topics_data=[]), "main", label, compare)


def share_ack(run: Run, group: str, member_id: str, session_epoch: int, tid: Any, *,
              version: int, acks: list[tuple[int, int, int]], label: str = "") -> Any:
    return _compared(run, ACK, version, A(
        group_id=group, member_id=member_id, share_session_epoch=session_epoch,
        topics=[A.AcknowledgeTopic(topic_id=tid, partitions=[A.AcknowledgePartition(
            partition_index=0, acknowledgement_batches=[
                A.AcknowledgementBatch(first_offset=a, last_offset=b, acknowledge_types=[t])
                for a, b, t in acks])])]), "main", label, True)


# -- set-up (uncompared) ---------------------------------------------------------------

def earliest(run: Run, group: str) -> None:
    """The group reads from the log's start (share.auto.offset.reset=earliest)."""
    R = request_class(ALTER_CONFIGS)
    answer = run.call(ALTER_CONFIGS, 1, R(resources=[R.AlterConfigsResource(
        resource_type=32, resource_name=group, configs=[R.AlterableConfig(
            name="share.auto.offset.reset", config_operation=0, value="earliest")])]),
        compare=False)
    assert answer.responses[0].error_code == 0, answer


def produce(run: Run, topic: str, *sizes: int) -> None:
    """One batch per size, in order: Kafka acquires whole batches, so ranges follow them."""
    P = request_class(PRODUCE)
    for size in sizes:
        answer = run.call(PRODUCE, 9, P(transactional_id=None, acks=-1, timeout_ms=5000,
                                        topic_data=[P.TopicProduceData(name=topic, partition_data=[
                                            P.PartitionProduceData(index=0, records=batch(
                                                [b"v"] * size))])]), compare=False)
        assert answer.responses[0].partition_responses[0].error_code == 0, answer


def assigned(run: Run, group: str, member_id: str, topics: list[str], partitions: int) -> int:
    """Join (uncompared) and heartbeat until the member holds `partitions` or more; its
    epoch."""
    state = {"epoch": 0}

    def holds() -> bool:
        answer = heartbeat(run, group, member_id, state["epoch"],
                           topics=topics if state["epoch"] == 0 else None, compare=False)
        assert answer.error_code == 0, answer
        state["epoch"] = answer.member_epoch
        got = answer.assignment.topic_partitions if answer.assignment else []
        return sum(len(tp.partitions) for tp in got) >= partitions

    run.until(f"{member_id} assigned {partitions}", holds)
    return state["epoch"]


def topic_with_records(run: Run, *sizes: int) -> tuple[str, Any]:
    topic = run.topic()
    ops.create_topic(run, topic, 1, compare=False)
    produce(run, topic, *sizes)
    return topic, ops.topic_ids(run, topic)[topic]


# -- scenarios --------------------------------------------------------------------------

def sh_heartbeats(run: Run, version: int) -> None:
    """A member joins, heartbeats, changes its subscription and leaves; the refusals."""
    group, t, u = run.group(), run.topic("t"), run.topic("u")
    for name in (t, u):
        ops.create_topic(run, name, 1, compare=False)
    a, b = member(run, "a"), member(run, "b")
    heartbeat(run, group, a, 0, topics=[t], version=version, label="join")
    epoch = assigned(run, group, a, [t], 1)
    heartbeat(run, group, a, epoch, version=version, label="steady")
    heartbeat(run, group, a, epoch, topics=[t, u], version=version, label="subscribe to two")
    epoch = assigned(run, group, a, [t, u], 2)
    heartbeat(run, group, a, epoch, version=version, label="holds two")
    heartbeat(run, group, a, epoch + 7, version=version, label="fenced epoch")
    heartbeat(run, group, member(run, "stranger"), 3, version=version, label="unknown member")
    heartbeat(run, group + "-none", b, 3, version=version, label="unknown group")
    heartbeat(run, group, "", 0, topics=[t], version=version, label="no member id")
    heartbeat(run, group, b + "x", 0, topics=[t], version=version, label="a member id of 37")
    heartbeat(run, "", b, 0, topics=[t], version=version, label="no group id")
    heartbeat(run, group, b, 0, version=version, label="join without a subscription")
    heartbeat(run, group, b, -2, version=version, label="epoch -2")
    heartbeat(run, group, b, -3, version=version, label="epoch -3")
    consumers = run.group("consumers")
    ops.cg_heartbeat(run, consumers, member(run, "c"), 0, topics=[t], rebalance_ms=30000,
                     owned=[], compare=False)
    heartbeat(run, consumers, b, 0, topics=[t], version=version, label="a consumer group")
    heartbeat(run, group, a, -1, version=version, label="leave")
    heartbeat(run, group, a, -1, version=version, label="leave again")
    describe(run, [group])


def test_share_group_heartbeat(across: Across) -> None:
    assert across(HEARTBEAT, sh_heartbeats)


def settle(run: Run, group: str, epochs: dict[str, int]) -> None:
    """Heartbeat every member (uncompared) until the group is Stable with each member at
    the group's epoch: Kafka may bump it again as it initializes share partitions."""
    def stable() -> bool:
        for m in epochs:
            epochs[m] = heartbeat(run, group, m, epochs[m], compare=False).member_epoch
        g = run.call(DESCRIBE, 1, D(group_ids=[group]), compare=False).groups[0]
        return g.group_state == "Stable" and all(
            x.member_epoch == g.group_epoch for x in g.members)

    run.until("a stable group", stable)


def sh_describe(run: Run, version: int) -> None:
    """Three members share a one-partition topic (the simple assignor gives it to each);
    an unknown group and a consumer group are described alongside."""
    group, topic = run.group(), run.topic()
    ops.create_topic(run, topic, 1, compare=False)
    names = [member(run, n) for n in ("a", "b", "c")]
    for name in names:  # numbered in join order, whatever order the answers list them in
        run.ids.member(name)
    epochs = {m: assigned(run, group, m, [topic], 1) for m in names}
    settle(run, group, epochs)
    consumers = run.group("consumers")
    ops.cg_heartbeat(run, consumers, member(run, "c"), 0, topics=[topic], rebalance_ms=30000,
                     owned=[], compare=False)
    describe(run, [group, group + "-none", consumers], version=version)


def tied(run: Run, count: int, label: str) -> list[str]:
    """`count` member ids, the first two in one bucket of a Java HashMap of them: the
    simple assignor numbers members in that map's order, and Kafka breaks such a tie by
    the order its own table of the group lists them."""
    first = member(run, f"{label}0")
    candidates = [member(run, f"{label}{i}") for i in range(1, 200)]
    second = next(m for m in candidates if _bucket(m) == _bucket(first))
    return [first, second] + [m for m in candidates if m != second][:count - 2]


def _bucket(member_id: str) -> int:
    h = java_string_hash(member_id) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & 15


def sh_assignments(run: Run) -> None:
    """Kafka 4.4's simple assignor over several partitions, compared assignment by
    assignment: three members joining one by one over four partitions, then one leaving;
    then five members over two topics with different subscriptions (four of them over a
    topic of three partitions).

    The first member also names a topic that does not exist, so the subscriptions differ
    and Kafka balances topic by topic, by partition number. Where they all agree Kafka
    walks the partitions in the order of a HashMap of (topic id, partition), and each
    broker draws its own topic ids, so the two would walk them differently: that case is
    checked against Kafka's SimpleAssignor in tests/coordinator/test_share_group.py."""
    group, t, u = run.group(), run.topic("t"), run.topic("u")
    ops.create_topic(run, t, 4, compare=False)
    ops.create_topic(run, u, 3, compare=False)
    ops.topic_ids(run, t, u)  # topic ids compare by name
    names = tied(run, 3, "a")
    for name in names:
        run.ids.member(name)
    epochs = {}
    for m, topics in zip(names, [[t, run.topic("none")], [t], [t]], strict=True):
        epochs[m] = assigned(run, group, m, topics, 1)
        settle(run, group, epochs)
    describe(run, [group], label="three members over four partitions")
    gone = names[1]
    heartbeat(run, group, gone, -1, compare=False)
    del epochs[gone]
    settle(run, group, epochs)
    describe(run, [group], label="after the second left")

    mixed = run.group("mixed")
    subscriptions = [[t], [u], [t, u], [u], [u]]
    names = tied(run, len(subscriptions), "m")
    for name in names:
        run.ids.member(name)
    epochs = {}
    for m, topics in zip(names, subscriptions, strict=True):
        epochs[m] = assigned(run, mixed, m, topics, 1)
        settle(run, mixed, epochs)
    describe(run, [mixed], label="different subscriptions")


def test_share_group_describe(across: Across) -> None:
    assert across(DESCRIBE, sh_describe)


def test_share_group_assignments(differential: Any) -> None:
    differential(sh_assignments)


def sh_fetch(run: Run, version: int) -> None:
    """A share session: opened, records acquired, acknowledged in the next fetch; wrong
    epochs, an unknown session, an unknown topic id; closed."""
    group = run.group()
    earliest(run, group)
    topic, tid = topic_with_records(run, 2, 2, 2)
    a = member(run, "a")
    assigned(run, group, a, [topic], 1)
    share_fetch(run, group, a, 0, tid, version=version, max_records=4, wait_ms=WAIT_MS,
                label="open, acquire 4")
    share_fetch(run, group, a, 1, tid, version=version, acks=[(0, 1, ACCEPT)],
                wait_ms=WAIT_MS, label="accept 0-1, acquire the rest")
    share_fetch(run, group, a, 7, tid, version=version, label="wrong epoch")
    share_fetch(run, group, member(run, "b"), 3, tid, version=version, label="no session")
    share_fetch(run, group, a, 2, uuid.uuid4(), version=version, label="unknown topic id")
    share_fetch(run, group, a, 0, tid, version=version, acks=[(2, 3, ACCEPT)],
                label="acknowledgements in an opening fetch")
    share_fetch(run, group, a, -1, tid, version=version, acks=[(2, 5, ACCEPT)], label="close")
    share_fetch(run, group, a, 1, tid, version=version, label="after close")


def test_share_fetch(across: Across) -> None:
    assert across(FETCH, sh_fetch)


def sh_acknowledge(run: Run, version: int) -> None:
    """ACCEPT, RELEASE (delivered again, count 2), REJECT; records not held, overlapping
    and inverted ranges, epoch 0."""
    group = run.group()
    earliest(run, group)
    topic, tid = topic_with_records(run, 1, 1, 1, 1)
    a = member(run, "a")
    assigned(run, group, a, [topic], 1)
    share_fetch(run, group, a, 0, tid, version=version, max_records=3, wait_ms=WAIT_MS,
                label="acquire 0-2")
    share_ack(run, group, a, 1, tid, version=version, acks=[(0, 0, ACCEPT)], label="accept 0")
    share_ack(run, group, a, 2, tid, version=version, acks=[(1, 1, RELEASE)], label="release 1")
    share_fetch(run, group, a, 3, tid, version=version, max_records=1, wait_ms=WAIT_MS,
                label="1 again")
    share_ack(run, group, a, 4, tid, version=version, acks=[(2, 2, REJECT)], label="reject 2")
    share_ack(run, group, a, 5, tid, version=version, acks=[(3, 3, ACCEPT)],
              label="never acquired: past what was fetched")
    share_ack(run, group, a, 6, tid, version=version, acks=[(2, 2, ACCEPT)],
              label="rejected: no longer acquired")
    share_ack(run, group, a, 7, tid, version=version, acks=[(1, 1, ACCEPT), (1, 1, ACCEPT)],
              label="one offset twice")
    share_ack(run, group, a, 8, tid, version=version, acks=[(1, 2, ACCEPT), (1, 1, ACCEPT)],
              label="overlapping")
    share_ack(run, group, a, 9, tid, version=version, acks=[(1, 0, ACCEPT)], label="first > last")
    share_ack(run, group, a, 0, tid, version=version, acks=[(1, 1, ACCEPT)], label="epoch 0")
    share_ack(run, group, a, 10, uuid.uuid4(), version=version, acks=[(1, 1, ACCEPT)],
              label="unknown topic id")
    share_ack(run, group, a, 11, tid, version=version, acks=[(1, 1, ACCEPT)],
              label="the refused changed nothing")
    share_ack(run, group, a, 12, tid, version=version, acks=[(1, 1, RELEASE)],
              label="before the start offset: skipped")


def test_share_acknowledge(across: Across) -> None:
    assert across(ACK, sh_acknowledge)
