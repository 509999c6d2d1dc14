"""The group event log over HTTP: GET /events (filters, paging by `next`, a long poll),
its refusals (400 naming the field), GET /state/lag, and GET /events/stream, served by
hypercorn inside the broker's run: server-sent events, a keep-alive comment, and a
reader that does not read is dropped while the broker goes on answering."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import h11
import msgspec
import pytest
import trio
import trio.testing

from kcsim.server.control.http_events import EventStream
from kcsim.server.control.http_server import serve_control

from .test_http_api import call
from .written_events import write_event, write_events

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

SOME = [
    {"group": "g1", "kind": "group-created"},
    {"group": "g1", "kind": "member-joined", "member": "m1"},
    {"group": "g2", "kind": "member-joined", "member": "m2", "group_type": "classic"},
    {"group": "g1", "kind": "member-left", "cause": "session-timeout", "member": "m1"},
]


def fields(seq: int, group: str, kind: str, time_ms: int, cause: str = "", member: str = "",
           group_type: str = "consumer") -> dict[str, Any]:
    return {"seq": seq, "time_ms": time_ms, "group": group, "group_type": group_type,
            "kind": kind, "cause": cause, "member": member, "detail": {}}


async def test_events_are_filtered_and_paged_by_next(kcsim_trio: Any) -> None:
    kcsim_trio.clock.freeze()
    now = kcsim_trio.clock.now_ms()
    start = kcsim_trio.next_event_seq()
    write_events(kcsim_trio.server, SOME)
    status, _, answer = await call(kcsim_trio, "GET", "/events", query=f"group=g1&since={start}")
    assert status == 200
    assert answer == {"events": [
        fields(start, "g1", "group-created", now),
        fields(start + 1, "g1", "member-joined", now, member="m1"),
        fields(start + 3, "g1", "member-left", now, "session-timeout", "m1")],
        "next": start + 4}
    _, _, answer = await call(kcsim_trio, "GET", "/events",
                              query=f"type=classic&kind=member-joined&since={start}")
    assert [e["group"] for e in answer["events"]] == ["g2"]
    _, _, page = await call(kcsim_trio, "GET", "/events", query=f"since={start}&limit=2")
    assert ([e["seq"] for e in page["events"]], page["next"]) == ([start, start + 1], start + 2)
    _, _, page = await call(kcsim_trio, "GET", "/events", query=f"since={page['next']}&limit=2")
    assert ([e["seq"] for e in page["events"]], page["next"]) == (
        [start + 2, start + 3], start + 4)
    _, _, page = await call(kcsim_trio, "GET", "/events", query=f"since={page['next']}")
    assert page == {"events": [], "next": start + 4}


@pytest.mark.parametrize(("query", "field", "message"), [
    ("kind=exploded", "kind", "kind: unknown event kind 'exploded' (one of: group-created, "),
    ("type=queue", "type", "type: unknown group type 'queue' (one of: classic, consumer, "),
    ("since=abc", "since", "since: expected an integer, got 'abc'"),
    ("since=-2", "since", "since: expected an event number >= 0, got -2"),
    ("limit=many", "limit", "limit: expected an integer, got 'many'"),
    ("limit=0", "limit", "limit: expected an integer >= 1, got 0"),
    ("wait_ms=soon", "wait_ms", "wait_ms: expected an integer, got 'soon'"),
    ("wait_ms=-1", "wait_ms", "wait_ms: expected an integer >= 0 and <= 300000, got -1"),
    ("grup=g1", "grup", "grup: not a field of GET /events (fields: group, kind, type, since, "),
])
async def test_a_bad_filter_is_400_naming_the_field(kcsim_trio: Any, query: str, field: str,
                                                   message: str) -> None:
    status, _, answer = await call(kcsim_trio, "GET", "/events", query=query)
    assert (status, answer["field"]) == (400, field)
    assert answer["error"].startswith(message)


async def test_a_long_poll_answers_once_a_matching_event_folds_in(kcsim_trio: Any) -> None:
    since = kcsim_trio.next_event_seq()
    answers: list[Any] = []

    async def poll() -> None:
        answers.append(await call(kcsim_trio, "GET", "/events",
                                  query=f"group=g&kind=stable&since={since}&wait_ms=60000"))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(poll)
        await trio.testing.wait_all_tasks_blocked()
        write_event(kcsim_trio.server, "g", "member-joined")  # not what it waits for
        await trio.testing.wait_all_tasks_blocked()
        assert answers == []
        write_event(kcsim_trio.server, "g", "stable")
    [(status, _, answer)] = answers
    assert status == 200
    assert [(e["kind"], e["seq"]) for e in answer["events"]] == [("stable", since + 1)]
    assert answer["next"] == since + 2


async def test_a_long_poll_with_nothing_to_say_answers_empty_when_its_time_is_up(
        autojump_clock: Any, kcsim_trio: Any) -> None:
    since = kcsim_trio.next_event_seq()
    before = trio.current_time()
    status, _, answer = await call(kcsim_trio, "GET", "/events",
                                   query=f"group=nobody&since={since}&wait_ms=30000")
    assert (status, answer) == (200, {"events": [], "next": since})
    assert trio.current_time() - before == pytest.approx(30.0)


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, len(counts), 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for partition, count in counts.items():
        for i in range(count):
            producer.produce(topic, b"%d" % i, partition=partition)
    assert producer.flush(10) == 0


def commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    from kcsim.admin import AdminClient, TopicPartition

    with AdminClient(bootstrap, timeout=10) as admin:
        admin.alter_group_offsets(
            group, {TopicPartition(topic, p): o for p, o in offsets.items()}).all()


async def test_lag_is_the_log_end_minus_the_committed_offset(kcsim_trio: Any) -> None:
    await trio.to_thread.run_sync(produce, kcsim_trio.bootstrap, "orders", {0: 5, 1: 3})
    await trio.to_thread.run_sync(commit, kcsim_trio.bootstrap, "billing", "orders", {0: 2, 1: 3})
    status, _, answer = await call(kcsim_trio, "GET", "/state/lag", query="group=billing")
    assert (status, answer) == (200, {"lag": [
        {"group": "billing", "topic": "orders", "partition": 0, "committed": 2, "log_end": 5,
         "lag": 3},
        {"group": "billing", "topic": "orders", "partition": 1, "committed": 3, "log_end": 3,
         "lag": 0}]})
    assert [(v.partition, v.lag) for v in kcsim_trio.lag("billing")] == [(0, 3), (1, 0)]
    _, _, everyone = await call(kcsim_trio, "GET", "/state/lag")
    assert everyone == answer


async def test_a_stream_that_is_idle_sends_keep_alive_comments(kcsim_trio: Any) -> None:
    sent: list[dict[str, Any]] = []
    stream = EventStream(kcsim_trio.event_feed(since=kcsim_trio.next_event_seq()),
                         keep_alive_s=0.01)
    done = trio.Event()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if len(sent) == 3:
            done.set()

    async def receive() -> dict[str, Any]:
        await done.wait()
        return {"type": "http.disconnect"}

    await stream.respond(send, receive)  # type: ignore[arg-type]
    start, *bodies = sent
    assert start["status"] == 200
    assert (b"content-type", b"text/event-stream; charset=utf-8") in start["headers"]
    assert [b["body"] for b in bodies[:2]] == [b": keep-alive\n\n"] * 2


# -- through hypercorn, with real sockets --------------------------------------------------


class Reader:
    """An HTTP/1.1 client of one request, by h11 over a trio socket."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)

    @classmethod
    async def get(cls, port: int, target: str) -> Reader:
        reader = cls(await trio.open_tcp_stream("127.0.0.1", port))
        await reader.stream.send_all(reader.conn.send(h11.Request(
            method="GET", target=target, headers=[("host", "kcsim")])) or b"")
        await reader.stream.send_all(reader.conn.send(h11.EndOfMessage()) or b"")
        return reader

    async def next_event(self) -> Any:
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await self.stream.receive_some(65536))
                continue
            return event

    async def response(self) -> h11.Response:
        event = await self.next_event()
        assert isinstance(event, h11.Response), event
        return event

    async def body(self) -> AsyncIterator[bytes]:
        """The body's pieces until it ends or the connection breaks."""
        while True:
            try:
                event = await self.next_event()
            except (h11.RemoteProtocolError, trio.BrokenResourceError):
                return
            if not isinstance(event, h11.Data):
                return
            yield bytes(event.data)


async def sse_messages(reader: Reader) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    buffer = b""
    async for piece in reader.body():
        buffer += piece
        while b"\n\n" in buffer:
            message, buffer = buffer.split(b"\n\n", 1)
            lines = dict(line.split(b": ", 1) for line in message.split(b"\n")
                         if not line.startswith(b":"))
            if lines:
                yield int(lines[b"id"]), json.loads(lines[b"data"])


@pytest.fixture
async def control_port(kcsim_trio: Any, nursery: trio.Nursery) -> int:
    [url] = await nursery.start(serve_control, kcsim_trio.server, "127.0.0.1", 0)
    return int(url.rsplit(":", 1)[1])


async def test_the_stream_sends_the_backlog_then_each_event_as_it_folds_in(
        kcsim_trio: Any, control_port: int) -> None:
    start = kcsim_trio.next_event_seq()
    write_events(kcsim_trio.server, SOME)
    reader = await Reader.get(control_port, f"/events/stream?group=g1&since={start + 1}")
    response = await reader.response()
    assert response.status_code == 200
    assert dict(response.headers)[b"content-type"] == b"text/event-stream; charset=utf-8"
    messages = sse_messages(reader)
    seen = [await anext(messages) for _ in range(2)]
    assert [(seq, e["kind"]) for seq, e in seen] == [
        (start + 1, "member-joined"), (start + 3, "member-left")]
    assert seen[1][1] == fields(start + 3, "g1", "member-left", seen[1][1]["time_ms"],
                                "session-timeout", "m1")
    write_event(kcsim_trio.server, "g2", "stable")  # another group's: not sent
    write_event(kcsim_trio.server, "g1", "stable")
    seq, event = await anext(messages)
    assert (seq, event["group"], event["kind"]) == (start + 5, "g1", "stable")
    await reader.stream.aclose()


async def test_a_bad_stream_filter_is_400_naming_the_field(
        kcsim_trio: Any, control_port: int) -> None:
    reader = await Reader.get(control_port, "/events/stream?kind=exploded")
    response = await reader.response()
    body = b"".join([piece async for piece in reader.body()])
    assert (response.status_code, msgspec.json.decode(body)["field"]) == (400, "kind")


async def test_a_reader_that_never_reads_is_dropped_and_holds_nothing_back(
        kcsim_trio: Any, control_port: int) -> None:
    history = kcsim_trio.server.broker.groups.events
    listening = len(history._listeners)
    start = kcsim_trio.next_event_seq()
    stuck = await Reader.get(control_port, f"/events/stream?since={start}")
    keeping_up = await Reader.get(control_port, f"/events/stream?since={start}")
    assert (await keeping_up.response()).status_code == 200
    padding = "x" * 1000  # fills the stuck reader's socket buffers sooner
    total = 3_000
    received: list[int] = []

    async def keep_up() -> None:
        async for seq, _ in sse_messages(keeping_up):
            received.append(seq)
            if seq == start + total - 1:
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(keep_up)
        for i in range(total):
            write_event(kcsim_trio.server, "g", "offsets-committed", detail={"pad": padding})
            if i % 100 == 99:
                await trio.testing.wait_all_tasks_blocked()  # the readers have their turn
    assert received == list(range(start, start + total))  # the reader that reads has all
    _, _, clock = await call(kcsim_trio, "GET", "/clock")  # the broker answers on
    assert set(clock) == {"now_ms", "frozen"}
    assert len(history._listeners) == listening + 1  # the stuck one's feed is gone
    # What the stuck reader finds when it reads at last: a stream cut off part way.
    assert (await stuck.response()).status_code == 200
    seqs = [seq async for seq, _ in sse_messages(stuck)]
    assert seqs == list(range(start, start + len(seqs)))
    assert 0 < len(seqs) < total
    await keeping_up.stream.aclose()


async def test_the_control_api_stops_though_a_reader_takes_nothing(kcsim_trio: Any) -> None:
    history = kcsim_trio.server.broker.groups.events
    listening = len(history._listeners)
    async with trio.open_nursery() as nursery:
        [url] = await nursery.start(serve_control, kcsim_trio.server, "127.0.0.1", 0)
        stuck = await Reader.get(int(url.rsplit(":", 1)[1]), "/events/stream")
        padding = "x" * 1000
        for _ in range(800):  # more than its socket holds, less than its feed: not dropped
            write_event(kcsim_trio.server, "g", "offsets-committed", detail={"pad": padding})
        await trio.testing.wait_all_tasks_blocked()
        assert len(history._listeners) == listening + 1
        stopping = trio.current_time()
        nursery.cancel_scope.cancel()  # as at a shutdown: hypercorn gives 0.5 s of grace
    assert trio.current_time() - stopping < 5
    assert len(history._listeners) == listening
    await stuck.stream.aclose()
