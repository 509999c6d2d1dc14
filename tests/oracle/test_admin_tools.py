"""Kafka's own admin tools (kafka-tools 4.4) give the same output against kcsim as against
Kafka on the same steps: kafka-delete-records (DeleteRecordsCommand, with its JSON offsets
file), kafka-transactions (TransactionsCommand: list, describe, describe-producers, abort)
and kafka-log-dirs (LogDirsCommand --describe).

Each test builds the same topics (and transactions) on both brokers with the same names,
runs the same commands against each, and compares the outputs normalised by
tests/oracle/groupcommand.py (column widths, the broker's address) and, where a value is
the broker's own, by the test (each normalisation says why).
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from .groupcommand import Ran
from .toolcommand import differences, in_columns, tool

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .harness import Endpoint

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"
LOG_DIRS = "org.apache.kafka.tools.LogDirsCommand"
OFFSETS_TOPIC = "__consumer_offsets"
# Long enough that the open transaction outlives the test on both brokers.
TXN_TIMEOUT_MS = 300000


def bootstrap(broker: Endpoint) -> str:
    return f"{broker.host}:{broker.port}"


def create_topics(broker: Endpoint, *topics: NewTopic) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap(broker)})
    for future in admin.create_topics(list(topics)).values():
        future.result(30)


def produce(broker: Endpoint, topic: str, counts: dict[int, int]) -> None:
    """`counts[p]` records into partition p, one batch each (linger 0, flushed one by one)."""
    producer = Producer({"bootstrap.servers": bootstrap(broker), "linger.ms": 0})
    for partition, count in counts.items():
        for i in range(count):
            producer.produce(topic, f"v{i}".encode(), partition=partition)
            assert producer.flush(30) == 0


def transaction(broker: Endpoint, txn_id: str, topic: str, counts: dict[int, int],
                commit: bool) -> Producer:
    """A transactional producer that wrote `counts` records and committed, or left its
    transaction open (the producer is returned so that it stays alive)."""
    producer = Producer({"bootstrap.servers": bootstrap(broker), "transactional.id": txn_id,
                         "transaction.timeout.ms": TXN_TIMEOUT_MS, "linger.ms": 0})
    producer.init_transactions(60)
    producer.begin_transaction()
    for partition, count in counts.items():
        for i in range(count):
            producer.produce(topic, f"t{i}".encode(), partition=partition)
    assert producer.flush(30) == 0
    if commit:
        producer.commit_transaction(60)
    return producer


def run_all(broker: Endpoint, main: str, commands: list[tuple[str, list[str]]],
            cwd: Path, tidy: Callable[[str, Ran], Ran] = lambda _, ran: ran) -> dict[str, Ran]:
    return {name: tidy(name, tool(broker, main, *args, cwd=cwd)) for name, args in commands}


def compare(twin: Endpoint, kafka: Endpoint,
            outputs: Callable[[Endpoint], dict[str, Ran]]) -> None:
    ours, theirs = outputs(twin), outputs(kafka)
    found = differences(ours, theirs)
    assert not found, "\n\n".join(found)


# -- kafka-delete-records -------------------------------------------------------------------


def offsets_file(tmp: Path, name: str, offsets: list[tuple[str, int, int]]) -> str:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "offset": o} for t, p, o in offsets]}))
    return str(path)


def _partitions_sorted(_: str, ran: Ran) -> Ran:
    """The `partition: ...` lines sorted: the tool prints them in the order the broker's
    answer lists them, which in Kafka's is the order of a hash map."""
    head = [line for line in ran.out if not line.startswith("partition: ")]
    return Ran(ran.code, (*head, *sorted(line for line in ran.out if line not in head)), ran.err)


def test_kafka_delete_records_output_is_the_same_against_kcsim(
        twin: Endpoint, kafka: Endpoint, tmp_path: Path) -> None:
    """Moving the log start mid-log and to the high watermark (-1), below the start (it
    stays), past the high watermark, on a compacted topic and on an internal one. Unknown
    partitions are left out: the tool waits its full minute-long time-out on both."""
    suffix = uuid.uuid4().hex[:8]
    topic, compacted = f"tools-dr-{suffix}", f"tools-dr-compacted-{suffix}"
    steps = [
        ("delete", [(topic, 0, 3), (topic, 1, -1)]),
        ("refused", [(topic, 0, 9), (topic, 1, 1), (compacted, 0, 0), (OFFSETS_TOPIC, 0, 0)]),
        ("delete-to-end", [(topic, 0, -1)]),
    ]
    commands = [(name, ["--offset-json-file", offsets_file(tmp_path, name, offsets)])
                for name, offsets in steps]

    def outputs(broker: Endpoint) -> dict[str, Ran]:
        create_topics(broker, NewTopic(topic, 2, 1),
                      NewTopic(compacted, 1, 1, config={"cleanup.policy": "compact"}))
        produce(broker, topic, {0: 5, 1: 3})
        return run_all(broker, DELETE_RECORDS, commands, tmp_path, _partitions_sorted)

    compare(twin, kafka, outputs)


# -- kafka-transactions ---------------------------------------------------------------------


def _time(value: str) -> str:
    """Wall-clock times and durations: each broker's own clock ("-1", none, stays)."""
    return value if value == "-1" else "<time>"


def test_kafka_transactions_output_is_the_same_against_kcsim(
        twin: Endpoint, kafka: Endpoint, tmp_path: Path) -> None:
    """A committed and an open transaction: listing them, describing them and the producers
    of a partition, then aborting the open one from outside, by its start offset on one
    partition and by its producer id on the other (WriteTxnMarkers)."""
    suffix = uuid.uuid4().hex[:8]
    topic, done, open_ = f"tools-txn-{suffix}", f"tools-done-{suffix}", f"tools-open-{suffix}"
    mine = ["--transactional-id-pattern", f".*-{suffix}"]
    partition = ["--topic", topic, "--partition"]
    alive: list[Producer] = []

    def commands(open_pid: str) -> list[tuple[str, list[str]]]:
        # Partition 0: the committed transaction at 0-1, its marker at 2, the open one at 3-4.
        return [
            ("list", ["list", *mine]),
            ("list-longer-than-an-hour", ["list", *mine, "--duration-filter", "3600000"]),
            ("describe-committed", ["describe", "--transactional-id", done]),
            ("describe-open", ["describe", "--transactional-id", open_]),
            ("describe-unknown", ["describe", "--transactional-id", f"tools-none-{suffix}"]),
            ("describe-producers", ["describe-producers", *partition, "0"]),
            ("abort-wrong-start", ["abort", *partition, "0", "--start-offset", "4"]),
            ("abort-by-start", ["abort", *partition, "0", "--start-offset", "3"]),
            ("describe-producers-after-abort", ["describe-producers", *partition, "0"]),
            ("abort-by-producer", ["abort", *partition, "1", "--producer-id", open_pid,
                                   "--producer-epoch", "0", "--coordinator-epoch", "0"]),
            ("describe-producers-other-after-abort", ["describe-producers", *partition, "1"]),
            ("describe-open-after-abort", ["describe", "--transactional-id", open_]),
        ]

    def outputs(broker: Endpoint) -> dict[str, Ran]:
        create_topics(broker, NewTopic(topic, 2, 1))
        transaction(broker, done, topic, {0: 2}, commit=True)
        alive.append(transaction(broker, open_, topic, {0: 2, 1: 1}, commit=False))
        listed = tool(broker, TRANSACTIONS, "list", *mine, cwd=tmp_path)
        # Producer ids are each broker's to hand out (kcsim's start at 1000, Kafka's at 0):
        # each is named by the transactional id that holds it.
        pids = {words[2]: f"<pid of {words[0]}>"
                for words in (line.split(" ") for line in listed.out[1:])}
        open_pid = next(pid for pid, name in pids.items() if open_ in name)
        columns = {"ProducerId": lambda v: pids.get(v, v),
                   "CurrentTransactionStartTimeMs": _time, "TransactionDurationMs": _time,
                   "LastTimestamp": _time}

        def tidy(name: str, ran: Ran) -> Ran:
            ran = in_columns(ran, columns)
            # Kafka's coordinator lists transactions in the order of its hash map.
            return Ran(ran.code, (*ran.out[:1], *sorted(ran.out[1:])), ran.err) \
                if name.startswith("list") else ran

        return run_all(broker, TRANSACTIONS, commands(open_pid), tmp_path, tidy)

    compare(twin, kafka, outputs)


# -- kafka-log-dirs -------------------------------------------------------------------------


def _log_dirs(_: str, ran: Ran) -> Ran:
    """The JSON line with each broker's own log directory path replaced, and each partition's
    size in bytes compared only as empty or not: Kafka counts its segment files (with batch
    layouts of its own), kcsim the batches it keeps."""
    out = []
    for line in ran.out:
        if line.startswith("{"):
            answer: dict[str, Any] = json.loads(line)
            for broker in answer["brokers"]:
                for log_dir in broker["logDirs"]:
                    log_dir["logDir"] = "<log dir>"
                    for p in log_dir["partitions"]:
                        p["size"] = "<size>" if p["size"] > 0 else p["size"]
            line = json.dumps(answer)
        out.append(line)
    return Ran(ran.code, tuple(out), ran.err)


def test_kafka_log_dirs_output_is_the_same_against_kcsim(
        twin: Endpoint, kafka: Endpoint, tmp_path: Path) -> None:
    """The partitions of the topics asked for (an empty one among them), a topic that does
    not exist, and a broker that does not exist."""
    suffix = uuid.uuid4().hex[:8]
    topic, empty = f"tools-dirs-{suffix}", f"tools-dirs-empty-{suffix}"
    commands = [
        ("describe", ["--describe", "--topic-list", f"{topic},{empty}"]),
        ("describe-missing-topic", ["--describe", "--topic-list", f"{topic}-missing",
                                    "--broker-list", "1"]),
        ("describe-missing-broker", ["--describe", "--broker-list", "2"]),
    ]

    def outputs(broker: Endpoint) -> dict[str, Ran]:
        create_topics(broker, NewTopic(topic, 3, 1), NewTopic(empty, 1, 1))
        produce(broker, topic, {0: 4, 2: 1})
        return run_all(broker, LOG_DIRS, commands, tmp_path, _log_dirs)

    compare(twin, kafka, outputs)
