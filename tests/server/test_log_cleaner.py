"""The log cleaner and transactions, as Kafka's cleaner treats them: an aborted
transaction's records go, a marker stays while its transaction has a record left and
until delete.retention.ms after it was written; nothing the cleaner leaves opens a
transaction again when the partition is read back after a restart."""

from __future__ import annotations

import struct
import tempfile
import uuid
from typing import Any

import trio
from crc32c import crc32c

from kcsim.protocol.record_batch import batch_header, batch_records, encode_batch, iter_batches
from kcsim.server.config import Config
from kcsim.server.maintenance import LogMaintenance
from kcsim.server.shell.clock import Clock
from kcsim.server.state.broker_state import BrokerState
from kcsim.server.state.topics import TopicRegistry
from kcsim.storage import PartitionLog

DAY = 86_400_000


def produced(records: list[tuple[bytes, bytes | None]], ts: int, producer_id: int = -1,
             sequence: int = -1, transactional: bool = False) -> bytes:
    """A batch as a producer sends it: plain, idempotent or transactional."""
    batch, _ = encode_batch(0, [(k, v, ts) for k, v in records])
    after_crc = (struct.pack(">h", 0x10 if transactional else 0) + batch[23:43]
                 + struct.pack(">qhi", producer_id, 0 if producer_id >= 0 else -1, sequence)
                 + batch[57:])
    return batch[:17] + struct.pack(">I", crc32c(after_crc)) + after_crc


class Log:
    """One compacted partition on disk, its maintenance and its clock."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="kcsim-cleaner-")
        self.topic_id = uuid.uuid4()
        self.clock = Clock()
        self.clock.freeze()
        self.open()

    def open(self) -> None:
        self.topics = TopicRegistry(lambda topic_id, index: PartitionLog.open(
            f"{self.directory}/{topic_id.hex}/{index}"))
        state = BrokerState(Config(in_memory=True), self.topics, None, self.clock)
        self.maintenance = LogMaintenance(state, self.clock, lambda: None)
        self.partition = self.topics.create("t", 1, {"cleanup.policy": "compact"},
                                            self.topic_id).partitions[0]

    def restart(self) -> None:
        self.topics.close()
        self.open()

    def produce(self, batch: bytes) -> None:
        error, _base, _ = self.partition.append_produced(batch, next(iter_batches(batch)))
        assert error == 0

    def marker(self, producer_id: int, commit: bool) -> None:
        self.partition.write_marker(producer_id, 0, commit, self.clock.now_ms())

    async def clean(self) -> None:
        await self.maintenance.run_now(roll=True)

    def read(self) -> tuple[list[tuple[int, bytes | None, bytes | None]], list[tuple[int, int]]]:
        """The records, and the (offset, producer id) of each transaction marker."""
        records, markers = [], []
        for batch in self.partition.read(0, 1 << 20):
            header = batch_header(batch)
            if header.is_control:
                markers.append((header.base_offset, header.producer_id))
                continue
            records += [(r.offset, r.key, r.value)
                        for r in batch_records(batch, header.base_offset, _no_codec)]
        return records, markers


def _no_codec(codec: int, data: bytes) -> Any:
    raise AssertionError("uncompressed only")


async def run() -> None:
    log = Log()
    now = log.clock.now_ms()
    log.produce(produced([(b"k1", b"aborted")], now, 7, 0, transactional=True))  # 0
    log.marker(7, commit=False)  # 1
    log.produce(produced([(b"k1", b"v2"), (b"k2", b"v2")], now, 8, 0, transactional=True))  # 2-3
    log.marker(8, commit=True)  # 4
    log.produce(produced([(b"k2", b"v3")], now, 9, 0))  # 5, idempotent
    log.produce(produced([(b"k3", b"v1")], now))  # 6
    await log.clean()
    assert log.read() == ([(2, b"k1", b"v2"), (5, b"k2", b"v3"), (6, b"k3", b"v1")],
                          [(1, 7), (4, 8)])

    log.clock.advance(DAY + 1)  # the abort marker's transaction left nothing: it goes
    await log.clean()
    assert log.read() == ([(2, b"k1", b"v2"), (5, b"k2", b"v3"), (6, b"k3", b"v1")], [(4, 8)])

    log.produce(produced([(b"k1", b"v4")], log.clock.now_ms()))  # 7
    await log.clean()  # k1=v2 superseded: the commit's transaction has nothing left
    assert log.read() == ([(5, b"k2", b"v3"), (6, b"k3", b"v1"), (7, b"k1", b"v4")], [])

    log.restart()
    assert log.read() == ([(5, b"k2", b"v3"), (6, b"k3", b"v1"), (7, b"k1", b"v4")], [])
    assert log.partition.last_stable_offset == log.partition.log_end_offset == 8

    log.produce(produced([(b"k2", b"v5")], log.clock.now_ms()))  # 8
    await log.clean()
    log.restart()
    assert log.read() == ([(6, b"k3", b"v1"), (7, b"k1", b"v4"), (8, b"k2", b"v5")], [])
    # The idempotent producer's last batch stays, empty, with its sequence: a retry of it
    # is still answered as the duplicate it is.
    retry = produced([(b"k2", b"v3")], now, 9, 0)
    assert log.partition.append_produced(retry, next(iter_batches(retry)))[:2] == (0, 5)
    log.topics.close()


def test_transactions_are_cleaned_as_kafka_cleans_them() -> None:
    trio.run(run)


async def open_transaction() -> None:
    log = Log()
    now = log.clock.now_ms()
    log.produce(produced([(b"k", b"v1")], now))
    log.produce(produced([(b"k", b"open")], now, 3, 0, transactional=True))
    log.produce(produced([(b"k", b"v2")], now))
    await log.clean()  # nothing at or after the open transaction's first offset is cleaned
    assert log.read()[0] == [(0, b"k", b"v1"), (1, b"k", b"open"), (2, b"k", b"v2")]
    log.marker(3, commit=False)
    await log.clean()
    assert log.read() == ([(2, b"k", b"v2")], [(3, 3)])
    log.topics.close()


def test_nothing_is_cleaned_from_an_open_transaction_on() -> None:
    trio.run(open_transaction)
