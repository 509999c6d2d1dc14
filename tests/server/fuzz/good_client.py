"""The well-behaved client of a fuzz run: commits and fetches offsets on its own connection.

It runs in its own process, so the fuzzer's threads cannot hold it up. Each
round commits the next offset of a memberless group and reads it back; any
error, wrong answer or closed connection ends it with the reason.

Each wait is measured twice: as seen (wall clock), and as the broker's share
of it. On a shared machine a process can sit runnable but off-CPU for a long
while; the kernel counts that time per thread (/proc/.../schedstat, the run
queue delay), so a wait less the longest such delay of the server's event-loop
thread or this client's thread over the same span is the time the broker itself
took. The run's limit applies to that share.
"""

from __future__ import annotations

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

Commit = codec(OFFSET_COMMIT, "request").cls
Fetch = codec(OFFSET_FETCH, "request").cls


@dataclass
class GoodClientReport:
    rounds: int
    longest_wait_s: float  # as seen
    longest_broker_wait_s: float  # less the time the server or this client was kept off-CPU
    error: str | None


def run_queue_delay_s(path: str) -> float:
    """Seconds the thread whose schedstat file is `path` has spent runnable but not running."""
    with open(path) as f:
        return int(f.read().split()[1]) / 1e9


class Stopwatch:
    """Times calls, and the part of each the broker is answerable for."""

    def __init__(self, server_pid: int) -> None:
        self.server = f"/proc/{server_pid}/task/{server_pid}/schedstat"
        self.client = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self.longest = 0.0
        self.longest_broker = 0.0

    def time(self, call: Any) -> Any:
        server0, client0 = run_queue_delay_s(self.server), run_queue_delay_s(self.client)
        result, waited = call()
        off_cpu = max(run_queue_delay_s(self.server) - server0,
                      run_queue_delay_s(self.client) - client0)
        self.longest = max(self.longest, waited)
        self.longest_broker = max(self.longest_broker, waited - off_cpu)
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
    out.send(GoodClientReport(rounds, watch.longest, watch.longest_broker, error))
    out.close()
