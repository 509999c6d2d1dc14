"""Fetch sessions (KIP-227), kcsim against Kafka: one session's answers at every Fetch
version that has sessions (7+), compared with the session id as a placeholder.

The session is opened by a full fetch over two partitions, then fetched incrementally
with nothing new, with a fetch position moved, after new records in the other partition,
at a wrong epoch, and by a forgetting of every partition (which closes it); records are
compared as the batches read (base offset, record count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import request_class
from kcsim.protocol.record_batch import iter_batches

from . import ops

if TYPE_CHECKING:
    from .harness import Run

Across = Any
PRODUCE, FETCH = 0, 1


def produce(run: Run, topic: str, partition: int) -> None:
    from tests.server.fuzz.batches import batch

    cls = request_class(PRODUCE)
    run.call(PRODUCE, 9, cls(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        cls.TopicProduceData(name=topic, partition_data=[
            cls.PartitionProduceData(index=partition, records=batch([b"v"]))])]))


class Session:
    """The scenario's side of one fetch session."""

    def __init__(self, run: Run, version: int, topic: str) -> None:
        self.run, self.version, self.topic = run, version, topic
        self.topic_id = ops.topic_ids(run, topic)[topic] if version >= 13 else None
        self.ids: dict[int, str] = {0: "0"}
        self.id = 0

    def fetch(self, label: str, session_id: int, epoch: int,
              partitions: dict[int, int] | None = None, forget: tuple[int, ...] = ()) -> Any:
        cls = request_class(FETCH)
        named = ({"topic": "", "topic_id": self.topic_id} if self.topic_id
                 else {"topic": self.topic})
        answer = self.run.call(FETCH, self.version, cls(
            replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
            session_id=session_id, session_epoch=epoch, rack_id="",
            topics=[cls.FetchTopic(**named, partitions=[
                cls.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20)
                for p, o in partitions.items()])] if partitions else [],
            forgotten_topics_data=[cls.ForgottenTopic(**named, partitions=list(forget))]
            if forget else []), compare=False)
        if answer.session_id and not self.id:
            self.id = answer.session_id
        self.ids.setdefault(answer.session_id, f"<session#{len(self.ids)}>")
        answer.session_id = self.ids[answer.session_id]
        for t in answer.responses:
            for p in t.partitions:
                records = p.records or b""
                p.records = [(int.from_bytes(records[i.start:i.start + 8], "big"), i.record_count)
                             for i in iter_batches(records)]
        self.run.record(FETCH, self.version, answer, label)
        return answer


def session_cases(run: Run, version: int) -> None:
    if version < 7:
        return
    topic = run.topic()
    ops.create_topic(run, topic, 2, compare=False)
    produce(run, topic, 0)
    s = Session(run, version, topic)
    s.fetch("full: opens a session", 0, 0, {0: 0, 1: 0})
    assert s.id, "no session was opened"
    s.fetch("incremental: nothing new", s.id, 1)
    s.fetch("incremental: position moved, nothing new", s.id, 2, {0: 1})
    produce(run, topic, 1)
    s.fetch("incremental: new records in partition 1", s.id, 3)
    s.fetch("incremental: epoch already used", s.id, 3)
    s.fetch("incremental: session 0", 0, 1)
    s.fetch("incremental: forgets every partition", s.id, 4, forget=(0, 1))
    s.fetch("incremental: the closed session", s.id, 5)


def test_fetch_session(across: Across) -> None:
    assert across(FETCH, session_cases)
