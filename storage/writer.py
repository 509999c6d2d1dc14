"""GroupCommitWriter: makes records durable for many concurrent trio tasks.

With ``fsync="always"`` every committer waits until its records are fsynced,
but the writer task takes everything submitted since its last flush, appends
it and fsyncs once, then releases all those committers together: one fsync
serves a whole burst of commits. With ``"interval"`` and ``"never"`` a commit
writes its records to the OS (a write(2) into the page cache) before it
returns, so whatever the caller acknowledges afterwards survives the process
dying; ``"interval"`` then fsyncs every ``interval_ms`` while there is anything
unsynced (a machine crash loses at most that last interval), ``"never"`` leaves
it to the OS when data reaches the disk.

Whoever keeps something derived from the records (the server's
``__consumer_offsets`` topic) sets :attr:`GroupCommitWriter.on_durable`: it is
called on the trio thread with each run of records once they are durable as
the policy defines it, in the order they are in the log.

Any write error fails the writer for good (an fsync error in particular must
not be retried: the kernel may already have dropped the dirty pages). Pending
and later commits raise StorageFailedError and the server is expected to exit.

Blocking file work runs in worker threads (trio.to_thread), except the appends
of the "interval" and "never" policies, which only copy into the page cache.

Compaction runs in a thread of its own, the log cleaner (``storage.cleaner``), so
commits go on meanwhile and a busy event loop does not delay it: the writer wakes
it when the log's dirty bytes change (a segment rolled: a free check after each
append) and when the server asks (:meth:`check_compaction`, once it is ready after
a replay); it also asks ``storage.compaction_policy`` every ``compact_interval_ms``
(the longest a dirty log waits) and when a segment too young for
``min_compaction_lag_ms`` comes of age. ``compact_interval_ms=None`` turns it off
(:meth:`compact_now` still compacts). One pass runs at a time; none starts while
:meth:`compactions_held`.

A pass rewrites only the segments with enough dead records, in steps each swapped
crash-safely and each recorded in the cleaner checkpoint as soon as it is swapped
(``storage.compaction``): a broker killed again and again, sooner than a whole pass
takes, still leaves each life's progress to the next, whose replay then finds a log
bounded by its live state plus what was written since, not by its history.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import trio

from .cleaner import LogCleaner
from .compaction import (
    DEFAULT_COMPACTION_STEP_BYTES,
    DEFAULT_MIN_DEAD_SHARE,
    DEFAULT_TOMBSTONE_RETENTION_MS,
    CompactionStats,
    compact,
)
from .compaction_policy import (
    DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
    DEFAULT_MIN_COMPACTION_LAG_MS,
    CompactionPolicy,
)
from .errors import StorageClosedError, StorageError, StorageFailedError
from .records import Record

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Sequence

    from .log import RecordLog

FsyncPolicy = Literal["always", "interval", "never"]
FSYNC_POLICIES: tuple[str, ...] = ("always", "interval", "never")

log = logging.getLogger(__name__)


@dataclass
class WriterStats:
    commits: int = 0
    records: int = 0
    flushes: int = 0  # group-commit rounds (policy "always")
    syncs: int = 0  # fsync rounds of the log
    compactions: int = 0


@dataclass
class _Batch:
    """Records of every committer waiting for the same flush."""

    records: list[Record] = field(default_factory=list)
    done: trio.Event = field(default_factory=trio.Event)
    error: BaseException | None = None  # the StorageError type to raise, with its cause
    cause: BaseException | None = None


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _now() -> float:
    """Trio's clock inside trio (so tests can use a mock clock), else the OS one."""
    try:
        return trio.current_time()
    except RuntimeError:
        return time.monotonic()


class GroupCommitWriter:
    """Serialises writes to a RecordLog; start :meth:`run` in a nursery."""

    def __init__(
        self,
        log: RecordLog,
        fsync: FsyncPolicy = "always",
        *,
        interval_ms: int = 1000,
        compact_interval_ms: int | None = None,
        tombstone_retention_ms: int = DEFAULT_TOMBSTONE_RETENTION_MS,
        min_cleanable_dirty_ratio: float = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
        min_compaction_lag_ms: int = DEFAULT_MIN_COMPACTION_LAG_MS,
        clock_ms: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync must be one of {FSYNC_POLICIES}, not {fsync!r}")
        if interval_ms <= 0:
            raise ValueError(f"interval_ms must be positive, not {interval_ms!r}")
        self._log = log
        self._policy = fsync
        self._interval_ms = interval_ms
        self._interval_s = interval_ms / 1000
        self._tombstone_retention_ms = tombstone_retention_ms
        self._clock_ms = clock_ms
        self.stats = WriterStats()
        self._batch = _Batch()
        self._wakeup = trio.Event()
        self._critical = trio.Lock()
        self._failure: BaseException | None = None
        self._closing = False
        self._running = False
        self._stopped = trio.Event()
        self._appended_since_sync = False
        self._last_sync_time = _now()
        self._compaction_holds = 0  # compactions_held: segments read outside the lock
        self._holds_released = trio.Event()
        self._pass_lock = threading.Lock()  # held by the compaction pass under way
        self._trio_token: trio.lowlevel.TrioToken | None = None
        self._dirty_told = 0  # the log's dirty bytes when the cleaner was last woken
        self._cleaner = None if compact_interval_ms is None else LogCleaner(
            log, CompactionPolicy(min_cleanable_dirty_ratio, min_compaction_lag_ms,
                                  tombstone_retention_ms),
            compact_interval_ms / 1000, self._cleaner_pass, self._cleaner_failed, clock_ms)
        self.on_durable: Callable[[Sequence[Record]], None] | None = None
        # Called on the trio thread after each compaction, with its time and retention.
        self.on_compacted: Callable[[int, int], object] | None = None

    @property
    def policy(self) -> str:
        return self._policy

    @property
    def interval_ms(self) -> int:
        """The fsync period of the "interval" policy."""
        return self._interval_ms

    @property
    def failure(self) -> BaseException | None:
        """The error that failed the writer, if any."""
        return self._failure

    # -- committing ---------------------------------------------------------------

    async def commit(self, records: Sequence[Record]) -> None:
        """Return once ``records`` are durable as the fsync policy defines.

        A committer cancelled while waiting does not withdraw its records: they
        are written with the rest of their batch.
        """
        self._raise_if_unusable()
        if not records:
            await trio.lowlevel.checkpoint()
            return
        self.stats.commits += 1
        if self._policy != "always":
            self._append_now(records)
            self._durable(records)
            await trio.lowlevel.checkpoint()
            return
        batch = self._batch
        batch.records.extend(records)
        self._wakeup.set()
        await batch.done.wait()
        if batch.error is not None:
            raise type(batch.error)(str(batch.error)) from batch.cause

    def commit_nowait(self, records: Sequence[Record]) -> bool:
        """Commit without waiting where the policy allows it: True when ``records``
        are now durable as the policy defines it (appended to the OS under
        "interval" and "never"); False, with nothing done, when the caller must
        ``await commit(records)`` (policy "always"). The policy is decided here only."""
        if self._policy == "always":
            return False
        if self._failure is not None or self._closing:
            self._raise_if_unusable()
        if records:
            self.stats.commits += 1
            self._append_now(records)
            self._durable(records)
        return True

    def commit_now(self, records: Sequence[Record]) -> None:
        """Synchronous commit for code without trio: append, then fsync per the policy.

        Call it from the thread that runs trio (or with no trio at all), never
        from another thread while :meth:`run` is active.
        """
        if self._failure is not None or self._closing:
            self._raise_if_unusable()
        if not records:
            return
        self.stats.commits += 1
        self._append_now(records)
        if self._policy == "always" or (
            self._policy == "interval" and self._sync_due(_now())
        ):
            try:
                self._sync(_now())
            except (OSError, StorageError) as exc:
                raise self._fail(exc) from exc
        self._durable(records)

    def _durable(self, records: Sequence[Record]) -> None:
        """Tell `on_durable` about records now durable; its failure is its own."""
        if self.on_durable is not None:
            try:
                self.on_durable(records)
            except Exception:
                log.exception("on_durable failed for %d records", len(records))

    def _append_now(self, records: Sequence[Record]) -> None:
        try:
            self._log.append(records, timestamp_ms=self._clock_ms())
        except (OSError, StorageError) as exc:
            raise self._fail(exc) from exc
        self.stats.records += len(records)
        if self._log.dirty_bytes != self._dirty_told:  # a segment rolled
            self._tell_cleaner()
        if not self._appended_since_sync:
            self._appended_since_sync = True
            if self._policy == "interval":
                self._wakeup.set()  # the writer task now has an fsync to schedule

    def _raise_if_unusable(self) -> None:
        if self._failure is not None:
            raise StorageFailedError(
                f"storage failed earlier ({self._failure}); nothing more can be written"
            ) from self._failure
        if self._closing:
            raise StorageClosedError("the storage writer is shut down")

    def _fail(self, exc: BaseException) -> StorageFailedError:
        """Fail the writer for good; returns the error for the current caller to raise."""
        if self._failure is None:
            self._failure = exc
            log.error("storage failed, no further records will be written: %r", exc)
            self._wakeup.set()
        return StorageFailedError(f"storage write failed: {exc}")

    # -- the writer task ------------------------------------------------------------

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Flush, fsync and compact until :meth:`aclose` or a storage failure."""
        if self._running:
            raise RuntimeError("GroupCommitWriter.run is already running")
        self._running = True
        self._last_sync_time = trio.current_time()
        self._trio_token = trio.lowlevel.current_trio_token()
        if self._cleaner is not None:
            self._cleaner.start()
        task_status.started()
        try:
            while not self._closing and self._failure is None:
                await self._wait_for_work()
                async with self._critical:
                    await self._flush()
                    if self._policy == "interval" and self._sync_due(trio.current_time()):
                        await self._sync_in_thread()
            if self._failure is None:
                async with self._critical:
                    await self._flush()
                    if self._policy == "interval" and self._appended_since_sync:
                        await self._sync_in_thread()
        except StorageFailedError:
            pass  # already logged; committers see it
        finally:
            self._closing = True
            self._release_batch(self._batch, self._stopped_error())
            if self._cleaner is not None:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(self._cleaner.stop)
            self._stopped.set()

    async def aclose(self) -> None:
        """Write what is pending, stop :meth:`run` and wait for it."""
        self._closing = True
        self._wakeup.set()
        if self._running:
            await self._stopped.wait()
        else:
            self._release_batch(self._batch, self._stopped_error())

    def _stopped_error(self) -> StorageError:
        if self._failure is not None:
            return StorageFailedError(f"storage failed: {self._failure}")
        return StorageClosedError("the storage writer stopped before writing these records")

    async def _wait_for_work(self) -> None:
        deadlines = []
        if self._policy == "interval" and self._appended_since_sync:
            deadlines.append(self._last_sync_time + self._interval_s)
        with trio.move_on_at(min(deadlines) if deadlines else math.inf):
            await self._wakeup.wait()
        self._wakeup = trio.Event()
        # The first commit woke us; tasks released by the previous flush together
        # with it commit in this same round, so let them join this batch.
        await trio.lowlevel.checkpoint()

    async def _flush(self) -> None:
        """Append and fsync everything committed since the last flush (policy "always")."""
        batch = self._batch
        if not batch.records:
            return
        self._batch = _Batch()
        try:
            await trio.to_thread.run_sync(self._append_and_sync, batch.records,
                                          trio.current_time(), self._clock_ms())
        except (OSError, StorageError) as exc:
            self._release_batch(batch, self._fail(exc), exc)
            raise StorageFailedError(str(exc)) from exc
        except BaseException as exc:
            self._release_batch(batch, self._stopped_error(), exc)
            raise
        self._durable(batch.records)
        self._release_batch(batch, None)

    def _append_and_sync(self, records: list[Record], now: float, timestamp_ms: int) -> None:
        """Runs in a worker thread: the timestamp is read beforehand on the trio thread."""
        self._log.append(records, timestamp_ms=timestamp_ms)
        self.stats.records += len(records)
        self.stats.flushes += 1
        if self._log.dirty_bytes != self._dirty_told:  # a segment rolled
            self._tell_cleaner()
        self._sync(now)

    def _release_batch(self, batch: _Batch, error: BaseException | None,
                       cause: BaseException | None = None) -> None:
        if batch.done.is_set():
            return
        if error is not None and batch.records:
            batch.error, batch.cause = error, cause or self._failure
        batch.done.set()

    # -- fsync ----------------------------------------------------------------------

    def _sync_due(self, now: float) -> bool:
        return self._appended_since_sync and now - self._last_sync_time >= self._interval_s

    def _sync(self, now: float) -> None:
        self._appended_since_sync = False
        self._last_sync_time = now
        self._log.sync()
        self.stats.syncs += 1

    async def _sync_in_thread(self) -> None:
        try:
            await trio.to_thread.run_sync(self._sync, trio.current_time())
        except (OSError, StorageError) as exc:
            raise self._fail(exc) from exc

    @contextlib.asynccontextmanager
    async def between_flushes(self) -> AsyncIterator[None]:
        """Hold off flushes and fsync rounds of the writer task (and compact_now): inside, on
        the trio thread and until the next await, the log holds exactly the records
        `on_durable` was told of (commits appending on the trio thread tell it at once),
        so something derived from the log can start following `on_durable` from there."""
        async with self._critical:
            yield

    @contextlib.asynccontextmanager
    async def compactions_held(self) -> AsyncIterator[None]:
        """Start no compaction inside (one under way is waited for first), so that a
        worker thread can read the log's segments while commits go on appending."""
        self._compaction_holds += 1
        try:
            await trio.to_thread.run_sync(self._wait_for_pass)
            yield
        finally:
            self._compaction_holds -= 1
            if not self._compaction_holds:
                self._holds_released.set()
                self._holds_released = trio.Event()
                self.check_compaction()  # a check put off by the hold is due now

    # -- compaction -------------------------------------------------------------------

    def check_compaction(self) -> None:
        """Have the cleaner ask the compaction policy now (the server calls it once it is
        ready, after a replay, so a log left dirty by short lives gets compacted without
        waiting for an interval, and without delaying the start)."""
        if self._cleaner is not None:
            self._cleaner.check()

    def _tell_cleaner(self) -> None:
        """Wake the cleaner: a segment rolled (`_append_now` checks it after each append)."""
        self._dirty_told = self._log.dirty_bytes
        if self._cleaner is not None:
            self._cleaner.wake()

    async def compact_now(self, *, tombstone_retention_ms: int | None = None,
                          now_ms: int | None = None) -> CompactionStats:
        """Compact the closed segments between two flushes (in a worker thread)."""
        self._raise_if_unusable()
        while self._compaction_holds:
            await self._holds_released.wait()
        async with self._critical:
            self._raise_if_unusable()
            retention = (self._tombstone_retention_ms if tombstone_retention_ms is None
                         else tombstone_retention_ms)
            if now_ms is None:
                now_ms = self._clock_ms()
            try:
                stats = await trio.to_thread.run_sync(self._locked_pass, retention, now_ms)
            except (OSError, StorageError) as exc:
                raise self._fail(exc) from exc
            self._compacted(now_ms, retention)
            self.check_compaction()  # segments that rolled meanwhile may be dirty enough
            return stats

    def _wait_for_pass(self) -> None:
        """Runs in a worker thread: returns once no pass is under way."""
        with self._pass_lock:
            pass

    def _locked_pass(self, retention_ms: int, now_ms: int) -> CompactionStats:
        """Runs in a worker thread: a pass of every closed segment, once no other is
        under way."""
        with self._pass_lock:
            stats = self._compact_and_mark(retention_ms, now_ms,
                                           len(self._log.closed_segments()))
            self.stats.compactions += 1
            return stats

    def _cleaner_pass(self, segments: int) -> bool:
        """Runs in the cleaner's thread: a pass the policy called for, unless compactions
        are held off (False)."""
        now_ms = self._clock_ms()
        with self._pass_lock:
            if self._compaction_holds or self._closing or self._failure is not None:
                return False
            self._compact_and_mark(self._tombstone_retention_ms, now_ms, segments)
            self.stats.compactions += 1
        self._to_trio(self._compacted, now_ms, self._tombstone_retention_ms)
        return True

    def _cleaner_failed(self, exc: BaseException) -> None:
        """Runs in the cleaner's thread: its pass failed, which fails the writer."""
        log.error("compaction failed: %r", exc)
        self._to_trio(self._fail, exc)

    def _to_trio(self, fn: Callable[..., object], *args: object) -> None:
        """Call `fn` on the trio thread (dropped once trio has stopped)."""
        if self._trio_token is None:
            return
        try:
            self._trio_token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            pass

    def _compacted(self, now_ms: int, retention_ms: int) -> None:
        """On the trio thread, after each pass."""
        if self.on_compacted is not None:
            try:
                self.on_compacted(now_ms, retention_ms)
            except Exception:
                log.exception("on_compacted failed")

    def _compact_and_mark(self, retention_ms: int, now_ms: int,
                          segments: int) -> CompactionStats:
        """Runs in a worker thread. A pass rewrites only the segments worth it, swapped
        in steps; positions survive compaction, so where a step's inputs end is the
        clean end after it (a pass cut short keeps its finished steps for the policy
        too), and where the last input ends is the clean end after the pass."""
        inputs = self._log.segments[:segments]
        if not inputs:
            return CompactionStats()
        last_end = inputs[-1].end

        def step_done(end: int) -> None:
            if end < last_end:  # the last is marked once the pass is over
                self._log.mark_clean(end, now_ms)

        stats = compact(self._log, tombstone_retention_ms=retention_ms, now_ms=now_ms,
                        segments=segments, min_dead_share=DEFAULT_MIN_DEAD_SHARE,
                        step_bytes=DEFAULT_COMPACTION_STEP_BYTES, on_step=step_done)
        self._log.mark_clean(last_end, now_ms)
        return stats
