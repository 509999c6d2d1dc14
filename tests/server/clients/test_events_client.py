"""The group event log with a real client: confluent-kafka members, KIP-848 and classic.

One member joins (in a child process, so that it can be killed), a second joins, the
first is killed and its session ends when the broker's clock is advanced past it; two
partitions are paused, their offsets reset by an admin, resumed; the second member
leaves. The group's events say each step, with its cause, in order; a restart on the
same data dir replays the same history.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka.admin import AdminClient as KafkaAdmin
from confluent_kafka.admin import NewTopic

from kcsim.admin import AdminClient, TopicPartition
from kcsim.coordinator.shared.events import event_fields

from .ck_members import QUIET, ChildMember, Member, wait_for

pytestmark = [pytest.mark.clients, pytest.mark.timeout(240)]

PARTITIONS = 4
PAUSED = (0, 1)
SESSION_MS = 45_000


def events(kcsim: Any, group: str) -> list[Any]:
    """The group's events as the broker holds them (read on its own thread)."""
    return kcsim.run_sync(lambda: kcsim.server.broker.groups.events.query(group=group))


def steps(kcsim: Any, group: str, names: dict[str, str]) -> list[tuple[str, str, str]]:
    """(kind, cause, member's client id) of each event but the commit summaries."""
    return [(e.kind, e.cause, names.get(e.member, e.member)) for e in events(kcsim, group)
            if e.kind != "offsets-committed"]


def member_ids(kcsim: Any, group: str) -> dict[str, str]:
    view = kcsim.group(group)
    return {} if view is None else {m.member_id: m.client_id for m in view.members}


def kill_and_expire(kcsim: Any, doomed: ChildMember, stays: Member, protocol: str) -> None:
    """Kill the member (no leave) and advance the broker's clock past its session only: the
    one that stays heartbeated after the doomed one's last heartbeat, so its own session
    outlasts it (frozen, the clock cannot move between reading and advancing it)."""
    api = "ConsumerGroupHeartbeat" if protocol == "consumer" else "Heartbeat"
    doomed.kill()
    last = kcsim.requests(api, client_id=doomed.name)[-1]
    since = last.seq
    while True:
        beat = kcsim.wait_for_request(api, client_id=stays.name, since=since)[0]
        if beat.received_ms >= last.received_ms + 2:
            break
        since = beat.seq
    now = kcsim.clock.freeze()
    mark = kcsim.last_request_seq()
    kcsim.clock.advance(last.received_ms + SESSION_MS + 1 - now)
    # The one that stays heartbeats again before the time runs on: its session, only a
    # few milliseconds longer than the doomed one's, starts again.
    kcsim.wait_for_request(api, client_id=stays.name, since=mark)
    kcsim.clock.resume()


@pytest.mark.parametrize("protocol", ["consumer", "classic"])
def test_a_group_life_in_events_and_its_replay(kcsim_embedded_factory: Any, tmp_path: Any,
                                               unique_name: Any, protocol: str) -> None:
    kcsim = kcsim_embedded_factory(data_dir=str(tmp_path / "data"), in_memory=False,
                                   consumer_group_heartbeat_interval_ms=500,
                                   initial_rebalance_delay_ms=0)
    bootstrap = kcsim.bootstrap
    topic, group = unique_name("t"), unique_name("g")
    kafka_admin = KafkaAdmin({"bootstrap.servers": bootstrap, **QUIET})
    kafka_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
    settings = {"session.timeout.ms": SESSION_MS} if protocol == "classic" else {}
    first = ChildMember(bootstrap, group, topic, protocol, "first")
    second: Member | None = None
    names: dict[str, str] = {}
    tps = [TopicPartition(topic, p) for p in PAUSED]
    try:
        kcsim.wait_for_group(group, "Stable", members=1, timeout=30)
        names.update(member_ids(kcsim, group))
        second = Member(bootstrap, group, topic, protocol, "second", **settings).start()
        kcsim.wait_for_group(group, "Stable", members=2, timeout=30)
        names.update(member_ids(kcsim, group))
        wait_for(lambda: len(second.assignment) == PARTITIONS // 2, "the second member's share")

        kill_and_expire(kcsim, first, second, protocol)
        kcsim.wait_for_group(group, "Stable", members=1, timeout=30)
        wait_for(lambda: len(second.assignment) == PARTITIONS, "every partition for the second")

        with AdminClient(bootstrap, timeout=15) as admin:
            assert admin.pause_partitions(group, tps).all() == dict.fromkeys(tps)
            wait_for(lambda: not second.assignment & set(PAUSED), "the member to let go")
            kcsim.wait_for_group(group, "Stable", members=1, timeout=30)
            reset = dict.fromkeys(tps, 0)
            assert admin.alter_group_offsets(group, reset).all() == dict.fromkeys(reset)
            assert admin.resume_partitions(group, tps).all() == dict.fromkeys(tps)
            wait_for(lambda: len(second.assignment) == PARTITIONS, "the resumed partitions")
            kcsim.wait_for_group(group, "Stable", members=1, timeout=30)
        second.close()
        kcsim.wait_for_group(group, "Empty", timeout=30)
    finally:
        first.kill()
        if second is not None:
            second.close()

    assert steps(kcsim, group, names) == EXPECTED[protocol]
    live = [event_fields(e) for e in events(kcsim, group)]
    kcsim.restart()
    assert [event_fields(e) for e in events(kcsim, group)] == live


EXPECTED = {
    "consumer": [
        ("group-created", "", ""),
        ("member-joined", "", "first"),
        ("epoch-bumped", "member-joined", ""),
        ("assignment-changed", "", "first"),
        ("stable", "", ""),
        ("member-joined", "", "second"),
        ("epoch-bumped", "member-joined", ""),
        ("assignment-changed", "", "first"),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("member-left", "session-timeout", "first"),
        ("epoch-bumped", "member-left", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("partitions-paused", "request", ""),
        ("epoch-bumped", "partitions-paused", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("offsets-reset", "request", ""),
        ("partitions-resumed", "request", ""),
        ("epoch-bumped", "partitions-resumed", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("member-left", "leave-request", "second"),
        ("epoch-bumped", "member-left", ""),
        ("empty", "", ""),
    ],
    "classic": [
        ("group-created", "", ""),
        ("member-joined", "", "first"),
        ("rebalance-started", "member-joined", ""),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", "first"),
        ("stable", "", ""),
        ("member-joined", "", "second"),
        ("rebalance-started", "member-joined", ""),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", "first"),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("member-left", "session-timeout", "first"),
        ("rebalance-started", "member-left", ""),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("partitions-paused", "request", ""),
        ("rebalance-started", "partitions-paused", ""),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("offsets-reset", "request", ""),
        ("partitions-resumed", "request", ""),
        ("rebalance-started", "partitions-resumed", ""),
        ("generation-bumped", "", ""),
        ("assignment-changed", "", "second"),
        ("stable", "", ""),
        ("member-left", "leave-request", "second"),
        ("rebalance-started", "member-left", ""),
        ("generation-bumped", "", ""),
        ("empty", "", ""),
    ],
}
