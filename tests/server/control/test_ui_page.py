"""The live group page (GET /ui) in a real headless Chromium, open while things happen:
a consumer group appears with its member and its lag per partition, and a pause shows in
the timeline and on the group. The page's screenshot is kept in the test's directory."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import trio

from kcsim.server.control.http_server import serve_control

from .devtools import open_browser
from .test_http_events import produce
from .written_events import write_event

TOPIC, GROUP = "orders", "billing"
SCREENSHOT = Path(__file__).resolve().parents[3] / "docs" / "observability-ui.png"


def consume(bootstrap: str, joined: threading.Event, stop: threading.Event) -> None:
    """A classic consumer of GROUP: joins, commits 2 on partition 0 and 3 on partition 1
    once assigned, and stays in the group until `stop`."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP,
                         "client.id": "billing-worker", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 45000})
    try:
        consumer.subscribe([TOPIC])
        while not stop.is_set():
            consumer.poll(0.1)
            if not joined.is_set() and len(consumer.assignment()) == 2:
                consumer.commit(offsets=[TopicPartition(TOPIC, 0, 2), TopicPartition(TOPIC, 1, 3)],
                                asynchronous=False)
                joined.set()
    finally:
        consumer.close()


def pause(bootstrap: str, partitions: list[int]) -> None:
    from kcsim.admin import AdminClient, TopicPartition

    with AdminClient(bootstrap, timeout=10) as admin:
        admin.pause_partitions(GROUP, [TopicPartition(TOPIC, p) for p in partitions]).all()


def stand_in_events(kcsim: Any, *events: tuple[str, str, str, dict[str, Any]]) -> None:
    """Events of the group (kind, cause, member, detail), written as its coordinator
    writes them."""
    for kind, cause, member, detail in events:
        write_event(kcsim.server, GROUP, kind, cause, "classic", member, detail)


async def test_the_page_shows_a_group_appear_its_lag_and_a_pause(
        kcsim_trio: Any, tmp_path: Path, nursery: trio.Nursery) -> None:
    [control] = await nursery.start(serve_control, kcsim_trio.server, "127.0.0.1", 0)
    await trio.to_thread.run_sync(produce, kcsim_trio.bootstrap, TOPIC, {0: 5, 1: 3})
    async with open_browser(tmp_path / "profile", 1200, 520) as page:
        await page.goto(f"{control}/ui")
        await page.wait_for('#status[data-state="live"]')
        assert await page.wait_for("#no-groups") == "No groups yet."

        joined, stop = threading.Event(), threading.Event()
        async with trio.open_nursery() as clients:
            clients.start_soon(trio.to_thread.run_sync, consume, kcsim_trio.bootstrap, joined,
                               stop)
            try:
                await trio.to_thread.run_sync(joined.wait, 30)
                view = await kcsim_trio.wait_for_group(GROUP, "Stable", members=1)
                member = view.members[0].member_id
                stand_in_events(kcsim_trio, ("group-created", "", "", {}),
                                ("member-joined", "", member, {}), ("stable", "", "", {}))
                card = f'section.group[data-group="{GROUP}"]'
                text = await page.wait_for(f'{card}[data-state="Stable"][data-members="1"]')
                assert "billing-worker" in text and "orders-0, orders-1" in text
                assert await page.wait_for(f'{card} tr.member[data-member="{member}"]')
                lag0 = await page.wait_for(f'{card} tr.lag[data-topic="{TOPIC}"]'
                                           '[data-partition="0"][data-lag="3"]')
                lag1 = await page.wait_for(f'{card} tr.lag[data-topic="{TOPIC}"]'
                                           '[data-partition="1"][data-lag="0"]')
                assert lag0.split() == [f"{TOPIC}-0", "2", "5", "3"]
                assert lag1.split() == [f"{TOPIC}-1", "3", "3", "0"]

                await trio.to_thread.run_sync(pause, kcsim_trio.bootstrap, [1])
                stand_in_events(kcsim_trio, ("partitions-paused", "request", "",
                                             {"topic": TOPIC, "partitions": ["1"]}))
                paused = await page.wait_for(
                    f'#timeline li.event[data-kind="partitions-paused"][data-group="{GROUP}"]')
                assert "partitions-paused" in paused and "(request)" in paused
                assert await page.wait_for(
                    f'{card} ul.paused li[data-topic="{TOPIC}"][data-partition="1"]') == (
                    f"{TOPIC}-1")
                # The paused partition leaves the assignment at the rebalance the pause starts.
                assert await page.wait_for(
                    f'{card}[data-state="Stable"] tr.member td.partitions') == f"{TOPIC}-0"
                shown = await page.evaluate(
                    "[...document.querySelectorAll('#timeline li.event')]"
                    ".map(e => [Number(e.dataset.seq), e.dataset.kind])")
                seqs = [seq for seq, _ in shown]
                assert seqs == sorted(seqs, reverse=True)  # the newest first
                assert {"group-created", "member-joined", "stable", "partitions-paused"} <= {
                    kind for _, kind in shown}
                shot = await page.screenshot(tmp_path / "ui.png")
                print(f"the live page: {shot}")
            finally:
                stop.set()
    assert shot.stat().st_size > 10_000
    if os.environ.get("KCSIM_UPDATE_SCREENSHOT"):  # refresh the docs' picture on request
        shutil.copyfile(shot, SCREENSHOT)
