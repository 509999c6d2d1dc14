"""kcsim.testing's group view and wait_for_group for a streams group (KIP-1071): each member
with its active, standby and warm-up tasks, in Python and over the HTTP control."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import trio

from kcsim.server.embedded import EmbeddedServer
from kcsim.testing import MemberView, TasksView, WaitTimeout
from tests.admin.streams_app import STREAMS_SETTINGS, StreamsApp

from .test_http_api import call


def test_the_view_shows_each_members_tasks() -> None:
    with EmbeddedServer(**STREAMS_SETTINGS, streams_group_num_standby_replicas=1) as kcsim:
        app = StreamsApp(kcsim.bootstrap, "wc", "words")
        app.beat("a")
        with pytest.raises(WaitTimeout, match=r"group 'wc' to be Stable and 2 members; it is "
                           r"\w+ \(streams, generation \d+\) with 1 members: durability active"):
            kcsim.wait_for_group("wc", "Stable", members=2, timeout=0.2)
        app.settle(["a", "b"])
        view = kcsim.wait_for_group("wc", "Stable", members=2, timeout=5)
        assert view is not None and view.type == "streams"
        members = {m.member_id: m for m in view.members}
        for name, member in members.items():
            tasks = member.tasks
            assert tasks == TasksView(active=sorted(app.owned[name]["active"]),
                                      standby=sorted(app.owned[name]["standby"]), warmup=[])
            # A member's partitions: those of the input topic its active tasks read.
            assert member.partitions == sorted(("words", p) for s, p in tasks.active if s == "0")
        standby = [t for m in members.values() for t in m.tasks.standby]
        assert sorted(standby) == [("1", p) for p in range(3)]

        app.leave("a")
        app.leave("b")
        assert kcsim.wait_for_group("wc", "Empty", timeout=5).members == []
        app.close()


@pytest.mark.kcsim(**STREAMS_SETTINGS)
async def test_the_http_control_shows_the_tasks(kcsim_trio: Any) -> None:
    app = await trio.to_thread.run_sync(
        lambda: StreamsApp(kcsim_trio.bootstrap, "wc", "words").settle(["a"]))
    try:
        await kcsim_trio.wait_for_group("wc", "Stable", members=1, timeout=5)
        status, _, answer = await call(kcsim_trio, "GET", "/state/members", query="group=wc")
    finally:
        app.close()
    assert status == 200
    (member,) = answer["members"]
    assert member["tasks"] == {"active": [[s, p] for s in "01" for p in range(3)],
                               "standby": [], "warmup": []}


def test_other_members_have_no_tasks_field() -> None:
    member = MemberView(member_id="m", instance_id=None, client_id="c", client_host="h",
                        partitions=[("t", 0)])
    assert msgspec.to_builtins(member) == {"member_id": "m", "instance_id": None,
                                           "client_id": "c", "client_host": "h",
                                           "partitions": [("t", 0)]}
