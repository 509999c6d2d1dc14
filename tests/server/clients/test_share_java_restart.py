"""Share groups (KIP-932) across a crash: kcsim SIGKILLed in the middle of a share
group's work and started again on the same data dir and port, with Java's
KafkaShareConsumer (java_share/ShareWorker.java, as in test_share_java.py).

At the crash one consumer (the holder) holds records it acquired and never acknowledged,
some of them on their second delivery after it released them once; the other (the
acceptor) has every other record accepted, each acceptance answered (its acknowledgement
callback said so). The holder dies with the broker; the acceptor is the same process
throughout, riding through the crash as a client of a real broker would. Afterwards it
gets exactly the held records back and no accepted one.

A record's delivery count after the restart is its written count plus one: the release
was written, the acquisition the crash cut short was not (a share partition writes its
state when records are acknowledged or released, never when they are acquired, as in
Kafka), so a held record comes back with the delivery count it was held with.

The record lock lasts longer than the test may wait: held records come back because the
restart frees them, not because their lock ran out. kcsim writes before it answers
(the default fsync setting), so an answered acceptance is on disk when the acceptor
hears of it.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.admin import AdminClient, SharePartitionOffset, TopicPartition

from .test_control_http import CONTROL, Control
from .test_share_java import WAIT_S, JavaShare, Worker

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.java, pytest.mark.timeout(120)]

RECORDS = 200
LOCK_MS = 10 * int(WAIT_S * 1000)  # no held record is freed by its lock while a test waits


class Served:
    """A `kcsim serve` subprocess as `Share` asks of a broker (its bootstrap and the
    control API's request waits), which the test can crash and start again."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.control = self._control()

    def _control(self) -> Control:
        found = CONTROL.search(self.server.ready_line)
        assert found, f"no control API in the ready line: {self.server.ready_line}"
        return Control(found.group(1))

    @property
    def bootstrap(self) -> str:
        return str(self.server.bootstrap)

    def last_request_seq(self) -> int:
        return self.control.last_seq()

    def wait_for_request(self, api: int, *, client_id: str, since: int, timeout: float) -> None:
        self.control.wait_request(api=api, client_id=client_id, since=since, timeout=timeout)

    def wait_for_share_partition(self, group: str, topic: str, *, timeout: float) -> None:
        """Until a member fetched the group's partition 0 of `topic` (it has a start offset)."""
        deadline = time.monotonic() + timeout
        with AdminClient(self.bootstrap) as admin:
            while admin.list_share_group_offsets({group: [TopicPartition(topic, 0)]})[group].get(
                    TopicPartition(topic, 0), SharePartitionOffset(-1)).start_offset < 0:
                assert time.monotonic() < deadline, f"no member fetched {topic} of {group}"
                time.sleep(0.05)

    def crash_and_start_again(self, also_dies: Worker) -> None:
        """SIGKILL the server (and `also_dies`'s JVM), then start it on its data dir and port."""
        proc, self.server.proc = self.server.proc, None
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        also_dies.proc.kill()
        also_dies.proc.wait(10)
        self.server.start()
        self.control = self._control()


def acked(worker: Worker) -> Counter[int]:
    """How often each offset's acknowledgement by `worker` was answered as done."""
    with worker.changed:
        return Counter(o for offsets, failed in worker.acked if failed is None for o in offsets)


def test_a_crash_loses_no_answered_acceptance_and_brings_back_every_held_record(
        kcsim_factory: Any, tmp_path: Path) -> None:
    broker = Served(kcsim_factory(control_port=0, share_group_record_lock_duration_ms=LOCK_MS))
    share = JavaShare(broker, lambda name, mode, changed: Worker(
        broker.bootstrap, name, mode, tmp_path / f"{name}.log", changed), WAIT_S)
    try:
        (holder,) = share.start(1)
        holder.tell("release-then-stall")
        share.produce(RECORDS // 2)
        share.wait("the holder holds a batch on its second delivery", lambda: holder.stalled)
        (acceptor,) = share.start(1)
        share.produce(RECORDS // 2)
        held = {e["offset"]: e["delivery"] for e in holder.seen if e["action"] == "stall"}
        share.wait("every record not held accepted",
                   lambda: set(acked(acceptor)) == set(range(RECORDS)) - set(held))
        accepted, released = acked(acceptor), acked(holder)
        before = len(acceptor.seen)

        broker.crash_and_start_again(also_dies=holder)
        share.wait("the held records accepted after the restart",
                   lambda: set(acked(acceptor)) == set(range(RECORDS)))

        again = [(e["offset"], e["delivery"]) for e in acceptor.seen[before:]]
        assert Counter(o for o, _ in again) == Counter(held.keys())  # each held one once, no other
        assert dict(again) == {o: released[o] + 1 for o in held} == held
        assert 2 in held.values()  # the released and held again kept their written count
        assert max(accepted.values()) == max(acked(acceptor).values()) == 1
        assert [f for w in (holder, acceptor) for _, f in w.acked if f is not None] == []
    finally:
        share.close()
