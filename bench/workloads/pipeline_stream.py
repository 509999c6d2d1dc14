"""The live Spark source: from an offset commit to its row in a streaming query's output.

- pipeline_stream: `kcsim serve` runs; a Spark driver of its own (`local[2]`, a child
  process, as the pipeline workload's) runs `readStream.format("kcsim")` on the server's
  data directory with a 500 ms processing-time trigger and a `foreachBatch` sink that
  notes when each offset commit's row arrives. The child commits `COMMITS` offsets of
  one group, one at a time and `GAP_S` apart (a confluent-kafka consumer's synchronous
  commit), and measures each from just before the commit is sent to its row. A first,
  unmeasured commit waits for the query's Python workers to start.

Target: the median latency under 2 s (the trigger alone adds up to 500 ms).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..registry import Figure, at_most, workload
from .pipeline import spark_child

if TYPE_CHECKING:
    from ..harness import RunContext

COMMITS = 40
GAP_S = 0.25
TRIGGER = "500 milliseconds"
LATENCY_TARGET_MS = 2000
TOPIC = "stream-latency"
GROUP = "stream-latency"
CHILD_TIMEOUT_S = 600


@workload("pipeline_stream", "pipeline_stream", order=72, in_process=True)
def pipeline_stream(ctx: RunContext) -> list[Figure]:
    """Streaming source latency: an offset commit to its row in the query (500 ms trigger)."""
    if "kcsim" not in ctx.sides:
        return []
    values: dict[str, float] = {}
    extra: dict[str, Any] = {"commits": COMMITS, "trigger": TRIGGER}
    error: str | None = None
    try:
        with ctx.kcsim() as srv:
            srv.start()
            data_dir = srv.argv[srv.argv.index("--data-dir") + 1]
            ctx.log(f"pipeline_stream: {COMMITS} commits against {srv.host}:{srv.port}")
            run = _child(data_dir, f"{srv.host}:{srv.port}")
        latencies = run["latencies_ms"]
        extra.update(run)
        ctx.log(f"pipeline_stream: median batch steps (ms) {run['batch_steps_ms']}")
        values["p50"] = statistics.median(latencies)
        values["max"] = max(latencies)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        ctx.log(f"[red]pipeline_stream failed:[/] {error}")

    def fig(key: str, metric: str, target: Any = None, more: bool = False) -> Figure:
        return Figure("pipeline_stream", metric, "ms", values.get(key), None, target,
                      kcsim_error=None if key in values else error or "not measured",
                      extra=extra if more else {})

    return [fig("p50", "commit to streamed row, median", at_most(LATENCY_TARGET_MS, "ms"),
                more=True),
            fig("max", "commit to streamed row, slowest")]


def _child(data_dir: str, bootstrap: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kcsim-bench-stream-") as work:
        return spark_child("bench.workloads.pipeline_stream", [data_dir, bootstrap, work],
                           Path(work) / "result.json", "streaming run", CHILD_TIMEOUT_S)


def _run_child(data_dir: str, bootstrap: str, work: str, result: str) -> None:
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from kcsim.pipeline.session import spark_session

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    spark = spark_session("local[2]", "kcsim-bench-stream", {
        "spark.ui.enabled": "false", "spark.driver.memory": "1g",
        "spark.sql.shuffle.partitions": "2"})
    spark.sparkContext.setLogLevel("ERROR")
    arrived: dict[int, float] = {}  # committed offset -> when its row reached the sink
    done = threading.Event()

    def sink(frame: Any, _batch_id: int) -> None:
        rows = frame.where(f"record_type = 'offset_commit' AND `group` = '{GROUP}'").select(
            "offset").collect()
        now = time.time()  # the rows are out: read, decoded, in the driver
        for row in rows:
            arrived.setdefault(row.offset, now)
        if len(arrived) > COMMITS:
            done.set()

    query = (spark.readStream.format("kcsim")
             .load(data_dir).writeStream.foreachBatch(sink)
             .option("checkpointLocation", os.path.join(work, "checkpoint"))
             .trigger(processingTime=TRIGGER).start())
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                         "enable.auto.commit": False})
    # a first commit warms the query up (its Python workers start), unmeasured
    consumer.commit(offsets=[TopicPartition(TOPIC, 0, 0)], asynchronous=False)
    deadline = time.monotonic() + CHILD_TIMEOUT_S / 2
    while 0 not in arrived:
        if query.exception() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the query did not start: {query.exception()}")
        time.sleep(0.1)
    sent: dict[int, float] = {}
    for offset in range(1, COMMITS + 1):
        sent[offset] = time.time()
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, offset)], asynchronous=False)
        time.sleep(GAP_S)
    finished = done.wait(60)
    progress = [p["durationMs"] for p in query.recentProgress if p["numInputRows"]]
    query.stop()
    consumer.close()
    spark.stop()
    if not finished:
        raise RuntimeError(f"{len(arrived)} of {COMMITS} commits reached the stream in 60 s")
    latencies = [round((arrived[o] - sent[o]) * 1000, 1) for o in sorted(sent)]
    steps = {step: statistics.median(p.get(step, 0) for p in progress)
             for step in sorted({s for p in progress for s in p})}
    Path(result).write_text(json.dumps({"latencies_ms": latencies, "batch_steps_ms": steps}))


if __name__ == "__main__":
    _run_child(*sys.argv[1:5])
