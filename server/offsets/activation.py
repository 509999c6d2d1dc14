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

One hook is told of durable records: `Activation.durable`, set once (in memory at
start, as the state's `on_durable`; on disk as the writer's `on_durable`, from the
first read on, so an inactive topic costs commits nothing). What it does follows
the topic's life: in memory it folds records into the newest of each key until the
first read; while the topic is filled it keeps them aside; once active it appends
them to the topic (on disk through the checkpointer, which checkpoints now and then).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from .checkpoint import Checkpointer, bring_up_to_date, logged_state, read_checkpoint
from .topic import state_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from kcsim.storage import Record

    from ..durability import Durability
    from ..state.broker_state import BrokerState
    from .topic import OffsetsTopic

log = logging.getLogger("kcsim.offsets_topic")


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


class Activation:
    """Whether the topic is written yet, the one fill that makes it so, and the one hook
    (`durable`) told of every run of records once durable."""

    def __init__(self, view: OffsetsTopic, follow: Callable[[Sequence[Record]], None],
                 fill: Callable[[], Awaitable[int]], latest: LatestRecords | None = None) -> None:
        self.view = view
        self.active = False
        self._follow = follow  # once active: append to the topic
        self._fill = fill
        self.latest = latest  # in memory, until the first read: each key's newest record
        self._aside: list[Record] | None = None  # while the topic is filled
        self._filling = trio.Lock()

    def durable(self, records: Sequence[Record]) -> None:
        """The hook: records just made durable, in the writer's order."""
        if self.active:
            self._follow(records)
        elif self._aside is not None:
            self._aside.extend(records)
        elif self.latest is not None:
            self.latest(records)

    def keep_aside(self) -> None:
        """From now on keep durable records aside (the fill reads the state meanwhile)."""
        self._aside = []

    def kept(self) -> list[Record]:
        """What was kept aside, no longer kept."""
        kept, self._aside = self._aside or [], None
        return kept

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
        writer.on_durable = activation.durable
        writer.on_compacted = view.compaction_due
        durability.checkpointer = checkpointer

    async def fill() -> int:
        # The log is read in a worker thread while requests go on being served and
        # commits made durable: those are kept aside and written after the state read
        # (which may have seen some of them already). No compaction moves the segments
        # under the read.
        async with writer.compactions_held():
            try:
                async with writer.between_flushes():  # no flush half done: each later
                    activation.keep_aside()  # one is kept aside
                    writer.on_durable = activation.durable
                state = await trio.to_thread.run_sync(
                    logged_state, durability.log, view.offset_value_version)
                async with writer.between_flushes():  # whatever the read saw is durable now
                    added = view.resync(state)
                    view.append(activation.kept())
                    checkpointer.write(sync=True)  # active for good, even if the machine stops
                    follow()
            except BaseException:
                activation.kept()  # dropped: the next first read fills again
                raise
        return added

    activation = Activation(view, checkpointer.durable, fill)
    if read_checkpoint(data_dir) is not None:
        how, added = bring_up_to_date(view, durability.log, data_dir)
        if added:
            log.info("%s: %d records appended (%s)", view.topic.name, added, how)
        checkpointer.write(sync=False)
        follow()
        activation.active = True
    return activation


def in_memory(view: OffsetsTopic, state: BrokerState) -> Activation:
    """The topic of an in-memory broker: the state's `on_durable` is the activation's hook,
    which folds records into :class:`LatestRecords` until the first read and appends them
    to the topic after."""
    latest = LatestRecords()

    async def fill() -> int:
        # Encoded in a worker thread, as on disk; what commits apply meanwhile waits aside.
        records = list(latest.records.values())
        activation.keep_aside()
        try:
            read = await trio.to_thread.run_sync(state_of, records, view.offset_value_version)
        except BaseException:
            latest(activation.kept())
            raise
        latest.records.clear()
        added = view.resync(read)
        view.append(activation.kept())
        return added

    activation = Activation(view, view.append, fill, latest)
    state.on_durable = activation.durable
    return activation
