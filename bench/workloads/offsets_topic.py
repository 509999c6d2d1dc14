"""`__consumer_offsets` (issue #15): what keeping it costs, and how fast it can be read.

- offsets_topic_commit_cpu: in this process, a server built on a data dir
  (`--fsync never`) serves 10-partition OffsetCommits, each its own group, through
  `Broker.process` and the group-commit writer, with and without the topic
  appended from the writer's `on_durable`, in alternating slices; the figure is
  the CPU added per commit (`time.process_time`), beside the CPU of the whole
  commit. No sockets: what is added is the same over a connection, and without
  the socket cost the difference is not drowned in noise.
- offsets_topic_catch_up: 100,000 OffsetCommits of 10 partitions, each its own
  group, served in-process as above (so the topic holds what live commits write:
  one small batch per commit), then `kcsim serve` on that data dir and a reader
  fetching all 50 partitions from offset 0 to their end (Fetch v12, 8 MiB per
  partition per request, records counted from the batch headers): the time it
  takes. Beside it, the first start on a log of as many partitions written
  without the topic (storage's `build_log`, as a data dir from before the topic
  existed): the time to write the topic from the log.
"""

from __future__ import annotations

import socket
import struct
import time
import uuid
from typing import TYPE_CHECKING, Any

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC
from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import RequestHeader, encode_request_header, request_header_version
from kcsim.protocol.record_batch import iter_batches

from .. import classic as c
from ..registry import Figure, at_most, workload
from .storage import _data_dir, _kcsim, build_log, record_count

if TYPE_CHECKING:
    from pathlib import Path

    from ..harness import RunContext

COMMITS_PER_SLICE = 2000
SLICES = 10
ADDED_CPU_TARGET = 1.5  # what the topic adds, against what the commit costs without it
CATCH_UP_TARGET_S = 5.0  # for 1,000,000 partitions
FETCH, FETCH_V = 1, 12
PARTITION_BYTES = 8 << 20


def _commit_payloads(count: int, first: int = 0) -> list[bytes]:
    """OffsetCommit requests, each of its own group, as `Broker.process` takes them."""
    out = []
    for i in range(first, first + count):
        frame = c.commit_frame(f"bench-view-{i}", i)
        out.append(frame.head[4:] + struct.pack(">i", i) + frame.tail)
    return out


class _InProcess:
    """A server built on a data dir and driven without sockets: `Broker.process`, then the
    group-commit writer, as the connection loop does."""

    def __init__(self, data_dir: Path) -> None:
        from kcsim.server import config as config_mod
        from kcsim.server.app import build
        from kcsim.server.context import Peer
        from kcsim.server.listeners import Listener

        config = config_mod.load(None, env={}, data_dir=str(data_dir), port=0,
                                 log_level="WARNING", fsync="never")
        self.server = build(config)
        self.broker = self.server.broker
        assert self.server.durability is not None
        self.durability = self.server.durability
        self.writer = self.durability.writer
        self.keep_view = self.writer.on_durable
        if self.broker.topics.get(c.TOPIC) is None:
            self.broker.topics.create(c.TOPIC, c.PARTITIONS)
        self.peer = Peer("127.0.0.1", 1, Listener("PLAINTEXT", "127.0.0.1", 9092))

    def commit(self, payloads: list[bytes]) -> None:
        now = int(time.time() * 1000)
        for payload in payloads:
            reply = self.broker.process(payload, self.peer, now)
            self.writer.commit_nowait(reply.records)

    def close(self) -> None:
        self.writer.on_durable = None
        if self.durability.checkpointer is not None:
            self.durability.checkpointer.write(sync=True)
        self.broker.topics.close()
        self.durability.close()


def _commit_cpu(slices: int, per_slice: int) -> dict[str, float]:
    """CPU µs per commit with and without the topic kept, alternating slices."""
    with _data_dir() as data_dir:
        server = _InProcess(data_dir)
        payloads = _commit_payloads(per_slice)
        spent: dict[str, float] = {"with": 0.0, "without": 0.0}
        try:
            for n in range(-2, 2 * slices):  # two warm-up slices: partition files opened
                side = "with" if n % 2 == 0 else "without"
                server.writer.on_durable = server.keep_view if side == "with" else None
                started = time.process_time()
                server.commit(payloads)
                if n >= 0:
                    spent[side] += time.process_time() - started
        finally:
            server.writer.on_durable = server.keep_view
            server.close()
    commits = slices * per_slice
    return {side: spent[side] / commits * 1e6 for side in spent}


@workload("offsets_topic_commit_cpu", "offsets_topic", order=70)
def offsets_topic_commit_cpu(ctx: RunContext) -> list[Figure]:
    """Server CPU an OffsetCommit costs with __consumer_offsets kept, and without."""
    if "kcsim" not in ctx.sides:
        return []
    slices = 4 if ctx.settings.quick else SLICES
    error = None
    values: dict[str, float] = {}
    try:
        values = _commit_cpu(slices, COMMITS_PER_SLICE)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]offsets_topic_commit_cpu failed:[/] {error}")
    added = values["with"] - values["without"] if values else None
    share = added / values["without"] if added is not None and values["without"] else None
    shape = f"{c.PARTITIONS} partitions/commit, in-process, fsync never"
    return [
        Figure("offsets_topic_commit_cpu", f"CPU per commit, topic kept ({shape})", "µs",
               values.get("with"), None, kcsim_error=error),
        Figure("offsets_topic_commit_cpu", "CPU per commit, topic not kept", "µs",
               values.get("without"), None, kcsim_error=error),
        Figure("offsets_topic_commit_cpu", "CPU added per commit by the topic", "µs",
               added, None, kcsim_error=error),
        Figure("offsets_topic_commit_cpu", "  added / CPU of the commit without the topic", "x",
               share, None, at_most(ADDED_CPU_TARGET, "x"), kcsim_error=error),
    ]


def _fetch_request(positions: dict[int, int]) -> Any:
    cls = codec(FETCH, "request").cls
    return cls(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=0x7FFFFFFF,
               isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=[],
               rack_id="", topics=[cls.FetchTopic(
                   topic=OFFSETS_TOPIC, topic_id=uuid.UUID(int=0), partitions=[
                       cls.FetchPartition(partition=p, fetch_offset=o,
                                          partition_max_bytes=PARTITION_BYTES)
                       for p, o in positions.items()])])


def _call(sock: socket.socket, correlation_id: int, request: Any) -> Any:
    header = encode_request_header(RequestHeader(FETCH, FETCH_V, correlation_id, "bench-reader"),
                                   request_header_version(APIS[FETCH], FETCH_V))
    body = codec(FETCH, "request").encode(request, FETCH_V)
    sock.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
    size = struct.unpack(">i", _exact(sock, 4))[0]
    frame = _exact(sock, size)
    return codec(FETCH, "response").decode(frame[5:], FETCH_V)  # correlation id, header tags


def _exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("kcsim closed the connection")
        buf += chunk
    return bytes(buf)


def read_to_end(host: str, port: int, partitions: int) -> int:
    """Fetch every partition from 0 to its end; the number of records seen."""
    positions = dict.fromkeys(range(partitions), 0)
    records = 0
    with socket.create_connection((host, port), timeout=60) as sock:
        n = 0
        while positions:
            n += 1
            response = _call(sock, n, _fetch_request(positions))
            for part in response.responses[0].partitions:
                if part.error_code == 1:  # OFFSET_OUT_OF_RANGE: compacted, start at its start
                    positions[part.partition_index] = part.log_start_offset
                    continue
                data = part.records or b""
                for info in iter_batches(data):
                    base = int.from_bytes(data[info.start:info.start + 8], "big")
                    if base + info.last_offset_delta >= positions[part.partition_index]:
                        records += info.record_count
                        positions[part.partition_index] = base + info.last_offset_delta + 1
                if positions[part.partition_index] >= part.high_watermark:
                    del positions[part.partition_index]
    return records


def _served_read(data_dir: Path, partitions: int) -> dict[str, float]:
    """`kcsim serve` on `data_dir`; spawn-to-ready, then a reader from offset 0 to the end."""
    srv = _kcsim(data_dir)
    try:
        srv.start(timeout=600)
        ready = srv.ready_at - srv.started_at
        started = time.perf_counter()
        seen = read_to_end("127.0.0.1", srv.port, 50)
        elapsed = time.perf_counter() - started
    finally:
        srv.stop()
    if seen < partitions:
        raise RuntimeError(f"the reader saw {seen:,} records, fewer than {partitions:,}")
    return {"ready_s": ready, "catch_up_s": elapsed, "records": seen}


@workload("offsets_topic_catch_up", "offsets_topic", order=71)
def offsets_topic_catch_up(ctx: RunContext) -> list[Figure]:
    """A reader catching up on __consumer_offsets of 1,000,000 committed partitions."""
    if "kcsim" not in ctx.sides:
        return []
    partitions = record_count(ctx.settings)
    commits = partitions // c.PARTITIONS
    target = at_most(CATCH_UP_TARGET_S, "s") if not ctx.settings.quick else None
    values: dict[str, float] = {}
    extra: dict[str, Any] = {}
    error = None
    try:
        with _data_dir() as data_dir:
            ctx.log(f"offsets_topic_catch_up: {commits:,} commits of {c.PARTITIONS} partitions")
            server = _InProcess(data_dir)
            try:
                for start in range(0, commits, 10_000):
                    server.commit(_commit_payloads(min(10_000, commits - start), start))
            finally:
                server.close()
            live = _served_read(data_dir, partitions)
            values["catch_up"] = live["catch_up_s"]
            values["rate"] = live["records"] / live["catch_up_s"]
            extra["live"] = {k: round(v, 3) for k, v in live.items()}
        with _data_dir() as data_dir:
            ctx.log(f"offsets_topic_catch_up: a log of {partitions:,} partitions, no topic yet")
            extra["log"] = build_log(data_dir, partitions, passes=1)
            first = _served_read(data_dir, partitions)
            values["first_start"] = first["ready_s"]
            extra["first_start"] = {k: round(v, 3) for k, v in first.items()}
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]offsets_topic_catch_up failed:[/] {error}")
    what = f"{partitions:,} partitions committed {c.PARTITIONS} per OffsetCommit"
    return [
        Figure("offsets_topic_catch_up", f"reader catches up from offset 0 ({what})", "s",
               values.get("catch_up"), None, target, kcsim_error=error, extra=extra),
        Figure("offsets_topic_catch_up", "  records read per second", "rec/s",
               values.get("rate"), None, kcsim_error=error),
        Figure("offsets_topic_catch_up",
               f"first start on a log of {partitions:,} partitions, topic written from it", "s",
               values.get("first_start"), None, kcsim_error=error),
    ]
