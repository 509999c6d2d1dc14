"""Consumer groups and pauses are rebuilt from the log exactly; timers restart at load."""

from __future__ import annotations

from typing import Any

from .consumer_harness import Client, Harness, config, settle


def durable(gc: Any) -> dict:
    """Everything a restart must reproduce: groups, members, targets, owners, pauses, offsets."""
    rt = gc._rt
    groups = {}
    for gid, g in rt.consumer_groups.items():
        groups[gid] = (
            g.group_epoch, g.assignment_epoch, g.metadata_hash, dict(g.static_members),
            {m: (mem.subscription(), mem.current()) for m, mem in g.members.items()},
            dict(g.target), {t: dict(ps) for t, ps in g.owners.items()},
            dict(g.subscribed_names), dict(g.regex_counts), dict(g.assignor_counts),
        )
    return {
        "consumer": groups,
        "classic": sorted(rt.groups),
        "paused": {g: dict(p) for g, p in rt.paused.by_group.items()},
        "offsets": {g: gc.committed_offsets(g) for g in rt.offsets.by_group},
    }


def test_replaying_the_log_rebuilds_groups_members_targets_and_pauses() -> None:
    h = Harness()
    a, b, c = Client(h, "g", instance="i-a"), Client(h, "g"), Client(h, "g", assignor="range")
    for x in (a, b, c):
        x.join()
    settle([a, b, c])
    h.pause("g", {"t": [2]})
    b.beat(ack=False)  # b left in the middle of a revocation
    h.commit("g", {("t", 2): 11})
    Client(h, "other", names=["u"]).join()
    a.leave(-2)
    assert durable(h.replayed()) == durable(h.gc)


def test_sessions_start_again_when_the_log_is_loaded() -> None:
    h = Harness(config(consumer_group_session_timeout_ms=5000))
    a, b = Client(h, "g"), Client(h, "g")
    a.join()
    b.join()
    settle([a, b])
    h.restart()
    h.now += 60_000  # the server was down for a minute: sessions count from its start
    h.advance(1)
    assert len(h.gc.consumer_group("g").members) == 2
    h.advance(3000)
    assert a.beat().error_code == 0
    h.advance(3000)
    assert list(h.gc.consumer_group("g").members) == [a.member_id]


def test_a_pending_revocation_times_out_after_a_restart_too() -> None:
    h = Harness()
    a = Client(h, "g")
    a.join()
    b = Client(h, "g")
    b.join()
    a.beat(ack=False)
    h.restart()
    h.advance(1)
    for _ in range(3):
        h.advance(10_000)
        b.beat()
    assert a.member_id not in h.gc.consumer_group("g").members
