"""A fuzz run against a `kcsim serve` subprocess, and what makes it fail.

Worker threads, each with its own seeded mutator, send mutated frames over
connections of their own: one frame, then a short wait for its answer; a
connection the server closes, or that stays silent, is dropped and a new one
opened. Meanwhile a good client (its own process) commits and fetches offsets,
and the main thread probes liveness on fresh connections and samples the
server's RSS. The run fails if the server dies, a probe fails, the good client
errs or waits longer than GOOD_WAIT_LIMIT_S, the RSS grows past
RSS_GROWTH_LIMIT over its size after warm-up, or the server logs an error.
"""

from __future__ import annotations

import heapq
import multiprocessing
import random
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import codec

from . import good_client
from .frames import FETCH, TOPICS, seeds, session_seeds
from .mutate import Mutator
from .wire import SIZE, Connection

if TYPE_CHECKING:
    import uuid
    from pathlib import Path

    from tests.conftest import KcsimProcess

# The good client's longest acceptable wait for any answer, less the time the kernel kept
# the server's event loop or the client runnable but off-CPU (see good_client).
GOOD_WAIT_LIMIT_S = 0.100
RSS_GROWTH_LIMIT = 64 * 1024 * 1024  # over the server's RSS after warm-up
WORKERS = 12
ANSWER_WAIT_S = 0.05  # a fuzz connection silent this long is dropped
PROBE_EVERY_S = 1.0
PROBE_TIMEOUT_S = 10.0
RECENT = 16  # frames kept per worker for the failure report
SLOWEST = 5  # answered frames kept per worker by how long their answer took
GOOD_TOPIC = "good-topic"
BAD_LOG_LINE = re.compile(r"Traceback|\bERROR\b|\bCRITICAL\b")

API_VERSIONS, METADATA, CREATE_TOPICS = 18, 3, 19


@dataclass
class FuzzResult:
    seed: int
    frames: int = 0
    seconds: float = 0.0
    rss_before: int = 0  # after warm-up
    rss_after: int = 0
    rss_peak: int = 0
    good_rounds: int = 0
    good_longest_wait_s: float = 0.0  # as the good client saw it
    good_longest_broker_wait_s: float = 0.0  # less time the OS kept server or client off-CPU
    good_server_cpu_s: float = 0.0  # the server's CPU time during that wait
    probes: int = 0
    dropped_connections: int = 0
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        mib = 1024 * 1024
        rate = self.frames / self.seconds if self.seconds else 0.0
        return (f"fuzz seed={self.seed}: {self.frames} frames in {self.seconds:.1f}s"
                f" ({rate:.0f} frames/s), {self.dropped_connections} connections dropped;"
                f" server RSS {self.rss_before / mib:.1f} MiB after warm-up,"
                f" {self.rss_after / mib:.1f} MiB at the end (peak {self.rss_peak / mib:.1f});"
                f" good client {self.good_rounds} rounds, longest wait"
                f" {self.good_longest_wait_s * 1000:.1f} ms as seen,"
                f" {self.good_longest_broker_wait_s * 1000:.1f} ms the broker's (server CPU"
                f" {self.good_server_cpu_s * 1000:.0f} ms meanwhile);"
                f" {self.probes} liveness probes")


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def served_versions(port: int) -> dict[int, tuple[int, int]]:
    request = codec(API_VERSIONS, "request").cls(client_software_name="fuzz",
                                                  client_software_version="1")
    with Connection(port) as conn:
        response, _ = conn.call(API_VERSIONS, 3, request)
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def create_topics(port: int, names: list[str]) -> dict[str, uuid.UUID]:
    """Create the fuzz vocabulary's topics and the good client's; return their ids."""
    create = codec(CREATE_TOPICS, "request").cls
    meta = codec(METADATA, "request").cls
    with Connection(port) as conn:
        conn.call(CREATE_TOPICS, 7, create(timeout_ms=5000, topics=[
            create.CreatableTopic(name=n, num_partitions=3, replication_factor=1)
            for n in names]))
        response, _ = conn.call(METADATA, 12, meta(
            topics=[meta.MetadataRequestTopic(name=n) for n in names],
            allow_auto_topic_creation=False))
    return {t.name: t.topic_id for t in response.topics}


def open_fetch_sessions(port: int, topic_ids: dict[str, uuid.UUID],
                        served: tuple[int, int]) -> list[tuple[int, int]]:
    """Fetch sessions opened by full fetches of the fuzz topics: (id, version) each."""
    fetch = codec(FETCH, "request").cls
    opened = []
    with Connection(port) as conn:
        for version in sorted({max(7, served[0]), 12, 13, served[1]}):
            by_id = version >= 13
            request = fetch(max_wait_ms=0, min_bytes=0, session_id=0, session_epoch=0, topics=[
                fetch.FetchTopic(topic="" if by_id else name, topic_id=topic_ids[name],
                                 partitions=[fetch.FetchPartition(partition=p,
                                                                  partition_max_bytes=1 << 16)
                                             for p in range(3)])
                for name in TOPICS])
            response, _ = conn.call(FETCH, version, request)
            if response.session_id:
                opened.append((response.session_id, version))
    if not opened:
        raise AssertionError("no fetch session was opened")
    return opened


def probe(port: int, topic: str | None = GOOD_TOPIC) -> None:
    """A fresh connection gets ApiVersions and Metadata (of `topic`, or of all) answered."""
    request = codec(API_VERSIONS, "request").cls(client_software_name="probe",
                                                  client_software_version="1")
    with Connection(port, timeout=PROBE_TIMEOUT_S) as conn:
        versions, _ = conn.call(API_VERSIONS, 3, request)
        if versions.error_code != 0:
            raise AssertionError(f"ApiVersions answered error {versions.error_code}")
        meta = codec(METADATA, "request").cls
        topics = None if topic is None else [meta.MetadataRequestTopic(name=topic)]
        answer, _ = conn.call(METADATA, 12, meta(topics=topics, allow_auto_topic_creation=False))
        if not answer.brokers or any(t.error_code for t in answer.topics):
            raise AssertionError(f"Metadata answered {answer}")


class Worker(threading.Thread):
    """Sends its share of mutated frames, one at a time, over connections of its own."""

    def __init__(self, index: int, seed: int, frames: int, port: int, mutator: Mutator,
                 stop: threading.Event, sent: list[int]) -> None:
        super().__init__(name=f"fuzz-{index}", daemon=True)
        self.index = index
        self.frames = frames
        self.port = port
        self.mutator = mutator
        self.stop = stop
        self.sent = sent
        self.recent: deque[tuple[str, bytes]] = deque(maxlen=RECENT)
        self.slowest: list[tuple[float, str, str]] = []  # (seconds, how, frame hex), a heap
        self.dropped = 0
        self.error: str | None = None

    def run(self) -> None:
        sock: socket.socket | None = None
        try:
            for _ in range(self.frames):
                if self.stop.is_set():
                    break
                frame, how = self.mutator.frame()
                self.recent.append((how, frame))
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", self.port), timeout=5.0)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                started = time.monotonic()
                answered = exchange(sock, frame)
                if answered:
                    self._note(time.monotonic() - started, how, frame)
                else:
                    sock.close()
                    sock = None
                    self.dropped += 1
                self.sent[self.index] += 1
        except OSError as exc:  # connecting failed: the server is gone or refusing
            self.error = f"worker {self.index} could not connect: {exc!r}"
        finally:
            if sock is not None:
                sock.close()


    def _note(self, seconds: float, how: str, frame: bytes) -> None:
        """Keep the SLOWEST answers: what the server spent its time on."""
        entry = (seconds, how, frame[:512].hex())
        if len(self.slowest) < SLOWEST:
            heapq.heappush(self.slowest, entry)
        elif seconds > self.slowest[0][0]:
            heapq.heapreplace(self.slowest, entry)


def exchange(sock: socket.socket, frame: bytes) -> bool:
    """Send a frame and read one answer; False if the connection closed or stayed silent."""
    try:
        sock.settimeout(5.0)
        sock.sendall(frame)
        sock.settimeout(ANSWER_WAIT_S)
        head = _exact(sock, 4)
        if head is None:
            return False
        (size,) = SIZE.unpack(head)
        return _exact(sock, size) is not None
    except OSError:  # reset, broken pipe or silent past the wait
        return False


def _exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class FuzzRun:
    """One seeded run of `frames` frames against `server`."""

    def __init__(self, server: KcsimProcess, frames: int, seed: int, report_dir: Path) -> None:
        self.server = server
        self.frames = frames
        self.seed = seed
        self.report_dir = report_dir
        self.result = FuzzResult(seed=seed)
        self.warmup = max(2000, frames // 10)

    @property
    def pid(self) -> int:
        assert self.server.proc is not None
        return self.server.proc.pid

    def run(self) -> FuzzResult:
        port = self.server.port
        served = served_versions(port)
        topic_ids = create_topics(port, [*TOPICS, GOOD_TOPIC])
        seed_frames = seeds(served, topic_ids, random.Random(self.seed))
        seed_frames += session_seeds(open_fetch_sessions(port, topic_ids, served[FETCH]),
                                     topic_ids, random.Random(self.seed))
        stop = threading.Event()
        sent = [0] * WORKERS
        share, extra = divmod(self.frames, WORKERS)
        workers = [
            Worker(i, self.seed, share + (i < extra), port,
                   Mutator(random.Random(f"{self.seed}/{i}"), seed_frames, served), stop, sent)
            for i in range(WORKERS)]
        ctx = multiprocessing.get_context("spawn")
        good_stop = ctx.Event()
        report_in, report_out = ctx.Pipe(duplex=False)
        good = ctx.Process(target=good_client.run, name="good-client", daemon=True,
                           args=(port, self.pid, f"good-{self.seed}", GOOD_TOPIC, good_stop,
                                 report_out))
        good.start()
        log_start = len(self.server.stderr())
        started = time.monotonic()
        try:
            for w in workers:
                w.start()
            self._watch(workers, sent, good)
        finally:
            stop.set()
            for w in workers:
                w.join(timeout=30)
            self.result.seconds = time.monotonic() - started
            self.result.frames = sum(sent)
            self.result.dropped_connections = sum(w.dropped for w in workers)
            good_stop.set()
            self._collect_good(good, report_in)
        self._finish(workers, log_start)
        return self.result

    def _watch(self, workers: list[Worker], sent: list[int], good: Any) -> None:
        """Probe, sample and check until the workers are done or something failed."""
        result = self.result
        next_probe = time.monotonic()
        while any(w.is_alive() for w in workers):
            time.sleep(0.05)
            if not self.server.running:
                result.failures.append("the server process died")
                return
            rss = rss_bytes(self.pid)
            result.rss_peak = max(result.rss_peak, rss)
            if not result.rss_before and sum(sent) >= self.warmup:
                result.rss_before = rss
            if result.rss_before and rss > result.rss_before + RSS_GROWTH_LIMIT:
                result.failures.append(f"server RSS grew to {rss >> 20} MiB from"
                                       f" {result.rss_before >> 20} MiB after warm-up")
                return
            if not good.is_alive():
                return  # its report says why
            if time.monotonic() >= next_probe:
                try:
                    probe(self.server.port)
                except (OSError, AssertionError, ValueError) as exc:
                    result.failures.append(f"liveness probe failed: {exc!r}")
                    return
                result.probes += 1
                next_probe = time.monotonic() + PROBE_EVERY_S

    def _collect_good(self, good: Any, report_in: Any) -> None:
        report = report_in.recv() if report_in.poll(15) else None
        good.join(timeout=5)
        if report is None:
            self.result.failures.append("the good client sent no report")
            return
        self.result.good_rounds = report.rounds
        self.result.good_longest_wait_s = report.longest_wait_s
        self.result.good_longest_broker_wait_s = report.longest_broker_wait_s
        self.result.good_server_cpu_s = report.server_cpu_s
        if report.error:
            self.result.failures.append(f"the good client failed: {report.error}")
        if report.longest_broker_wait_s > GOOD_WAIT_LIMIT_S:
            self.result.failures.append(
                f"the good client waited {report.longest_broker_wait_s * 1000:.0f} ms on the"
                f" broker for an answer (limit {GOOD_WAIT_LIMIT_S * 1000:.0f} ms; as seen"
                f" {report.longest_wait_s * 1000:.0f} ms)")

    def _finish(self, workers: list[Worker], log_start: int) -> None:
        result = self.result
        if self.server.running:
            result.rss_after = rss_bytes(self.pid)
            try:
                probe(self.server.port)
                result.probes += 1
            except (OSError, AssertionError, ValueError) as exc:
                result.failures.append(f"liveness probe after the run failed: {exc!r}")
        elif "the server process died" not in result.failures:
            result.failures.append("the server process died")
        if not result.rss_before:
            result.rss_before = result.rss_after
        result.failures += [w.error for w in workers if w.error and self.server.running]
        bad = [line for line in self.server.stderr()[log_start:].splitlines()
               if BAD_LOG_LINE.search(line)]
        if bad:
            result.failures.append(f"the server logged {len(bad)} error lines, first:"
                                   f" {bad[0]}")
        if result.failures:
            self._dump(workers)

    def _dump(self, workers: list[Worker]) -> None:
        """The last frames of every worker, for finding the one at fault."""
        path = self.report_dir / f"fuzz-{self.seed}-recent-frames.txt"
        with open(path, "w") as out:
            for w in workers:
                for how, frame in w.recent:
                    out.write(f"worker {w.index}\t{how}\t{frame.hex()}\n")
        self.result.failures.append(f"recent frames of every worker: {path}")
        slowest = heapq.nlargest(SLOWEST, (e for w in workers for e in w.slowest))
        self.result.failures += [f"slow answer: {seconds * 1000:.0f} ms for {how}: {hexed}"
                                 for seconds, how, hexed in slowest]
