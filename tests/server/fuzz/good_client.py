"""The well-behaved client of a fuzz run: commits and fetches offsets on its own connection.

It runs in its own process, so the fuzzer's threads cannot hold it up. Each
round commits the next offset of a memberless group and reads it back; any
error, wrong answer or closed connection ends it with the reason.

Each wait is measured twice: as seen (wall clock), and as the broker's share
of it. On a shared machine a process can sit runnable but off-CPU for a long
while; the kernel counts that time per thread (/proc/.../schedstat, the run
queue delay), so a wait less the longest such delay of a server thread or this
client's thread over the same span is the time the broker itself took. The run's
limit applies to that share. The report also gives the CPU time the server used
during the call with the largest share: a share much larger than it means the
server was blocked (on the disk, say) rather than busy.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import codec

from .wire import Connection

if TYPE_CHECKING:
    from multiprocessing.connection import Connection as Pipe
    from multiprocessing.synchronize import Event

OFFSET_COMMIT, OFFSET_FETCH = 8, 9
COMMIT_V, FETCH_V = 8, 8
PAUSE_S = 0.005  # between rounds: a steady client, not a second load generator
TICKS = os.sysconf("SC_CLK_TCK")

Commit = codec(OFFSET_COMMIT, "request").cls
Fetch = codec(OFFSET_FETCH, "request").cls


@dataclass
class GoodClientReport:
    rounds: int
    longest_wait_s: float  # as seen
    longest_broker_wait_s: float  # less the time the server or this client was kept off-CPU
    server_cpu_s: float  # the server's CPU time during the call with the longest share
    error: str | None


def run_queue_delay_s(path: str) -> float:
    """Seconds the thread whose schedstat file is `path` has spent runnable but not running."""
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (FileNotFoundError, ProcessLookupError):  # the thread ended
        return 0.0


def thread_delays_s(pid: int) -> dict[str, float]:
    """Run queue delay of each thread of process `pid` (its event loop and worker threads)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return {}
    return {tid: run_queue_delay_s(f"/proc/{pid}/task/{tid}/schedstat") for tid in tids}


def cpu_s(pid: int) -> float:
    """CPU time (user and system) process `pid` has used, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


class Stopwatch:
    """Times calls, and the part of each the broker is answerable for.

    The time taken off is the longest run queue delay any one thread had over the
    call: the server's event loop, a server thread it waited on (one holding the
    GIL, say), or this client. Taking the longest rather than their sum never takes
    off more than one thread spent waiting, so the broker's share is not understated.
    """

    def __init__(self, server_pid: int) -> None:
        self.server_pid = server_pid
        self.client = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self.longest = 0.0
        self.longest_broker = 0.0
        self.server_cpu = 0.0

    def time(self, call: Any) -> Any:
        pid = self.server_pid
        server0, client0, cpu0 = thread_delays_s(pid), run_queue_delay_s(self.client), cpu_s(pid)
        result, waited = call()
        server1, client1, cpu1 = thread_delays_s(pid), run_queue_delay_s(self.client), cpu_s(pid)
        off_cpu = max([client1 - client0,
                       *(delay - server0.get(tid, 0.0) for tid, delay in server1.items())])
        self.longest = max(self.longest, waited)
        if waited - off_cpu > self.longest_broker:
            self.longest_broker = waited - off_cpu
            self.server_cpu = cpu1 - cpu0
        return result


def commit(conn: Connection, group: str, topic: str, offset: int) -> tuple[Any, float]:
    request = Commit(group_id=group, generation_id_or_member_epoch=-1, member_id="",
                     group_instance_id=None, topics=[Commit.OffsetCommitRequestTopic(
                         name=topic, partitions=[Commit.OffsetCommitRequestPartition(
                             partition_index=0, committed_offset=offset,
                             committed_leader_epoch=-1, committed_metadata="")])])
    response, waited = conn.call(OFFSET_COMMIT, COMMIT_V, request)
    code = response.topics[0].partitions[0].error_code
    if code != 0:
        raise AssertionError(f"OffsetCommit of {offset} answered error {code}")
    return None, waited


def fetch(conn: Connection, group: str, topic: str) -> tuple[int, float]:
    request = Fetch(require_stable=False, groups=[Fetch.OffsetFetchRequestGroup(
        group_id=group, topics=[Fetch.OffsetFetchRequestTopics(name=topic,
                                                               partition_indexes=[0])])])
    response, waited = conn.call(OFFSET_FETCH, FETCH_V, request)
    got: Any = response.groups[0]
    part = got.topics[0].partitions[0]
    if got.error_code or part.error_code:
        raise AssertionError(f"OffsetFetch answered error {got.error_code or part.error_code}")
    return int(part.committed_offset), waited


def run(port: int, server_pid: int, group: str, topic: str, stop: Event, out: Pipe) -> None:
    """Commit and fetch until `stop`; send a GoodClientReport down `out`."""
    rounds = 0
    watch = Stopwatch(server_pid)
    error = None
    try:
        with Connection(port, timeout=10.0) as conn:
            while not stop.is_set():
                rounds += 1
                watch.time(partial(commit, conn, group, topic, rounds))
                offset = watch.time(partial(fetch, conn, group, topic))
                if offset != rounds:
                    raise AssertionError(f"fetched offset {offset} after committing {rounds}")
                time.sleep(PAUSE_S)
    except Exception as exc:  # the report carries any failure to the test
        error = f"{type(exc).__name__}: {exc}"
    out.send(GoodClientReport(rounds, watch.longest, watch.longest_broker, watch.server_cpu,
                              error))
    out.close()
