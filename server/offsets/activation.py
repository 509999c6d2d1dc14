"""When `__consumer_offsets` starts being written: the first time a client reads it.

Keeping the topic costs each OffsetCommit about as much CPU again as the commit
itself (Kafka's records and their batches are encoded and appended), yet most
users never read it; lag monitors do. So the topic exists from start-up
(Metadata lists it, DescribeConfigs describes it, writes to it are refused) but
nothing is encoded or written for it until the first Fetch or ListOffsets that
names it. That request waits while the topic is filled from the durable state
(the resync path: each key's newest value, in its group's partition, with its
commit time), and from then on every durable change is appended as it happens.

Activation is durable: with a data directory, the topic's checkpoint file exists
from that moment on, a start that finds it keeps the topic active and catches it
up, and a start that finds none does no topic work at all. In memory it lasts for
the process; until then the newest record of each key is kept (a dict entry, no
encoding), since there is no log to fill the topic from. Either way the state is
read and encoded in a worker thread, so other requests are served meanwhile.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from .offsets_checkpoint import Checkpointer, bring_up_to_date, logged_state, read_checkpoint
from .offsets_topic import state_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from kcsim.storage import Record

    from .broker import Broker
    from .durability import Durability
    from .offsets_topic import OffsetsTopic

log = logging.getLogger("kcsim.offsets_topic")


class Activation:
    """Whether the topic is written yet, and the one fill that makes it so."""

    def __init__(self, view: OffsetsTopic, fill: Callable[[], Awaitable[int]]) -> None:
        self.view = view
        self.active = False
        self._fill = fill
        self._filling = trio.Lock()

    async def activate(self) -> None:
        """Fill the topic and keep it from now on; readers arriving meanwhile wait for
        the same fill."""
        async with self._filling:
            if self.active:
                return
            added = await self._fill()
            self.active = True
            log.info("%s: first read, %d records written from the current state",
                     self.view.topic.name, added)


def on_disk(view: OffsetsTopic, durability: Durability, data_dir: str) -> Activation:
    """The topic of a data directory: active at once when an earlier run activated it
    (its checkpoint exists), then caught up from there as every start does."""
    checkpointer = Checkpointer(data_dir, durability.log, view)
    writer = durability.writer

    def follow() -> None:
        writer.on_durable = checkpointer.durable
        writer.on_compacted = view.compaction_due
        durability.checkpointer = checkpointer

    async def fill() -> int:
        # The log is read in a worker thread while requests go on being served and
        # commits made durable: those are kept aside and written after the state read
        # (which may have seen some of them already). No compaction moves the segments
        # under the read.
        arrived: list[Record] = []
        async with writer.compactions_held():
            try:
                async with writer.between_flushes():  # no flush half done: each later
                    writer.on_durable = arrived.extend  # one tells `arrived`
                state = await trio.to_thread.run_sync(
                    logged_state, durability.log, view.offset_value_version)
                async with writer.between_flushes():  # whatever the read saw is durable now
                    added = view.resync(state)
                    view.append(arrived)
                    checkpointer.write(sync=True)  # active for good, even if the machine stops
                    follow()
            except BaseException:
                if durability.checkpointer is None:
                    writer.on_durable = None
                raise
        return added

    activation = Activation(view, fill)
    if read_checkpoint(data_dir) is not None:
        how, added = bring_up_to_date(view, durability.log, data_dir)
        if added:
            log.info("%s: %d records appended (%s)", view.topic.name, added, how)
        checkpointer.write(sync=False)
        follow()
        activation.active = True
    return activation


class LatestRecords:
    """The newest record of each key, folded from what commits make durable in memory:
    the state an in-memory topic is filled from when it is first read."""

    def __init__(self) -> None:
        self.records: dict[Any, Record] = {}

    def __call__(self, records: Sequence[Record]) -> None:
        latest = self.records
        for record in records:
            if record.value is None:
                latest.pop(record.key, None)
            else:
                latest[record.key] = record


def in_memory(view: OffsetsTopic, broker: Broker) -> Activation:
    """The topic of an in-memory broker: the broker's `on_durable` folds records into
    :class:`LatestRecords` until the first read, and appends them to the topic after."""
    latest = LatestRecords()
    broker.on_durable = latest

    async def fill() -> int:
        # Encoded in a worker thread, as on disk; what commits apply meanwhile waits aside.
        records = list(latest.records.values())
        arrived: list[Record] = []
        broker.on_durable = arrived.extend
        try:
            state = await trio.to_thread.run_sync(state_of, records, view.offset_value_version)
        except BaseException:
            latest(arrived)
            broker.on_durable = latest
            raise
        latest.records.clear()
        added = view.resync(state)
        view.append(arrived)
        broker.on_durable = view.append
        return added

    return Activation(view, fill)
