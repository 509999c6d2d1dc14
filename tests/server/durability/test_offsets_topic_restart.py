"""`__consumer_offsets` after restarts: what readers saw stays at its offsets, and the topic
ends in the durable state, after a clean stop, a SIGKILL or the loss of its own files."""

from __future__ import annotations

import shutil
import struct
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.coordinator.kafka_format import partition_for
from tests.server.offsets_reader import fold, read_all

from .test_crash import kill
from .wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.protocol.record_batch import KafkaRecord

pytestmark = pytest.mark.timeout(120)

TOPIC = "orders"
PARTITIONS = 3
GROUPS = [f"group-{i}" for i in range(8)]


def commit_round(server: Any, n: int) -> dict[str, dict[int, int]]:
    offsets = {g: {p: n * 100 + p for p in range(PARTITIONS)} for g in GROUPS}
    with Wire.to(server) as wire:
        wire.create_topic(TOPIC, PARTITIONS)
        for group, committed in offsets.items():
            wire.commit(group, TOPIC, committed)
    return offsets


def read(server: Any) -> dict[int, list[KafkaRecord]]:
    with Wire.to(server) as wire:
        return read_all(wire.call)


def committed_offsets(topic: dict[int, list[KafkaRecord]]) -> dict[tuple[str, int], int]:
    """(group, partition) -> offset of every live OffsetCommit record."""
    out = {}
    for key, value in fold(topic).items():
        if key[:2] != b"\x00\x01":
            continue
        pos = 2
        group, pos = _string(key, pos)
        _topic, pos = _string(key, pos)
        (partition,) = struct.unpack_from(">i", key, pos)
        out[(group, partition)] = struct.unpack_from(">q", value, 2)[0]
    return out


def _string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">h", buf, pos)
    return buf[pos + 2:pos + 2 + n].decode(), pos + 2 + n


def expected(offsets: dict[str, dict[int, int]]) -> dict[tuple[str, int], int]:
    return {(g, p): o for g, parts in offsets.items() for p, o in parts.items()}


def shown(topic: dict[int, list[KafkaRecord]]) -> list[tuple[int, int, bytes | None, bytes | None]]:
    return [(p, r.offset, r.key, r.value) for p, records in topic.items() for r in records]


@pytest.mark.parametrize("stop", ["clean", "sigkill"])
def test_readers_see_the_same_records_after_a_restart(
        kcsim_factory: Callable[..., Any], stop: str) -> None:
    server = kcsim_factory(fsync="interval")
    commit_round(server, 1)
    before = read(server)
    if stop == "clean":
        server.stop()
    else:
        kill(server)
    server.start()
    after = read(server)
    assert shown(after) == shown(before)
    latest = commit_round(server, 2)
    grown = read(server)
    for p, records in grown.items():  # offsets carry on, dense
        assert [r.offset for r in records] == list(range(len(records)))
        assert records[:len(before[p])] == before[p]
    assert committed_offsets(grown) == expected(latest)
    for p, records in grown.items():
        for r in records:
            assert r.key is not None
            group, _ = _string(r.key, 2)
            assert p == partition_for(group, 50)


def test_a_topic_that_lost_its_files_is_brought_back_to_the_durable_state(
        kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory()
    commit_round(server, 1)
    read(server)
    latest = commit_round(server, 2)
    assert server.stop() == 0
    for partition_dir in (server.data_dir / "partitions").glob("*/*"):
        shutil.rmtree(partition_dir)  # __consumer_offsets and orders alike
    server.start()
    assert committed_offsets(read(server)) == expected(latest)


def test_records_the_topic_missed_before_a_crash_are_appended_from_its_checkpoint(
        kcsim_factory: Callable[..., Any]) -> None:
    """The record log holds commits the topic never got (a crash between the two writes):
    the next start appends just those, found from the topic's checkpoint."""
    from kcsim.coordinator.records import OffsetCommitKey, OffsetCommitValue
    from kcsim.server.durability import RECORD_TYPES
    from kcsim.storage import Record, RecordLog

    server = kcsim_factory()
    commit_round(server, 1)
    before = read(server)
    assert server.stop() == 0
    with RecordLog.open(server.data_dir / "meta", types=RECORD_TYPES) as log:
        list(log.replay())
        log.append([Record(OffsetCommitKey("group-0", TOPIC, 0),
                           OffsetCommitValue(777, -1, "", 1_700_000_000_000))])
    server.start()
    after = read(server)
    p = partition_for("group-0", 50)
    assert after[p][:len(before[p])] == before[p]
    assert len(after[p]) == len(before[p]) + 1  # that one record, nothing else
    assert sum(map(len, after.values())) == sum(map(len, before.values())) + 1
    assert "(checkpoint)" in server.stderr(all_runs=False)
    assert committed_offsets(after)[("group-0", 0)] == 777
    with Wire.to(server) as wire:
        assert wire.fetch({"group-0": (TOPIC, [0])})[("group-0", 0)] == 777


def test_compaction_keeps_each_keys_newest_record_at_its_offset_and_moves_the_start(
        kcsim_factory: Callable[..., Any]) -> None:
    """After kcsim's log compacts, so does the topic: each key's newest record stays at the
    offset readers saw it at, older ones and expired tombstones go, the log start moves
    up, and a reader from the start ends in the committed state, also after a restart."""
    import time

    server = kcsim_factory(segment_bytes=2048, compaction_interval_ms=100,
                           tombstone_retention_ms=0)
    assert shown(read(server)) == []  # read first: every commit is written to the topic
    for n in range(1, 6):
        latest = commit_round(server, n)
    before = read(server)
    newest_before = {r.key: (p, r.offset, r.value) for p, rs in before.items() for r in rs}

    def compacted() -> dict[int, list[KafkaRecord]] | None:
        topic = read(server)
        return topic if sum(map(len, topic.values())) == len(newest_before) else None

    deadline = time.monotonic() + 30
    more_at = time.monotonic()
    while (after := compacted()) is None:
        assert time.monotonic() < deadline, "the topic was not compacted"
        if time.monotonic() >= more_at:  # then a few compaction intervals to catch up
            commit_round(server, 5)  # the same values again: more closed segments to compact
            latest = commit_round(server, 5)
            more_at = time.monotonic() + 0.5
        time.sleep(0.05)
    assert committed_offsets(after) == expected(latest)
    for p, records in after.items():
        for r in records:  # every record kept is its key's newest, where readers saw it
            if newest_before[r.key][2] == r.value:
                assert newest_before[r.key][:2] == (p, r.offset)
        if records:
            assert records[0].offset > 0  # the log start moved past what was dropped
    assert server.stop() == 0
    server.start()
    assert shown(read(server)) == shown(after)
