"""Consumer-group scenarios run the same way with every client (see groupclients, javagroups).

A scenario takes a client, the broker (an in-process kcsim with its test controls:
`kcsim.bootstrap`, waits on the group's state, the request log, the clock) and a name
factory. What the group looks like on the broker is waited for there, woken by the
broker's own changes; what a client sees is read from the client.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from .groupkit import (
    HEARTBEAT_MS,
    SESSION_MS,
    WAIT_S,
    Described,
    MemberView,
    balanced,
    covers_exactly,
    create_topic,
    produce,
    wait_for,
)

if TYPE_CHECKING:
    from collections.abc import Callable

PARTITIONS = 6


def views(members: list[Any]) -> list[MemberView]:
    return [m.view() for m in members]


def wait_stable(kcsim: Any, client: Any, group: str, members: int) -> Described:
    """Wait for the group to be Stable with `members` members on the broker, then for the
    client's Admin to describe it so: on a loaded machine a member late with a heartbeat
    can start another rebalance between the two reads."""
    kcsim.wait_for_group(group, "Stable", members=members, timeout=WAIT_S)
    return wait_for(lambda: client.describe(group),
                    lambda d: (d.state, len(d.members)) == ("Stable", members),
                    f"{group} described Stable with {members} members")


def described_as_seen(kcsim: Any, client: Any, group: str, count: int,
                      members: list[Any]) -> tuple[Described, list[MemberView]]:
    """A Stable description and the members' own views, once their assignments agree: a
    member takes its assignment when its SyncGroup answer arrives, just after the group is
    Stable, so one read of each can catch a member in between."""
    return wait_for(lambda: (wait_stable(kcsim, client, group, count), views(members)),
                    lambda dv: (sorted(map(sorted, dv[0].assignments().values()))
                                == sorted(v.assignment for v in dv[1])),
                    f"the description of {group} to match its {count} members' views")


def wait_empty(kcsim: Any, group: str) -> None:
    kcsim.wait_for_group(group, "Empty", timeout=WAIT_S)


def check_description(described: Described, topic: str, seen: list[MemberView]) -> None:
    """The coordinator's view of members and assignments is the members' own view."""
    assert all(t == topic for m in described.members for t, _ in m.partitions)
    assert sorted(map(sorted, described.assignments().values())) == sorted(v.assignment for v in seen)
    known = {v.member_id: v.assignment for v in seen if v.member_id}  # ids the clients tell
    assigned = described.assignments()
    assert {member_id: assigned.get(member_id) for member_id in known} == known


def check_consumed(members: list[Any], before: list[int], produced: list[tuple[int, int, str]]) -> None:
    """The records consumed since `before` are exactly `produced`, each from its owner."""
    def fresh() -> list[list[tuple[int, int, str]]]:
        return [v.records[n:] for v, n in zip(views(members), before, strict=True)]

    wait_for(fresh, lambda got: sum(map(len, got)) >= len(produced),
             f"{len(produced)} records consumed")
    # A record consumed twice arrives after the last new one; nothing on the broker marks
    # that none will, so this looks again a moment later.
    time.sleep(0.3)
    got = fresh()
    everything = [r for records in got for r in records]
    duplicated = [r for r, n in Counter(everything).items() if n > 1]
    assert not duplicated, f"records consumed more than once: {duplicated[:5]}"
    assert sorted(everything) == sorted(produced)
    for member, records in zip(members, got, strict=True):
        owned = set(member.view().assignment)
        assert {p for p, _, _ in records} <= owned, f"{member.name} got records of partitions it does not own"


# -- 1 and 3: members share the partitions; the group as Admin lists and describes it ---


def members_share_partitions(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, PARTITIONS)
    members = [client.consumer(group, topic, name=f"m{i}") for i in range(3)]
    try:
        seen = wait_for(lambda: views(members),
                        lambda vs: balanced(vs, PARTITIONS) and all(len(v.assignment) == 2 for v in vs),
                        "three members with two partitions each")
        described, agreed = described_as_seen(kcsim, client, group, 3, members)
        check_description(described, topic, agreed)
        assert described.protocol == client.default_assignor
        listed = client.list_groups()
        assert group in listed
        if client.lists_states:
            assert listed[group] == "Stable"
            assert group in client.list_groups(states=["Stable"])
            assert group not in client.list_groups(states=["Empty"])

        produced = produce(bootstrap, topic, range(PARTITIONS), 10)
        check_consumed(members, [len(v.records) for v in seen], produced)
        for member in members:
            member.commit()

        leaver = members.pop(0)
        leaver.close()
        seen = wait_for(lambda: views(members),
                        lambda vs: covers_exactly(vs, PARTITIONS) and all(len(v.assignment) == 3 for v in vs),
                        "two members with three partitions each")
        described, agreed = described_as_seen(kcsim, client, group, 2, members)
        check_description(described, topic, agreed)

        produced = produce(bootstrap, topic, range(PARTITIONS), 10, start=10)
        check_consumed(members, [len(v.records) for v in seen], produced)
    finally:
        for member in members:
            member.close()

    described = client.describe(group)
    assert (described.state, described.members) == ("Empty", [])
    listed = client.list_groups()
    assert group in listed
    if client.lists_states:
        assert listed[group] == "Empty"
        assert group in client.list_groups(states=["Empty"])
        assert group not in client.list_groups(states=["Stable"])


# -- 1 again, incrementally: cooperative rebalancing (KIP-429) over the classic protocol ---


def cooperative_members_keep_partitions(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, PARTITIONS)
    members = [client.consumer(group, topic, name=f"c{i}", assignor="cooperative-sticky")
               for i in range(3)]
    try:
        seen = wait_for(lambda: views(members),
                        lambda vs: balanced(vs, PARTITIONS) and all(len(v.assignment) == 2 for v in vs),
                        "three cooperative members with two partitions each")
        described, agreed = described_as_seen(kcsim, client, group, 3, members)
        check_description(described, topic, agreed)
        assert described.protocol == "cooperative-sticky"
        produced = produce(bootstrap, topic, range(PARTITIONS), 10)
        check_consumed(members, [len(v.records) for v in seen], produced)
        for member in members:
            member.commit()

        kept = [set(v.assignment) for v in views(members)[1:]]
        leaver = members.pop(0)
        leaver.close()
        seen = wait_for(lambda: views(members),
                        lambda vs: covers_exactly(vs, PARTITIONS) and all(len(v.assignment) == 3 for v in vs),
                        "two cooperative members with three partitions each")
        for before, now in zip(kept, seen, strict=True):
            assert before <= set(now.assignment), "a member lost a partition it owned"
        described, agreed = described_as_seen(kcsim, client, group, 2, members)
        check_description(described, topic, agreed)
        produced = produce(bootstrap, topic, range(PARTITIONS), 10, start=10)
        check_consumed(members, [len(v.records) for v in seen], produced)
    finally:
        for member in members:
            member.close()


# -- 2 and 4: commits outlive their consumer; Admin lists them without naming topics -----


def commits_reach_a_fresh_consumer(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, 3)
    produced = produce(bootstrap, topic, range(3), 10)
    commits = {0: (3, "m0"), 1: (5, "m1"), 2: (7, "m2")}

    first = client.consumer(group, topic, name="first")
    try:
        wait_for(first.view, lambda v: v.assignment == [0, 1, 2], "the first member owns all partitions")
        first.commit(commits)
    finally:
        first.close()

    wait_empty(kcsim, group)
    assert client.offsets(group) == {(topic, p): om for p, om in commits.items()}

    fresh = client.consumer(group, topic, name="fresh")
    try:
        committed = fresh.committed(range(3))
        if client.committed_has_metadata:
            assert committed == commits
        else:
            assert committed == {p: (o, "") for p, (o, _) in commits.items()}
        resumed = [r for r in produced if r[1] >= commits[r[0]][0]]
        check_consumed([fresh], [0], resumed)
    finally:
        fresh.close()


# -- 5: one OffsetFetch (v8+, KIP-709) answers several groups ---------------------------


def offsets_of_many_groups(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic = names("topic")
    create_topic(bootstrap, topic, 3)
    groups = [names(f"group{i}") for i in range(3)]
    expected = {}
    for i, group in enumerate(groups):
        offsets = {p: 10 * i + p + 1 for p in range(i + 1)}
        assert client.alter_offsets(group, topic, offsets) == dict.fromkeys(offsets)
        expected[group] = {(topic, p): (o, "") for p, o in offsets.items()}

    since = kcsim.last_request_seq()
    together = client.offsets_many(groups)
    # OffsetFetch before v8 carries one group: one request for three groups is v8+.
    (fetch,) = kcsim.requests("OffsetFetch", since=since)
    assert fetch.version >= 8 and sorted(fetch.groups) == sorted(groups)
    assert together == expected
    one_by_one = {group: client.offsets(group) for group in groups}
    assert [r.groups for r in kcsim.requests("OffsetFetch", since=fetch.seq)] == [[g] for g in groups]
    assert one_by_one == together


# -- 6: alter and delete offsets, delete the group: only once it is Empty --------------


def admin_changes_only_empty_groups(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, 3)
    produced = produce(bootstrap, topic, range(3), 10)

    member = client.consumer(group, topic, name="running")
    try:
        wait_for(member.view, lambda v: v.assignment == [0, 1, 2], "the member owns all partitions")
        member.commit(dict.fromkeys(range(3), (4, "")))
        if client.can_alter_offsets:
            assert client.alter_offsets(group, topic, {0: 1}) == {0: "UNKNOWN_MEMBER_ID"}
        if client.can_delete_offsets:
            assert client.delete_offsets(group, topic, [0]) == {0: "GROUP_SUBSCRIBED_TO_TOPIC"}
        assert client.delete_groups([group]) == {group: "NON_EMPTY_GROUP"}
        assert client.offsets(group) == {(topic, p): (4, "") for p in range(3)}
    finally:
        member.close()
    wait_empty(kcsim, group)

    expected = {0: 4, 1: 4, 2: 4}
    if client.can_alter_offsets:
        assert client.alter_offsets(group, topic, {0: 1, 1: 2}) == {0: None, 1: None}
        expected.update({0: 1, 1: 2})
    if client.can_delete_offsets:
        assert client.delete_offsets(group, topic, [1]) == {1: None}
        del expected[1]
    assert client.offsets(group) == {(topic, p): (o, "") for p, o in expected.items()}

    again = client.consumer(group, topic, name="again")
    try:
        resumed = [r for r in produced if r[1] >= expected.get(r[0], 0)]
        check_consumed([again], [0], resumed)
    finally:
        again.close()
    wait_empty(kcsim, group)

    assert client.delete_groups([group]) == {group: None}
    assert group not in client.list_groups()
    assert client.offsets(group) == {}
    assert client.delete_groups([group]) == {group: "GROUP_ID_NOT_FOUND"}


# -- 7: a static member restarts without a rebalance -------------------------------------


def static_member_rejoins_quietly(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, PARTITIONS)
    instances = [f"{group}-instance-{i}" for i in range(3)]
    members = [client.consumer(group, topic, name=f"s{i}", instance_id=instances[i], session_ms=30000)
               for i in range(3)]
    try:
        wait_for(lambda: views(members),
                 lambda vs: balanced(vs, PARTITIONS) and all(len(v.assignment) == 2 for v in vs),
                 "three static members with two partitions each")
        described = wait_stable(kcsim, client, group, 3)
        if client.describes_instance_ids:
            assert sorted(m.instance_id or "" for m in described.members) == sorted(instances)
        generation_before = kcsim.wait_for_group(group, "Stable", members=3).generation
        before = views(members)
        described_before = described
        since = kcsim.last_request_seq()

        # Static members do not leave when they close: the restart takes over the membership.
        members[0].close()
        members[0] = client.consumer(group, topic, name="s0-restarted", instance_id=instances[0],
                                     session_ms=30000)
        wait_for(members[0].view, lambda v: v.assignment == before[0].assignment,
                 "the restarted member back on its partitions")
        # A rebalance the rejoin started would show in the others' next heartbeats.
        (sync,) = kcsim.wait_for_request("SyncGroup", group=group, since=since)
        beating: set[int] = set()
        while len(beating) < 2:
            beats = kcsim.wait_for_request("Heartbeat", group=group, since=sync.seq,
                                           count=len(beating) + 1)
            beating = {b.connection for b in beats} - {sync.connection}
        after = views(members)

        assert kcsim.wait_for_group(group, "Stable", members=3).generation == generation_before
        assert kcsim.requests("Heartbeat", since=since, error="REBALANCE_IN_PROGRESS") == []
        for old, new in zip(before[1:], after[1:], strict=True):
            assert new.assignment == old.assignment
            assert new.assigned_events == old.assigned_events, "a member saw a rebalance"
            assert new.generation == old.generation
            assert new.member_id == old.member_id
        if after[0].generation is not None:
            assert after[0].generation == before[0].generation
        joins = kcsim.requests("JoinGroup", group=group, since=since)
        syncs = kcsim.requests("SyncGroup", group=group, since=since)
        assert (len(joins), len(syncs)) == (1, 1), "only the restarted member joins and syncs"

        described = wait_stable(kcsim, client, group, 3)
        kept = described_before.assignments().keys() & described.assignments().keys()
        assert len(kept) == 2, "exactly one member id replaced"
        for member_id in kept:
            assert described.assignments()[member_id] == described_before.assignments()[member_id]
        assert sorted(described.assignments().values()) == sorted(described_before.assignments().values())
        if client.describes_instance_ids:
            was = {m.instance_id: m for m in described_before.members}
            now = {m.instance_id: m for m in described.members}
            assert now[instances[0]].member_id not in kept
            assert {i: now[i].partitions for i in instances} == {i: was[i].partitions for i in instances}

        produced = produce(bootstrap, topic, range(PARTITIONS), 5)
        check_consumed(members, [len(v.records) for v in after], produced)
    finally:
        for member in members:
            member.close()


# -- a static member that does not come back is removed when its session times out ------


def silent_member_expires(client: Any, kcsim: Any, names: Callable[[str], str],
                          session_ms: int) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, PARTITIONS)
    instances = [f"{group}-instance-{i}" for i in range(3)]
    members = [client.consumer(group, topic, name=f"q{i}", instance_id=instances[i],
                               session_ms=session_ms) for i in range(3)]
    try:
        wait_for(lambda: views(members),
                 lambda vs: balanced(vs, PARTITIONS) and all(len(v.assignment) == 2 for v in vs),
                 "three static members with two partitions each")
        wait_stable(kcsim, client, group, 3)
        gone = members.pop(0)
        closed_at = time.monotonic()
        gone.close()
        assert len(client.describe(group).members) == 3, "a static member left on close"
        seen = wait_for(lambda: views(members),
                        lambda vs: covers_exactly(vs, PARTITIONS) and all(len(v.assignment) == 3 for v in vs),
                        "the two others with three partitions each")
        # Its last heartbeat came at most a heartbeat interval before it closed.
        assert time.monotonic() - closed_at >= (session_ms - HEARTBEAT_MS - 100) / 1000
        described = wait_stable(kcsim, client, group, 2)
        check_description(described, topic, seen)
        if client.describes_instance_ids:
            assert sorted(m.instance_id or "" for m in described.members) == instances[1:]
    finally:
        for member in members:
            member.close()


# -- Admin removes a static member that is gone (KIP-345) ---------------------------------


def admin_removes_departed_static_member(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, PARTITIONS)
    instances = [f"{group}-instance-{i}" for i in range(3)]
    members = [client.consumer(group, topic, name=f"r{i}", instance_id=instances[i],
                               session_ms=30000) for i in range(3)]
    try:
        wait_for(lambda: views(members),
                 lambda vs: balanced(vs, PARTITIONS) and all(len(v.assignment) == 2 for v in vs),
                 "three static members with two partitions each")
        wait_stable(kcsim, client, group, 3)
        members.pop(0).close()
        assert len(client.describe(group).members) == 3, "a static member left on close"
        assert client.remove_members(group, [instances[0]]) == {instances[0]: None}
        # Long before its 30 s session would time out, the others take over.
        seen = wait_for(lambda: views(members),
                        lambda vs: covers_exactly(vs, PARTITIONS) and all(len(v.assignment) == 3 for v in vs),
                        "the two others with three partitions each", timeout=10)
        described = wait_stable(kcsim, client, group, 2)
        check_description(described, topic, seen)
        assert sorted(m.instance_id or "" for m in described.members) == instances[1:]
        assert client.remove_members(group, [instances[0]]) == {instances[0]: "UNKNOWN_MEMBER_ID"}
    finally:
        for member in members:
            member.close()


# -- offsets expire only once the group is Empty (KIP-211) --------------------------------


def offsets_expire_once_empty(client: Any, kcsim: Any, names: Callable[[str], str]) -> None:
    """The broker's clock is advanced instead of waiting out the retention time
    (offsets_retention_ms, a few seconds: less than a session time-out)."""
    bootstrap = kcsim.bootstrap
    retention_ms = kcsim.config.offsets_retention_ms
    check_ms = kcsim.config.offsets_retention_check_interval_ms
    assert 2 * retention_ms < SESSION_MS, "the members' sessions must outlive the advance"
    topic, group = names("topic"), names("group")
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, range(3), 5)
    committed = {(topic, p): 5 for p in range(3)}

    member = client.consumer(group, topic, name="retained")
    try:
        wait_for(member.view, lambda v: v.assignment == [0, 1, 2] and len(v.records) == 15,
                 "the member consumed all partitions")
        member.commit()
        kcsim.clock.advance(retention_ms + 2 * check_ms)  # retention passes while it consumes
        assert client.describe(group).state == "Stable"
        assert {tp: o for tp, (o, _) in client.offsets(group).items()} == committed
    finally:
        member.close()

    assert client.describe(group).state == "Empty"
    assert {tp: o for tp, (o, _) in client.offsets(group).items()} == committed
    kcsim.clock.advance(retention_ms - 2 * check_ms)  # not yet retention_ms since Empty
    assert {tp: o for tp, (o, _) in client.offsets(group).items()} == committed
    kcsim.clock.advance(3 * check_ms)
    assert kcsim.wait_for_committed(group, {}) == {}
    assert client.offsets(group) == {}
    assert group not in client.list_groups()
    if client.describes_unknown_as_dead:
        gone = client.describe(group)
        assert (gone.state, gone.members) == ("Dead", [])
    else:
        with pytest.raises(AssertionError, match="GROUP_ID_NOT_FOUND"):
            client.describe(group)


# -- every client in one group -------------------------------------------------------------


def one_group_of_every_client(clients: list[Any], kcsim: Any,
                              names: Callable[[str], str]) -> None:
    """Members of every library split the partitions (all offer the range assignor), consume
    and commit; every library's Admin then reads the same committed offsets."""
    bootstrap = kcsim.bootstrap
    topic, group = names("topic"), names("group")
    partitions = 2 * len(clients)
    create_topic(bootstrap, topic, partitions)
    members = [c.consumer(group, topic, name=f"mixed-{i}", assignor="range")
               for i, c in enumerate(clients)]
    try:
        seen = wait_for(lambda: views(members),
                        lambda vs: balanced(vs, partitions) and all(len(v.assignment) == 2 for v in vs),
                        f"{len(clients)} members of different clients with two partitions each")
        for client in clients:
            described, agreed = described_as_seen(kcsim, client, group, len(clients), members)
            check_description(described, topic, agreed)
        produced = produce(bootstrap, topic, range(partitions), 10)
        check_consumed(members, [len(v.records) for v in seen], produced)
        for member in members:
            member.commit()
    finally:
        for member in members:
            member.close()
    for client in clients:
        assert client.describe(group).state == "Empty", client.name
        found = {tp: offset for tp, (offset, _) in client.offsets(group).items()}
        assert found == {(topic, p): 10 for p in range(partitions)}, client.name
