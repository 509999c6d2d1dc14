"""The log cleaner: compacts the record log from a thread of its own.

Kafka's log cleaner runs in threads of their own, away from the request path, and
so does this one: the event loop that serves requests is busiest exactly when the
log grows fastest (a commit storm), and a compaction that had to wait for its turn
there would start late and leave the log far dirtier than the ratio allows.

The writer wakes it (:meth:`LogCleaner.wake`) when the log's dirty bytes change (a
segment rolled) and when the server asks (:meth:`LogCleaner.check`, once it is ready
after a replay); it wakes by itself every compaction interval and when a segment
too young for ``min_compaction_lag_ms`` comes of age. Each time it asks the policy
(``storage.compaction_policy``) what to compact and has the writer run that pass at
once, then asks again: nothing stands between a roll and the pass it calls for, nor
between two passes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .compaction_policy import CompactionPolicy, decide
from .log import RecordLog

log = logging.getLogger(__name__)


@dataclass(eq=False)
class LogCleaner:
    """Asks the compaction policy when there is reason to, and runs the passes it calls
    for through ``run_pass(segments)`` (False: not now, the writer holds compactions off;
    :meth:`check` once they may run again). An exception out of ``run_pass`` goes to
    ``on_error`` and stops the cleaner."""

    record_log: RecordLog
    policy: CompactionPolicy
    interval_s: float
    run_pass: Callable[[int], bool]
    on_error: Callable[[BaseException], object]
    clock_ms: Callable[[], int]
    _wakeup: threading.Event = field(default_factory=threading.Event, init=False)
    _stopping: bool = field(default=False, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _check_asked: bool = field(default=False, init=False)  # check was called
    # the log's dirty bytes when the policy was last asked
    _dirty_seen: int = field(default=0, init=False)
    _next_interval: float = field(default=0.0, init=False)  # when an interval has passed
    # when a dirty segment too young to count comes of age (monotonic time)
    _recheck_at: float | None = field(default=None, init=False)

    def start(self) -> None:
        self._next_interval = time.monotonic() + self.interval_s
        self._thread = threading.Thread(target=self._run, name="kcsim-log-cleaner", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop, once the pass under way (if any) is over (blocking)."""
        self._stopping = True
        self._wakeup.set()
        if self._thread is not None:
            self._thread.join()

    def wake(self) -> None:
        """The log's dirty bytes may have changed: ask the policy (from any thread)."""
        self._wakeup.set()

    def check(self) -> None:
        """Ask the policy now, whatever changed (from any thread)."""
        self._check_asked = True
        self._wakeup.set()

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._wakeup.wait(self._timeout())
                self._wakeup.clear()
                while not self._stopping:
                    segments = self._due()
                    if not segments or not self.run_pass(segments):
                        break
                    self._check_asked = True  # what rolled meanwhile may be dirty enough
        except Exception as exc:
            self.on_error(exc)

    def _timeout(self) -> float:
        deadline = self._next_interval
        if self._recheck_at is not None:
            deadline = min(deadline, self._recheck_at)
        return max(0.0, deadline - time.monotonic())

    def _due(self) -> int:
        """How many leading segments to compact now (0: none), as the policy says, when
        there is reason to ask it: the dirty bytes changed, a check was asked for, an
        interval passed or a dirty segment came of age."""
        now = time.monotonic()
        interval_elapsed = now >= self._next_interval
        if interval_elapsed:
            self._next_interval = now + self.interval_s
        if self._recheck_at is not None and now >= self._recheck_at:
            self._recheck_at = None
            self._check_asked = True
        dirty = self.record_log.dirty_bytes
        if not (interval_elapsed or self._check_asked or dirty != self._dirty_seen):
            return 0
        self._check_asked = False
        self._dirty_seen = dirty
        now_ms = self.clock_ms()
        decision = decide(self.policy, self.record_log.shape(), now_ms,
                          interval_elapsed=interval_elapsed)
        self._recheck_at = (None if decision.recheck_at_ms is None
                            else now + (decision.recheck_at_ms - now_ms) / 1000)
        if decision.segments:
            log.debug("compacting %d segments: %s", decision.segments, decision.reason)
        return decision.segments
