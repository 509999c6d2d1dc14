"""Log maintenance: retention and the log cleaner of the topics, on a timer by the broker's clock.

Every `log_retention_check_interval_ms` (Kafka's log.retention.check.interval.ms) of
the broker's clock (so a test's `clock.advance` brings it forward), each partition of
each topic but `__consumer_offsets` (compacted with kcsim's own record log) is looked
at once, in turn: its active segment rolled if older than segment.ms, its oldest
segments deleted as retention says, its closed segments cleaned when compaction is
due (`server/state/log_policy.py` decides; `kcsim.storage.clean_segments` cleans).

File work (deleting, reading and writing segments) runs in a worker thread, as the
record log's compaction does (`GroupCommitWriter`); what the broker's state holds
(the partition's index, an in-memory store's batches) changes on the trio thread.
A test runs the same pass at once, whatever is due (`run_now`, the control
`run_log_maintenance`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from kcsim.coordinator.kafka_format import OFFSETS_TOPIC
from kcsim.storage import StorageError, clean_partition, clean_segments

from .state.log_cleaner import KafkaBatches
from .state.log_policy import (
    cleanable_segments,
    cleaning_due,
    retention_start,
    roll_due,
    topic_policy,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from .shell.clock import Clock
    from .state.broker_state import BrokerState
    from .state.log_policy import TopicPolicy
    from .state.topics import Partition

log = logging.getLogger("kcsim.log_maintenance")


@dataclass
class MaintenanceReport:
    """What one pass did: partitions whose log start retention moved, partitions cleaned."""

    retention: list[dict[str, Any]] = field(default_factory=list)
    cleaned: list[dict[str, Any]] = field(default_factory=list)


class LogMaintenance:
    """The timer of retention and the log cleaner, and the pass they run."""

    def __init__(self, state: BrokerState, clock: Clock, changed: Callable[[], None]) -> None:
        self.state = state
        self.clock = clock
        self._changed = changed
        self.interval_ms = state.config.log_retention_check_interval_ms
        self._next_ms: int | None = None
        self._scope: trio.CancelScope | None = None
        self._lock = trio.Lock()
        self.passes = 0

    async def run(self) -> None:
        """Run a pass every interval of the broker's clock, until cancelled."""
        self._next_ms = self.clock.now_ms() + self.interval_ms
        while True:
            with trio.CancelScope() as scope:
                self._scope = scope
                scope.deadline = self.clock.to_trio(self._next_ms)
                await trio.sleep_forever()
            self._scope = None
            now = self.clock.now_ms()
            if now >= self._next_ms:
                self._next_ms = now + self.interval_ms
                try:
                    await self.run_now(force=False)
                except Exception:  # the broker serves on; the next check tries again
                    log.exception("log maintenance failed; it runs again in %d ms",
                                  self.interval_ms)

    def rearm(self) -> None:
        """The clock moved (a test advanced it): wake at the check's new place in trio time."""
        if self._scope is not None and self._next_ms is not None:
            self._scope.deadline = self.clock.to_trio(self._next_ms)

    async def run_now(self, *, force: bool = True, roll: bool = False) -> MaintenanceReport:
        """One pass over every partition. `force` cleans every compacted partition that has
        closed segments to clean, whatever its dirty ratio; `roll` first closes every
        active segment that holds records (what segment.ms or segment.bytes would do)."""
        report = MaintenanceReport()
        async with self._lock:
            state = self.state
            for topic in list(state.topics.by_name.values()):
                if topic.name == OFFSETS_TOPIC:
                    continue
                policy = topic_policy(topic, state.broker_configs, state.config.node_id)
                for partition in list(topic.partitions):
                    if state.topics.by_id.get(topic.topic_id) is not topic:
                        break  # deleted meanwhile
                    try:
                        await self._partition(topic.name, partition, policy, force, roll,
                                              report)
                    except (OSError, StorageError):
                        if state.topics.by_id.get(topic.topic_id) is topic:
                            raise
                        break  # its files went with the topic while they were worked on
            self.passes += 1
        if report.retention or report.cleaned:
            state.data_arrived.unpark_all()  # long polls at an offset now gone answer
        self._changed()
        return report

    async def _partition(self, topic: str, partition: Partition, policy: TopicPolicy,
                         force: bool, roll: bool, report: MaintenanceReport) -> None:
        store = partition.store
        now = self.clock.now_ms()
        if policy.segment_bytes is not None:
            store.segment_bytes = policy.segment_bytes
        segments = store.segment_ranges()
        if (roll or roll_due(partition, segments, now, policy)) and await _io(store, store.roll):
            segments = store.segment_ranges()
        start = retention_start(partition, segments, now, policy)
        if start is not None:
            await _io(store, functools.partial(store.truncate_prefix, start))
            partition.trim_index(start)
            report.retention.append({"topic": topic, "partition": partition.index,
                                     "log_start_offset": partition.log_start_offset})
            segments = store.segment_ranges()
        if not policy.compact:
            return
        cleanable = cleanable_segments(partition, segments, now, policy)
        if not cleanable or not (force or cleaning_due(cleanable, partition.cleaned_to, policy)):
            return
        ranges = [(base, end) for base, end, _size in cleanable]
        expire = now - policy.delete_retention_ms
        kind = KafkaBatches(list(partition.producers.aborted), expire)
        start = partition.log_start_offset
        if getattr(store, "in_memory", False):
            cleaned = await trio.to_thread.run_sync(functools.partial(
                clean_segments, store.read_segment, ranges, kind, expire_before_ms=expire,
                log_start=start))
            for (base, _end), batches, changed in zip(ranges, cleaned.segments, cleaned.changed):
                if changed:
                    store.replace_segment(base, batches)
        else:
            cleaned = await trio.to_thread.run_sync(functools.partial(
                clean_partition, store, ranges, kind, expire_before_ms=expire, log_start=start))
        for (base, end), batches, changed in zip(ranges, cleaned.segments, cleaned.changed):
            if changed and end > partition.log_start_offset:
                partition.reindex(base, end, batches)
        partition.cleaned_to = ranges[-1][1]
        report.cleaned.append({"topic": topic, "partition": partition.index,
                               "records_before": cleaned.records_before,
                               "records_after": cleaned.records_after})


async def _io(store: Any, call: Callable[[], Any]) -> Any:
    """A store's call that touches files, in a worker thread (in memory: here)."""
    if getattr(store, "in_memory", False):
        return call()
    return await trio.to_thread.run_sync(call)

