"""`__consumer_offsets` (issue #15): what keeping it costs, and how fast it can be read.

The topic is written only from its first read on (Fetch or ListOffsets), so both
figures come in two states.

- offsets_topic_commit_cpu: in this process, a server built on a data dir
  (`--fsync never`) serves 10-partition OffsetCommits, each its own group, through
  `Broker.process` and the group-commit writer, in alternating slices; the figure is
  the CPU per commit (`time.process_time`). First with the topic never read
  ("inactive") against the same server with no topic at all; then, once a
  ListOffsets has activated it, with the topic written from the writer's
  `on_durable` against the writer not telling it. No sockets: what is added is the
  same over a connection, and without the socket cost the difference is not drowned
  in noise.
- offsets_topic_catch_up: 100,000 OffsetCommits of 10 partitions, each its own
  group, served in-process as above with the topic never read, then `kcsim serve`
  on that data dir (its start does no topic work) and a reader fetching all 50
  partitions from offset 0 to their end (Fetch v12, 8 MiB per partition per
  request, records counted from the batch headers): the time it takes, its first
  answer waiting for the topic to be filled from the log. Then a second reader on
  the topic now written.
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
from .storage import _data_dir, _kcsim, record_count

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..harness import RunContext

COMMITS_PER_SLICE = 2000
SLICES = 10
ADDED_CPU_TARGET = 1.5  # what the topic adds, against what the commit costs without it
INACTIVE_CPU_TARGET = 0.05  # what a topic nobody read adds: within noise of none
CATCH_UP_TARGET_S = 5.0  # for 1,000,000 partitions, the fill at the first read included
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
        from kcsim.server.listeners import Listener
        from kcsim.server.requests import Peer

        config = config_mod.load(None, env={}, data_dir=str(data_dir), port=0,
                                 log_level="WARNING", fsync="never")
        self.server = build(config)
        self.broker = self.server.broker
        assert self.server.durability is not None
        self.durability = self.server.durability
        self.writer = self.durability.writer
        self.activation = self.broker.offsets_activation
        if self.broker.topics.get(c.TOPIC) is None:
            self.broker.topics.create(c.TOPIC, c.PARTITIONS)
        self.peer = Peer("127.0.0.1", 1, Listener("PLAINTEXT", "127.0.0.1", 9092))

    def commit(self, payloads: list[bytes]) -> None:
        now = int(time.time() * 1000)
        for payload in payloads:
            _, records, _, _, _, _ = self.broker.process(payload, self.peer, now)
            self.writer.commit_nowait(records or [])

    def activate(self) -> None:
        """What the first ListOffsets of the topic does before it answers."""
        import trio

        assert self.activation is not None
        trio.run(self.activation.activate)

    def close(self) -> None:
        self.writer.on_durable = None
        if self.durability.checkpointer is not None:
            self.durability.checkpointer.write(sync=True)
        self.broker.topics.close()
        self.durability.close()


def _alternate(server: _InProcess, payloads: list[bytes], slices: int,
               sides: dict[str, Callable[[], None]]) -> dict[str, float]:
    """CPU µs per commit on each side, the sides taking turns slice by slice."""
    names = list(sides)
    spent = dict.fromkeys(names, 0.0)
    for n in range(-len(names), len(names) * slices):  # a warm-up slice per side
        side = names[n % len(names)]
        sides[side]()
        started = time.process_time()
        server.commit(payloads)
        if n >= 0:
            spent[side] += time.process_time() - started
    return {side: spent[side] / (slices * len(payloads)) * 1e6 for side in names}


def _commit_cpu(slices: int, per_slice: int) -> dict[str, float]:
    """CPU µs per commit: the topic inactive and absent, then active and not told."""
    with _data_dir() as data_dir:
        server = _InProcess(data_dir)
        payloads = _commit_payloads(per_slice)
        broker, writer = server.broker, server.writer
        try:
            def inactive() -> None:
                broker.offsets_activation = server.activation

            def absent() -> None:
                broker.offsets_activation = None

            out = _alternate(server, payloads, slices, {"inactive": inactive, "absent": absent})
            assert writer.on_durable is None  # nothing follows the commits yet
            inactive()
            server.activate()
            kept = writer.on_durable

            def active() -> None:
                writer.on_durable = kept

            def untold() -> None:
                writer.on_durable = None

            out |= _alternate(server, payloads, slices, {"active": active, "untold": untold})
        finally:
            server.close()
    return out


@workload("offsets_topic_commit_cpu", "offsets_topic", order=70, in_process=True)
def offsets_topic_commit_cpu(ctx: RunContext) -> list[Figure]:
    """Server CPU an OffsetCommit costs with __consumer_offsets never read, and written."""
    if "kcsim" not in ctx.sides:
        return []
    slices = 4 if ctx.settings.quick else SLICES
    error = None
    v: dict[str, float] = {}
    try:
        v = _commit_cpu(slices, COMMITS_PER_SLICE)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]offsets_topic_commit_cpu failed:[/] {error}")

    def added(side: str, base: str) -> tuple[float | None, float | None]:
        if not v:
            return None, None
        extra = v[side] - v[base]
        return extra, extra / v[base] if v[base] else None

    inactive, inactive_share = added("inactive", "absent")
    active, active_share = added("active", "untold")
    shape = f"{c.PARTITIONS} partitions/commit, in-process, fsync never"
    name = "offsets_topic_commit_cpu"
    return [
        Figure(name, f"CPU per commit, topic never read ({shape})", "µs",
               v.get("inactive"), None, kcsim_error=error),
        Figure(name, "CPU per commit, no topic at all", "µs", v.get("absent"), None,
               kcsim_error=error),
        Figure(name, "CPU added per commit by a topic never read", "µs", inactive, None,
               kcsim_error=error),
        Figure(name, "  added / CPU of the commit without it", "x", inactive_share, None,
               at_most(INACTIVE_CPU_TARGET, "x"), kcsim_error=error),
        Figure(name, "CPU per commit, topic read once (written at each commit)", "µs",
               v.get("active"), None, kcsim_error=error),
        Figure(name, "CPU per commit, same server, topic not told", "µs", v.get("untold"),
               None, kcsim_error=error),
        Figure(name, "CPU added per commit by the topic once read", "µs", active, None,
               kcsim_error=error),
        Figure(name, "  added / CPU of the commit without it", "x", active_share, None,
               at_most(ADDED_CPU_TARGET, "x"), kcsim_error=error),
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


def read_to_end(host: str, port: int, partitions: int) -> tuple[int, float]:
    """Fetch every partition from 0 to its end; the number of records seen, and the
    seconds the first answer took (the fill, when this read is the topic's first)."""
    positions = dict.fromkeys(range(partitions), 0)
    records = 0
    first = 0.0
    with socket.create_connection((host, port), timeout=600) as sock:
        n = 0
        while positions:
            n += 1
            started = time.perf_counter()
            response = _call(sock, n, _fetch_request(positions))
            if n == 1:
                first = time.perf_counter() - started
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
    return records, first


def _served_read(ctx: RunContext, data_dir: Path, partitions: int) -> dict[str, float]:
    """`kcsim serve` on `data_dir`: spawn-to-ready, then a first reader from offset 0 to
    the end (it activates the topic), then a second one."""
    srv = _kcsim(ctx, data_dir)
    out: dict[str, float] = {}
    try:
        srv.start(timeout=600)
        out["ready_s"] = srv.ready_at - srv.started_at
        for reader in ("first", "second"):
            started = time.perf_counter()
            seen, answer = read_to_end("127.0.0.1", srv.port, 50)
            out[f"{reader}_s"] = time.perf_counter() - started
            out[f"{reader}_answer_s"] = answer
            if seen < partitions:
                raise RuntimeError(f"the {reader} reader saw {seen:,} records, "
                                   f"fewer than {partitions:,}")
            out["records"] = seen
    finally:
        srv.stop()
    return out


@workload("offsets_topic_catch_up", "offsets_topic", order=71, in_process=True)
def offsets_topic_catch_up(ctx: RunContext) -> list[Figure]:
    """A reader catching up on __consumer_offsets of 1,000,000 committed partitions."""
    if "kcsim" not in ctx.sides:
        return []
    partitions = record_count(ctx.settings)
    commits = partitions // c.PARTITIONS
    target = at_most(CATCH_UP_TARGET_S, "s") if not ctx.settings.quick else None
    read: dict[str, float] = {}
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
            read = _served_read(ctx, data_dir, partitions)
            extra["read"] = {k: round(v, 3) for k, v in read.items()}
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]offsets_topic_catch_up failed:[/] {error}")
    what = f"{partitions:,} partitions committed {c.PARTITIONS} per OffsetCommit"
    rate = read["records"] / read["second_s"] if read else None
    name = "offsets_topic_catch_up"
    return [
        Figure(name, f"first reader catches up from offset 0, fill included ({what})", "s",
               read.get("first_s"), None, target, kcsim_error=error, extra=extra),
        Figure(name, "  of which its first answer, waiting for the fill", "s",
               read.get("first_answer_s"), None, kcsim_error=error),
        Figure(name, "next reader catches up from offset 0, topic written", "s",
               read.get("second_s"), None, kcsim_error=error),
        Figure(name, "  records read per second", "rec/s", rate, None, kcsim_error=error),
        Figure(name, f"start on that log, topic never read ({partitions:,} partitions)", "s",
               read.get("ready_s"), None, kcsim_error=error),
    ]
