"""The one deadline timer: it sleeps until the earliest deadline of both coordinators
(`BrokerState.next_deadline`) and then ticks the state (`BrokerState.tick`).

There is one timer for every group, member and transaction: a deadline is an entry in
the coordinators' sorted deadlines, never a task. The timer sleeps in a trio cancel
scope whose deadline is the earliest one, read again after each tick. A request may
bring that deadline forward (a new member's session, a rebalance's time-out): the shell
calls `rearm` after each batch that reached a handler, which moves the scope's deadline
earlier when the state's is, and does nothing else (a later deadline fires early,
finds nothing due and is read again). A tick's answers (a rebalance completed by its
time-out, an expired transaction's end) wait for the records it wrote to be durable.
The time is the shell's clock; when a test moves it, `rearm(force=True)` sets the
deadline whatever it was.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

from ..state.failures import log_failures

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from kcsim.coordinator import Outcome
    from kcsim.storage import Record

    from ..state.broker_state import BrokerState
    from .clock import Clock


class Timer:
    """Arms the one deadline timer and ticks the state when it fires."""

    def __init__(self, state: BrokerState, clock: Clock,
                 durable: Callable[[list[Record]], Awaitable[None]],
                 changed: Callable[[], None]) -> None:
        self.state = state
        self.clock = clock
        self._durable = durable  # returns once records are durable (the shell's group commit)
        self._changed = changed  # tells waiting tests the state may have changed
        self._scope: trio.CancelScope | None = None
        self._armed_ms: int | None = None  # the coordinator deadline the timer was last set for

    def rearm(self, force: bool = False) -> None:
        """Re-arm the timer if the coordinator now has an earlier deadline (`force`: whatever
        it is, as after the clock changed)."""
        scope = self._scope
        if scope is None:
            return
        deadline = self.state.next_deadline()
        if force or (deadline is not None and deadline != self._armed_ms):
            self._armed_ms = deadline
            at = self.clock.to_trio(deadline) if deadline is not None else math.inf
            if force or at < scope.deadline:
                scope.deadline = at

    async def run(self) -> None:
        """Sleep until the earliest deadline, tick, and again, until cancelled."""
        state = self.state
        while True:
            deadline = state.next_deadline()
            with trio.CancelScope() as scope:
                scope.deadline = self.clock.to_trio(deadline) if deadline is not None else math.inf
                self._armed_ms = deadline
                self._scope = scope
                await trio.sleep_forever()
            self._scope = None
            await self.tick()

    def due(self) -> Outcome:
        """Fire what is due now on the state; the failures it contained are logged."""
        outcome = self.state.tick(self.clock.now_ms())
        if outcome.failures:
            log_failures(outcome.failures)
        return outcome

    async def tick(self) -> None:
        """Fire what is due now; answers wait for the records it wrote to be durable."""
        outcome = self.due()
        await self._durable(outcome.records)
        self.state.release(outcome.responses)
        self._changed()
