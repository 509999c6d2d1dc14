"""A request that makes a handler raise is answered UNKNOWN_SERVER_ERROR; nobody else notices.

The test hook wraps a few handlers so that they raise for requests of one client
id ("faulty"); a confluent-kafka group keeps consuming and committing on the
same broker the whole time, and nothing it produced or committed is lost.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from ..durability.wire import OFFSET_COMMIT, OFFSET_FETCH, Wire, commit_request, fetch_request
from .ck_members import Member, SteadyProducer, wait_for
from .groupkit import create_topic

if TYPE_CHECKING:
    from collections.abc import Callable

UNKNOWN_SERVER_ERROR = ErrorCode.UNKNOWN_SERVER_ERROR
DESCRIBE_GROUPS, METADATA, CREATE_TOPICS, LIST_OFFSETS = 15, 3, 19, 2


def make_faulty(srv: Any, api_keys: list[int]) -> None:
    """Handlers of these APIs raise for requests whose client id is "faulty"."""

    def rewire() -> None:
        broker = srv.server.broker
        for key in api_keys:
            route = broker.routes[key]

            def failing(b: Any, ctx: Any, request: Any, _fn: Callable[..., Any] = route.fn) -> Any:
                if ctx.client_id == "faulty":
                    raise RuntimeError("injected handler bug")
                return _fn(b, ctx, request)

            broker.routes[key] = dataclasses.replace(route, fn=failing)
        broker._plans.clear()

    srv.run_sync(rewire)


class FaultyWire(Wire):
    """A raw connection whose requests carry the client id "faulty"."""

    def send(self, api_key: int, version: int, request: Any) -> int:
        from kcsim.protocol.apis import APIS
        from kcsim.protocol.codecs import codec
        from kcsim.protocol.headers import (
            RequestHeader,
            encode_request_header,
            request_header_version,
        )

        self._corr += 1
        header = encode_request_header(RequestHeader(api_key, version, self._corr, "faulty"),
                                       request_header_version(APIS[api_key], version))
        payload = header + codec(api_key, "request").encode(request, version)
        self.sock.sendall(len(payload).to_bytes(4, "big") + payload)
        self._pending.append((self._corr, api_key, version))
        return self._corr


def test_a_raising_handler_answers_unknown_server_error_and_the_group_is_unaffected(
    kcsim_embedded_factory: Callable[..., Any], unique_name: Callable[[str], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    srv = kcsim_embedded_factory(initial_rebalance_delay_ms=0)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(srv.bootstrap, topic, 4)
    make_faulty(srv, [OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, METADATA, CREATE_TOPICS,
                      LIST_OFFSETS])
    producer = SteadyProducer(srv.bootstrap, topic, 4, interval_s=0.02).start()
    members = [Member(srv.bootstrap, group, topic, "classic", f"m{i}", commit_every_s=0.2,
                      **{"session.timeout.ms": 6000, "heartbeat.interval.ms": 200}).start()
               for i in range(2)]
    host, port = srv.bootstrap.split(":")
    faulty = FaultyWire(host, int(port))
    caplog.set_level(logging.ERROR, logger="kcsim.broker")
    try:
        wait_for(lambda: all(m.seen() for m in members), "both members consuming")
        # Each raising request gets its error where the API carries one, and the
        # connection stays usable for the next.
        rounds = 0
        while producer.sent < 60 or rounds < 20:  # for as long as the group keeps working
            rounds += 1
            commit = faulty.call(OFFSET_COMMIT, 8, commit_request(group, topic, {0: 1}))
            assert [p.error_code for t in commit.topics for p in t.partitions] == [
                UNKNOWN_SERVER_ERROR]
            fetch = faulty.call(OFFSET_FETCH, 8, fetch_request({group: (topic, [0, 1])}))
            assert [g.error_code for g in fetch.groups] == [UNKNOWN_SERVER_ERROR]
            describe = faulty.call(DESCRIBE_GROUPS, 5, request_class(DESCRIBE_GROUPS)(
                groups=[group], include_authorized_operations=False))
            assert [g.error_code for g in describe.groups] == [UNKNOWN_SERVER_ERROR]
            meta = faulty.call(METADATA, 12, request_class(METADATA)(
                topics=[request_class(METADATA).MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False, include_topic_authorized_operations=False))
            assert [t.error_code for t in meta.topics] == [UNKNOWN_SERVER_ERROR]
        producer.close()
        # The group goes on: every record produced is consumed and committed.
        sent = producer.sent
        wait_for(lambda: {s.offset for m in members for s in m.seen() if s.partition == 0}
                 >= set(range(sent)), "every record of partition 0 consumed")
        for m in members:
            m.commit()

        with Wire(host, int(port)) as good:
            committed = good.fetch({group: (topic, [0, 1, 2, 3])})
        assert committed == {(group, p): sent for p in range(4)}
        assert sent >= 60
        for m in members:
            assert m.errors == []
        records = [(s.partition, s.offset) for m in members for s in m.seen()]
        assert sorted(set(records)) == [(p, o) for p in range(4) for o in range(sent)]
    finally:
        faulty.close()
        producer.close()
        for m in members:
            m.close()
    failures = [r.getMessage() for r in caplog.records if "injected handler bug" in r.getMessage()]
    assert len(failures) == 4 * rounds
    assert "OffsetCommit v8 from client 'faulty'" in failures[0]


def test_a_fold_that_raises_fails_only_its_group_over_the_wire(
    kcsim_embedded_factory: Callable[..., Any], unique_name: Callable[[str], str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A bug in the fold of one group's records fails that group (COORDINATOR_NOT_AVAILABLE,
    logged once); other groups, and the connection, keep working."""
    srv = kcsim_embedded_factory()
    topic, doomed, healthy = unique_name("t"), unique_name("doomed"), unique_name("ok")

    def break_the_fold_of(group: str) -> None:
        rt = srv.server.broker.groups._rt
        fold = rt.fold_commits

        def buggy(records: Any, start: int, end: int) -> int:
            if records[start].key.group == group:
                raise RuntimeError("injected fold bug")
            return fold(records, start, end)

        rt.fold_commits = buggy

    caplog.set_level(logging.ERROR, logger="kcsim.coordinator")
    host, port = srv.bootstrap.split(":")
    with Wire(host, int(port)) as wire:
        wire.create_topic(topic, 2)
        srv.run_sync(break_the_fold_of, doomed)
        for _ in range(3):
            failed = wire.call(OFFSET_COMMIT, 8, commit_request(doomed, topic, {0: 5, 1: 5}))
            assert [p.error_code for t in failed.topics for p in t.partitions] == [
                ErrorCode.COORDINATOR_NOT_AVAILABLE] * 2
            fetched = wire.call(OFFSET_FETCH, 8, fetch_request({doomed: (topic, [0])}))
            assert [g.error_code for g in fetched.groups] == [ErrorCode.COORDINATOR_NOT_AVAILABLE]
            wire.commit(healthy, topic, {0: 7, 1: 8})
        assert wire.fetch({healthy: (topic, [0, 1])}) == {(healthy, 0): 7, (healthy, 1): 8}
    lines = [r.getMessage() for r in caplog.records if doomed in r.getMessage()]
    assert len(lines) == 1, lines
    assert "COORDINATOR_NOT_AVAILABLE" in lines[0] and "injected fold bug" in lines[0]
