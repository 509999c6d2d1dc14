"""The group event log in kcsim.testing: `events(...)` filters the history, and
`wait_for_event(...)` returns the first matching event, at once if the history holds
one, else as soon as one folds in (woken by the broker's change notices), or times out
showing the latest events it saw."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
import trio
import trio.testing

from kcsim.testing import GroupEventValue, WaitTimeout

from .written_events import write_event, write_events

SOME = [
    {"group": "g1", "kind": "group-created", "group_type": "consumer"},
    {"group": "g1", "kind": "member-joined", "member": "m1", "group_type": "consumer"},
    {"group": "g2", "kind": "member-joined", "member": "m2", "group_type": "classic"},
    {"group": "g1", "kind": "member-left", "cause": "session-timeout", "member": "m1",
     "group_type": "consumer"},
    {"group": "g1", "kind": "partitions-paused", "cause": "request", "group_type": "consumer",
     "detail": {"topic": "t", "partitions": ["0", "1"]}},
]


def kinds(events: list[GroupEventValue]) -> list[tuple[str, str]]:
    return [(e.group, e.kind) for e in events]


def test_events_filter_by_group_kind_type_cause_and_since(kcsim: Any) -> None:
    start = kcsim.next_event_seq()
    seqs = kcsim.run_sync(lambda: write_events(kcsim.server, SOME))
    assert seqs == list(range(start, start + len(SOME)))
    assert kinds(kcsim.events(group="g1", since=start)) == [
        ("g1", "group-created"), ("g1", "member-joined"), ("g1", "member-left"),
        ("g1", "partitions-paused")]
    assert kinds(kcsim.events(kind="member-joined", since=start)) == [
        ("g1", "member-joined"), ("g2", "member-joined")]
    assert kinds(kcsim.events(group_type="classic", since=start)) == [("g2", "member-joined")]
    left = kcsim.events(cause="session-timeout", since=start)
    assert [(e.kind, e.member, e.seq) for e in left] == [("member-left", "m1", start + 3)]
    assert kinds(kcsim.events(since=start + 4)) == [("g1", "partitions-paused")]
    paused = kcsim.events(kind="partitions-paused", since=start)[0]
    assert paused.detail == {"topic": "t", "partitions": ["0", "1"]}
    assert kcsim.next_event_seq() == start + len(SOME)


@pytest.mark.parametrize(("call", "message"), [
    ({"kind": "member-exploded"}, "kind: unknown event kind 'member-exploded' (one of: "),
    ({"group_type": "queue"}, "group_type: unknown group type 'queue' (one of: classic, "),
    ({"cause": "boredom"}, "cause: unknown cause 'boredom' (one of: leave-request, "),
    ({"since": -1}, "since: expected an event number >= 0, got -1"),
    ({"since": "3"}, "since: expected an event number >= 0, got '3'"),
    ({"group": 7}, "group: expected text, got 7"),
])
def test_bad_filters_are_refused_naming_the_field(kcsim: Any, call: dict[str, Any],
                                                  message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        kcsim.events(**call)
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        kcsim.wait_for_event(**call, timeout=0.1)


def test_a_wait_returns_an_event_the_history_already_holds(kcsim: Any) -> None:
    start = kcsim.next_event_seq()
    kcsim.run_sync(lambda: write_events(kcsim.server, SOME))
    found = kcsim.wait_for_event("g1", "member-left", "session-timeout", since=start)
    assert (found.seq, found.member, found.group_type) == (start + 3, "m1", "consumer")


def test_a_blocking_wait_returns_once_the_event_folds_in(kcsim: Any) -> None:
    since = kcsim.next_event_seq()
    writer = threading.Thread(target=kcsim.run_sync, args=(
        lambda: write_event(kcsim.server, "g", "member-left", "fenced", member="m9"),))
    writer.start()
    try:
        found = kcsim.wait_for_event("g", "member-left", since=since)
    finally:
        writer.join()
    assert (found.cause, found.member) == ("fenced", "m9")


def test_a_wait_that_times_out_shows_the_latest_events_of_the_group(kcsim: Any) -> None:
    start = kcsim.next_event_seq()
    kcsim.run_sync(lambda: write_events(kcsim.server, SOME))
    with pytest.raises(WaitTimeout) as caught:
        kcsim.wait_for_event("g1", "dead", since=start, timeout=0.3)
    assert str(caught.value) == (
        f"timed out after 0.3 s waiting for an event with group='g1', kind='dead' numbered "
        f"{start} or later; latest events of the group: #{start} group-created 'g1'; "
        f"#{start + 1} member-joined 'g1' member=m1; "
        f"#{start + 3} member-left 'g1' cause=session-timeout member=m1; "
        f"#{start + 4} partitions-paused 'g1' cause=request")


async def test_a_trio_wait_returns_once_the_event_folds_in(kcsim_trio: Any) -> None:
    since = kcsim_trio.next_event_seq()
    async with trio.open_nursery() as nursery:

        async def later() -> None:
            await trio.testing.wait_all_tasks_blocked()  # the wait has looked, and waits
            write_event(kcsim_trio.server, "g", "member-joined", member="m1")
            write_event(kcsim_trio.server, "g", "stable", group_type="consumer")

        nursery.start_soon(later)
        found = await kcsim_trio.wait_for_event("g", "stable", since=since)
    assert (found.kind, found.seq) == ("stable", since + 1)
    assert kinds(kcsim_trio.events(group="g", since=since)) == [
        ("g", "member-joined"), ("g", "stable")]
