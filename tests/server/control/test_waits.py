"""Waits return as soon as their condition holds, woken by the broker's change notices
(never by polling), and a wait that times out shows the state it saw."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import trio

from kcsim.admin import AdminClient, TopicPartition
from kcsim.server.control import waits
from kcsim.testing import WaitTimeout

from .. import rawgroup
from ..rawgroup import RawMember, connect


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def commit(bootstrap: str, group: str, offsets: dict[TopicPartition, int]) -> None:
    with AdminClient(bootstrap, timeout=10) as admin:
        admin.alter_group_offsets(group, offsets).all()


def test_a_blocking_wait_returns_once_another_thread_commits(kcsim: Any) -> None:
    tp = TopicPartition("t", 0)
    create_topic(kcsim.bootstrap, "t", 1)
    committer = threading.Thread(target=commit, args=(kcsim.bootstrap, "g", {tp: 42}))
    committer.start()
    try:
        assert kcsim.wait_for_committed("g", {("t", 0): 42}) == {("t", 0): 42}
    finally:
        committer.join()
    assert kcsim.wait_for_request("OffsetCommit", group="g")[0].errors == []


def test_a_wait_looks_again_only_when_the_state_may_have_changed(
        kcsim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kcsim.clock.advance(0)  # the coordinator's first tick, due at start, is done
    looks: list[str] = []
    real = waits.committed_view
    monkeypatch.setattr(waits, "committed_view", lambda *a: looks.append("look") or real(*a))
    with pytest.raises(WaitTimeout):
        kcsim.wait_for_committed("g", {("t", 0): 1}, timeout=0.5)
    assert looks == ["look"]  # nothing happened on the broker: no second look


def test_timeouts_show_what_the_wait_saw(kcsim: Any) -> None:
    create_topic(kcsim.bootstrap, "t", 2)
    commit(kcsim.bootstrap, "g", {TopicPartition("t", 0): 5, TopicPartition("t", 1): 6})
    with pytest.raises(WaitTimeout, match=r"committed offsets \{t:0=7\} in group 'g'; "
                                          r"committed now: \{t:0=5, t:1=6\}"):
        kcsim.wait_for_committed("g", {("t", 0): 7}, timeout=0.2)
    with pytest.raises(WaitTimeout, match=r"group 'g' to be Stable and 2 members; it is Empty "
                                          r"\(classic, generation 0\) with 0 members"):
        kcsim.wait_for_group("g", "Stable", members=2, timeout=0.2)
    with pytest.raises(WaitTimeout, match=r"there is no such group"):
        kcsim.wait_for_group("nope", timeout=0.2)
    assert kcsim.wait_for_group("nope", "Dead", timeout=0.2) is None
    with pytest.raises(WaitTimeout, match=r"2 request\(s\) with api='OffsetCommit'.*1 matching "
                                          r"requests seen: #\d+ OffsetCommit v\d+ from "
                                          r"'kcsim-admin\S*' groups=\['g'\] no error"):
        kcsim.wait_for_request("OffsetCommit", count=2, timeout=0.2)


@pytest.mark.kcsim(initial_rebalance_delay_ms=3000)
async def test_trio_waits_see_members_join(autojump_clock: Any, kcsim_trio: Any) -> None:
    wire = await connect(kcsim_trio.port)
    await rawgroup.create_topic(wire, "t", 2)
    members = [RawMember(await connect(kcsim_trio.port), "g", "t") for _ in range(2)]
    async with trio.open_nursery() as nursery:
        for member in members:
            nursery.start_soon(member.join)
        view = await kcsim_trio.wait_for_group("g", "CompletingRebalance", members=2)
    assert sorted(m.member_id for m in view.members) == sorted(m.member_id for m in members)
    with pytest.raises(WaitTimeout, match="it is CompletingRebalance"):
        await kcsim_trio.wait_for_group("g", "Stable", timeout=1)
