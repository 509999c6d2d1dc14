"""KIP-1249 in consumer groups: pause, reset while running, resume, and what survives a restart."""

from __future__ import annotations

from kcsim.protocol.errors import ErrorCode as E

from .consumer_harness import Client, Harness, ownership, settle


def running_group(h: Harness, n: int = 3) -> list[Client]:
    clients = [Client(h, "g") for _ in range(n)]
    for c in clients:
        c.join()
    settle(clients)
    return clients


def errors(response: object) -> dict[tuple[str, int], int]:
    return {(t.topic_name, p.partition_index): p.error_code
            for t in response.responses for p in t.partitions}


def paused_listing(h: Harness, group: str) -> dict[tuple[str, int], int]:
    r = h.list_paused(group)
    assert r.error_code == 0
    return {(t.name, p.partition_index): p.offset for t in r.topics for p in t.partitions}


def test_paused_partitions_leave_the_target_and_members_revoke_them_at_their_next_heartbeat() -> None:
    h = Harness()
    clients = running_group(h)
    holders = {c.member_id: c for c in clients}
    owner_of_0 = holders[ownership(h, "g")[("t", 0)]]

    r = h.pause("g", {"t": [0, 1]})
    assert errors(r) == {("t", 0): 0, ("t", 1): 0}
    targets = h.gc.consumer_group("g").target
    paused_id = h.topics.ids["t"]
    assert all(not ({0, 1} & a.get(paused_id, frozenset())) for a in targets.values())

    reply = owner_of_0.beat()
    assert reply.assignment is not None
    assert ("t", 0) not in owner_of_0.partitions()
    settle(clients)
    owned = ownership(h, "g")
    assert ("t", 0) not in owned and ("t", 1) not in owned
    assert len(owned) == 4
    assert h.gc.group_state("g") == "Stable"


def test_admin_resets_paused_partitions_only_while_the_group_runs() -> None:
    h = Harness()
    clients = running_group(h)
    c0 = clients[0]
    for c in clients:
        h.commit("g", {("t", p): 10 for p in range(6)}, epoch=c.epoch, member_id=c.member_id)
    h.pause("g", {"t": [0, 1]})
    settle(clients)

    result = h.commit("g", {("t", 0): 2, ("t", 1): 3, ("t", 2): 4})
    assert result == {("t", 0): 0, ("t", 1): 0, ("t", 2): E.UNKNOWN_MEMBER_ID}
    assert paused_listing(h, "g") == {("t", 0): 2, ("t", 1): 3}
    assert h.gc.committed_offsets("g")[("t", 2)].offset == 10
    assert c0.beat().error_code == 0


def test_resume_puts_partitions_back_and_the_new_owner_starts_from_the_reset_offset() -> None:
    h = Harness()
    clients = running_group(h, 2)
    h.pause("g", {"t": [3]})
    settle(clients)
    h.commit("g", {("t", 3): 0})
    assert h.resume("g", {"t": [3]}).error_code == 0
    settle(clients)
    assert ("t", 3) in ownership(h, "g")
    assert h.fetch("g")[1][("t", 3)] == 0
    assert paused_listing(h, "g") == {}


def test_pausing_twice_and_resuming_what_is_not_paused_change_nothing() -> None:
    h = Harness()
    running_group(h, 1)
    h.pause("g", {"t": [0]})
    written = len(h.records)
    epoch = h.gc.consumer_group("g").group_epoch
    assert errors(h.pause("g", {"t": [0]})) == {("t", 0): 0}
    assert errors(h.resume("g", {"t": [5]})) == {("t", 5): 0}
    assert len(h.records) == written
    assert h.gc.consumer_group("g").group_epoch == epoch


def test_unknown_groups_topics_and_partitions() -> None:
    h = Harness()
    running_group(h, 1)
    r = h.pause("nope", {"t": [0]})
    assert (r.error_code, r.error_message) == (E.GROUP_ID_NOT_FOUND, "Group nope not found.")
    assert h.list_paused("nope").error_code == E.GROUP_ID_NOT_FOUND
    assert h.resume("nope", {"t": [0]}).error_code == E.GROUP_ID_NOT_FOUND
    r = h.pause("g", {"t": [0, 6], "missing": [0]})
    assert r.error_code == 0
    assert errors(r) == {("t", 0): 0, ("t", 6): E.UNKNOWN_TOPIC_OR_PARTITION,
                         ("missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION}


def test_list_paused_reports_the_committed_offset_or_minus_one() -> None:
    h = Harness()
    running_group(h, 1)
    h.pause("g", {"t": [1, 2], "u": [0]})
    h.commit("g", {("t", 1): 7})
    assert paused_listing(h, "g") == {("t", 1): 7, ("t", 2): -1, ("u", 0): -1}


def test_pauses_of_an_empty_group_apply_when_members_come() -> None:
    h = Harness()
    h.commit("g", {("t", 0): 1})  # a group that only holds offsets
    assert h.pause("g", {"t": [0, 1, 2]}).error_code == 0
    a = Client(h, "g")
    a.join()
    assert a.partitions() == {("t", 3), ("t", 4), ("t", 5)}


def test_the_pause_survives_a_restart_and_still_holds() -> None:
    h = Harness()
    clients = running_group(h, 2)
    h.pause("g", {"t": [0, 1]})
    settle(clients)
    h.restart()
    assert paused_listing(h, "g") == {("t", 0): -1, ("t", 1): -1}
    settle(clients)
    assert ("t", 0) not in ownership(h, "g")
    newcomer = Client(h, "g")
    newcomer.join()
    settle([*clients, newcomer])
    owned = ownership(h, "g")
    assert ("t", 0) not in owned and ("t", 1) not in owned
    h.resume("g", {"t": [0, 1]})
    settle([*clients, newcomer])
    assert len(ownership(h, "g")) == 6


def test_deleting_the_group_clears_its_pauses() -> None:
    h = Harness()
    clients = running_group(h, 1)
    h.pause("g", {"t": [0]})
    clients[0].leave()
    assert h.delete_groups("g") == {"g": 0}
    assert h.list_paused("g").error_code == E.GROUP_ID_NOT_FOUND
    Client(h, "g").join()
    assert paused_listing(h, "g") == {}
    assert paused_listing_after_restart(h) == {}


def paused_listing_after_restart(h: Harness) -> dict:
    h.restart()
    return paused_listing(h, "g")


def test_deleting_a_topic_clears_its_pauses() -> None:
    h = Harness()
    running_group(h, 1)
    h.pause("g", {"t": [0], "u": [1]})
    topic_id = h.topics.delete("u")
    outcome = h.gc.topic_deleted(topic_id)
    assert outcome.responses == []
    h.records.extend(outcome.records)
    assert paused_listing(h, "g") == {("t", 0): -1}
    h.topics.create("u", 3)
    assert paused_listing(h, "g") == {("t", 0): -1}, "a new topic of the same name is not paused"
    assert h.replayed().paused_partitions("g") == {"t": {0}}


def test_a_topic_deleted_while_the_log_was_written_is_forgotten_at_start_up() -> None:
    h = Harness()
    running_group(h, 1)
    h.pause("g", {"u": [1]})
    h.topics.delete("u")
    h.restart()
    assert paused_listing(h, "g") == {}
    assert h.records[-1].value is None, "the start-up clean-up is written to the log"
