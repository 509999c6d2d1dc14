"""Transactions through the Java client (kafka-clients 3.9 and 4.x) over real sockets: a
consume-transform-produce loop with sendOffsetsToTransaction, fencing by a second
producer with the same transactional id, and a transaction left open past its timeout.

One JVM per test runs java/TxnDriver.java against the in-process broker (`kcsim`); what
the Java side did is checked from the outside with a Python read_committed consumer.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from .javaclient import classpath, run, skip_without_java
from .txnkit import latest_offsets, read_values

pytestmark = [pytest.mark.java, pytest.mark.timeout(180)]
COUNT = 6


@pytest.fixture(autouse=True)
def _java() -> None:
    skip_without_java()


def assert_transaction_path(kcsim: Any, java_version: str, level: int) -> None:
    """A Java 4.x producer takes transactions v2 where it is finalized (KIP-890 part 2):
    its batches and offsets join the transaction by themselves and every EndTxn bumps
    the epoch; elsewhere, and always from a 3.9 client, partitions and groups are added
    explicitly."""
    ends = kcsim.requests("EndTxn")
    assert ends and not any(r.errors for r in ends)
    if level >= 2 and not java_version.startswith("3."):
        assert kcsim.requests("AddPartitionsToTxn") == []
        assert kcsim.requests("AddOffsetsToTxn") == []
        assert {r.version for r in ends} == {5}
        assert min(r.version for r in kcsim.requests("TxnOffsetCommit")) >= 5
    else:
        assert kcsim.requests("AddPartitionsToTxn")
        assert kcsim.requests("AddOffsetsToTxn")
        assert max(r.version for r in ends) <= 4


@pytest.mark.parametrize("transaction_version", [
    pytest.param(2, id="txn-v2"),
    pytest.param(1, id="txn-v1", marks=pytest.mark.kcsim(feature=["transaction.version=1"])),
])
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_consume_transform_produce_commits_and_aborts_in_turn(
        kcsim: Any, unique_name: Any, java_version: str, protocol: str,
        transaction_version: int) -> None:
    """Each input record is processed in an aborted transaction, then in a committed one:
    a read_committed reader sees each output exactly once, and the group's offset moves
    only when a transaction commits; in a classic group and in a KIP-848 one (whose member
    epoch the offsets are checked against); on transactions v2 and pinned to v1."""
    source, sink, group = unique_name("in"), unique_name("out"), unique_name("g")
    done = run("TxnDriver", "loop", kcsim.bootstrap, source, sink, group, unique_name("tx"),
               str(COUNT), protocol, version=java_version, timeout=150)
    assert done.returncode == 0, done.stderr[-4000:]
    steps = [line for line in done.stdout.splitlines() if line.startswith(("commit", "abort"))]
    assert done.stdout.splitlines()[-1] == "done"
    expected = []
    for i in range(COUNT):
        expected += [f"abort {i} committed={i if i else -1}", f"commit {i} committed={i + 1}"]
    assert steps == expected
    assert read_values(kcsim.bootstrap, sink) == [f"out-v{i}" for i in range(COUNT)]
    # Uncommitted reads see what aborted transactions wrote too (as far as the client sent it).
    uncommitted = read_values(kcsim.bootstrap, sink, committed_only=False)
    assert len(uncommitted) >= COUNT and set(uncommitted) == {f"out-v{i}" for i in range(COUNT)}
    assert kcsim.committed(group) == {(source, 0): COUNT}
    sent = kcsim.requests("TxnOffsetCommit", group=group)
    assert len(sent) == 2 * COUNT and not any(r.errors for r in sent)
    assert_transaction_path(kcsim, java_version, transaction_version)


def test_a_second_producer_with_the_same_id_fences_the_first(
        kcsim: Any, unique_name: Any, java_version: str) -> None:
    sink = unique_name("out")
    done = run("TxnDriver", "fence", kcsim.bootstrap, sink, unique_name("tx"),
               version=java_version, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.splitlines() == ["fenced ProducerFencedException", "second committed"]
    assert read_values(kcsim.bootstrap, sink) == ["second"]


def test_a_transaction_left_open_past_its_timeout_is_aborted(
        kcsim: Any, unique_name: Any, java_version: str) -> None:
    sink = unique_name("out")
    cmd = ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
           classpath(java_version), "TxnDriver", "hang", kcsim.bootstrap, sink,
           unique_name("tx"), "60000"]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True) as java:
        try:
            assert java.stdout is not None and java.stdin is not None
            assert java.stdout.readline().strip() == "open"
            kcsim.clock.freeze()  # from here the broker's time moves only when advanced
            stable, end = latest_offsets(kcsim.bootstrap, sink)
            assert (stable, end) == (0, 1)  # the open transaction holds the last stable offset
            kcsim.clock.advance(50_000)  # less than the timeout, whatever real time passed
            assert latest_offsets(kcsim.bootstrap, sink) == (0, 1)
            kcsim.clock.advance(10_000)  # past it
            kcsim.clock.resume()  # long-poll fetches wait on the broker's clock
            stable, end = latest_offsets(kcsim.bootstrap, sink)
            assert stable == end == 2  # the record and the abort marker
            assert read_values(kcsim.bootstrap, sink) == []
            java.stdin.write("commit\n")
            java.stdin.flush()
            out, err = java.communicate(timeout=60)
        finally:
            if java.poll() is None:
                java.kill()
    assert out.strip().startswith("commit failed"), err[-4000:]
