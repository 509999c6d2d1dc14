"""The HTTP control API's ASGI app, called directly inside the broker's trio run: routing,
JSON in and out, and the refusals (400 naming the field with the Python API's own message,
404, 405, 408 showing the state a wait saw)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from kcsim.admin import AdminClient, TopicPartition
from kcsim.server.control.http_routes import control_app


async def call(kcsim: Any, method: str, path: str, body: Any = None,
               query: str = "", raw: bytes | None = None) -> tuple[int, dict[str, str], Any]:
    """One request through the app: (status, headers, decoded JSON)."""
    data = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
    incoming = [{"type": "http.request", "body": data, "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path,
             "query_string": query.encode(), "headers": []}
    await control_app(kcsim)(scope, receive, send)
    start, content = sent
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    assert headers["content-type"] == "application/json"
    return start["status"], headers, json.loads(content["body"])


def python_refusal(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(ValueError, match=r".") as caught:
        fn(*args, **kwargs)
    return str(caught.value)


def admin_setup(bootstrap: str, topic: str, group: str, offsets: dict[int, int],
                paused: list[int]) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    kafka_admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        kafka_admin.create_topics([NewTopic(topic, len(offsets), 1)])
    finally:
        kafka_admin.close()
    with AdminClient(bootstrap, timeout=10) as admin:
        admin.alter_group_offsets(
            group, {TopicPartition(topic, p): o for p, o in offsets.items()}).all()
        if paused:
            admin.pause_partitions(group, [TopicPartition(topic, p) for p in paused]).all()


async def test_the_index_lists_every_endpoint(kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "GET", "/")
    assert status == 200
    assert {"GET /clock", "POST /clock/advance", "POST /faults", "DELETE /faults/{id}",
            "GET /requests", "POST /wait/group", "GET /state/paused", "GET /state/lag",
            "POST /log-maintenance", "GET /events", "GET /events/stream",
            "GET /ui"} <= set(answer["endpoints"])


async def test_an_unknown_path_is_404_and_a_wrong_method_405_naming_the_allowed(
        kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "GET", "/faultz")
    assert status == 404
    assert answer["error"] == "no endpoint /faultz (GET / lists them)"
    status, headers, answer = await call(kcsim_trio, "PUT", "/faults")
    assert status == 405
    assert headers["allow"] == "GET, POST, DELETE"
    assert answer["error"] == "PUT is not allowed on /faults (allowed: GET, POST, DELETE)"
    status, headers, _ = await call(kcsim_trio, "GET", "/clock/advance")
    assert (status, headers["allow"]) == (405, "POST")
    status, _, _ = await call(kcsim_trio, "GET", "/faults/abc")
    assert status == 404


@pytest.mark.parametrize(("rule", "field"), [
    ({"api": "OffsetComit", "error": "NOT_COORDINATOR"}, "api"),
    ({"api": "OffsetCommit", "error": "NOT_COORD"}, "error"),
    ({"api": "ElectLeaders", "error": "NOT_COORDINATOR"}, "api"),
    ({"api": 9999, "error": "NOT_COORDINATOR"}, "api"),
    ({"api": "OffsetCommit", "error": "NOT_COORDINATOR", "times": 0}, "times"),
    ({"api": "OffsetCommit", "error": "NOT_COORDINATOR", "colour": "red"}, "colour"),
    ({"api": "OffsetCommit", "version": 99, "error": "NOT_COORDINATOR"}, "version"),
    ({"api": "OffsetCommit"}, "error"),
    ({"error": "NOT_COORDINATOR"}, "api"),
])
async def test_a_bad_rule_is_400_naming_the_field_as_python_does(
        kcsim_trio: Any, rule: dict[str, Any], field: str) -> None:
    expected = python_refusal(kcsim_trio.faults.add, rule)
    status, _, answer = await call(kcsim_trio, "POST", "/faults", rule)
    assert status == 400
    assert answer == {"error": expected, "field": field}
    assert expected.startswith(f"{field}: ")
    assert kcsim_trio.faults.list() == []


async def test_a_body_that_is_not_a_json_object_is_400_naming_the_body(kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "POST", "/faults", raw=b'{"api": ')
    assert (status, answer["field"]) == (400, "body")
    assert answer["error"].startswith("body: not valid JSON")
    status, _, answer = await call(kcsim_trio, "POST", "/clock/advance", [1])
    assert (status, answer) == (400, {"error": "body: expected a JSON object, got list",
                                      "field": "body"})


@pytest.mark.parametrize(("method", "path", "body", "query", "message"), [
    ("POST", "/clock/advance", {}, "", "ms: required"),
    ("POST", "/clock/advance", {"ms": -5},
     "", "ms: expected a whole number of milliseconds >= 0, got -5"),
    ("POST", "/clock/advance", {"ms": 5, "sec": 1},
     "", "sec: not a field of POST /clock/advance (fields: ms)"),
    ("POST", "/wait/group", {"group": "g", "members": -1},
     "", "members: expected a member count >= 0, got -1"),
    ("POST", "/wait/group", {"group": "g", "timeout": 0},
     "", "timeout: expected seconds > 0, got 0"),
    ("POST", "/wait/committed", {"group": "g", "offsets": {"t": 1}},
     "", 'offsets: expected a list of {"topic", "partition", "offset"}, got {\'t\': 1}'),
    ("POST", "/wait/request", {"api": "Fetch", "error": "BROKEN_THING"},
     "", "error: unknown Kafka error 'BROKEN_THING'"),
    ("POST", "/wait/fault", {"id": 7}, "", "rule_id: no fault rule 7 is installed"),
    ("POST", "/coordinator", {"group": "g", "state": "sleepy"},
     "", "state: expected one of loading, unavailable, available, got 'sleepy'"),
    ("GET", "/requests", None, "api=Fetchh", "api: unknown API 'Fetchh' (did you mean Fetch?)"),
    ("GET", "/requests", None, "since=soon", "since: expected an integer, got 'soon'"),
    ("GET", "/requests", None, "colour=red",
     "colour: not a field of GET /requests (fields: api, group, client_id, version, error, "
     "connection, since)"),
    ("GET", "/state/members", None, "", "group: required"),
    ("DELETE", "/faults/3", None, "", "rule_id: no fault rule 3 is installed"),
    ("POST", "/log-maintenance", {"roll": "yes"}, "", "roll: expected true or false, got 'yes'"),
])
async def test_bad_input_to_every_kind_of_endpoint_is_400_naming_the_field(
        kcsim_trio: Any, method: str, path: str, body: Any, query: str, message: str) -> None:
    status, _, answer = await call(kcsim_trio, method, path, body, query)
    assert status == 400
    assert answer == {"error": message, "field": message.split(":")[0]}


async def test_the_clock_advances_freezes_and_resumes(kcsim_trio: Any) -> None:
    status, _, now = await call(kcsim_trio, "GET", "/clock")
    assert status == 200 and now["frozen"] is False
    _, _, frozen = await call(kcsim_trio, "POST", "/clock/freeze")
    assert frozen["frozen"] is True and kcsim_trio.clock.frozen
    _, _, advanced = await call(kcsim_trio, "POST", "/clock/advance", {"ms": 45_000})
    assert advanced == {"now_ms": frozen["now_ms"] + 45_000, "frozen": True}
    assert kcsim_trio.clock.now_ms() == advanced["now_ms"]
    _, _, resumed = await call(kcsim_trio, "POST", "/clock/resume")
    assert resumed["frozen"] is False and not kcsim_trio.clock.frozen


async def test_rules_are_added_listed_got_released_and_removed(kcsim_trio: Any) -> None:
    status, _, added = await call(kcsim_trio, "POST", "/faults", {
        "api": "OffsetCommit", "group": "g", "error": "NOT_COORDINATOR", "times": 2})
    assert status == 200
    assert added == {"id": added["id"], "rule": {"api": "OffsetCommit", "group": "g",
                                                 "times": 2, "error": "NOT_COORDINATOR"},
                     "matched": 0, "fired": 0, "held": 0, "active": True}
    _, _, always = await call(kcsim_trio, "POST", "/faults",
                              {"api": ["SyncGroup", 11], "hold": True, "times": None})
    assert always["rule"]["times"] is None
    assert kcsim_trio.faults.get(always["id"]).rule.times is None
    _, _, listed = await call(kcsim_trio, "GET", "/faults")
    assert [r["id"] for r in listed["rules"]] == [added["id"], always["id"]]
    _, _, got = await call(kcsim_trio, "GET", f"/faults/{added['id']}")
    assert got == added
    _, _, released = await call(kcsim_trio, "POST", f"/faults/{always['id']}/release")
    assert released == {"released": 0}
    _, _, removed = await call(kcsim_trio, "DELETE", f"/faults/{added['id']}")
    assert removed == {**added, "active": False}
    _, _, cleared = await call(kcsim_trio, "DELETE", "/faults")
    assert [r["id"] for r in cleared["removed"]] == [always["id"]]
    assert kcsim_trio.faults.list() == []


async def test_a_coordinator_is_made_loading_and_available_again(kcsim_trio: Any) -> None:
    _, _, loading = await call(kcsim_trio, "POST", "/coordinator",
                               {"group": "g", "state": "loading"})
    rule = kcsim_trio.faults.get(loading["rule"])
    assert rule.rule.error == "COORDINATOR_LOAD_IN_PROGRESS" and rule.rule.group == "g"
    _, _, back = await call(kcsim_trio, "POST", "/coordinator",
                            {"group": "g", "state": "available"})
    assert back == {"group": "g", "state": "available", "rule": None}
    assert kcsim_trio.faults.list() == []


async def test_a_wait_that_times_out_is_408_showing_what_it_saw(kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "POST", "/wait/group",
                                   {"group": "g", "members": 3, "timeout": 0.5})
    assert status == 408
    assert answer == {"error": "timed out after 0.5 s waiting for group 'g' to be Stable and 3 "
                               "members; there is no such group",
                      "field": None, "timed_out": True}


async def test_the_state_and_the_waits_show_what_an_admin_did(kcsim_trio: Any) -> None:
    """Offsets committed and a partition paused by an admin, seen through the snapshots,
    the request log and the waits."""
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, admin_setup, kcsim_trio.bootstrap,
                           "t", "g", {0: 5, 1: 7}, [1])
        status, _, waited = await call(kcsim_trio, "POST", "/wait/committed", {
            "group": "g", "offsets": [{"topic": "t", "partition": 0, "offset": 5},
                                      {"topic": "t", "partition": 1, "offset": 7}]})
    assert status == 200
    assert waited == {"group": "g", "offsets": [{"topic": "t", "partition": 0, "offset": 5},
                                                {"topic": "t", "partition": 1, "offset": 7}]}

    _, _, groups = await call(kcsim_trio, "GET", "/state/groups")
    assert [(g["group"], g["state"], g["members"]) for g in groups["groups"]] == [
        ("g", "Empty", [])]
    _, _, one = await call(kcsim_trio, "GET", "/state/groups", query="group=other")
    assert one == {"groups": []}
    _, _, members = await call(kcsim_trio, "GET", "/state/members", query="group=g")
    assert members == {"group": "g", "members": []}
    _, _, offsets = await call(kcsim_trio, "GET", "/state/offsets")
    assert offsets == {"offsets": [{"group": "g", "topic": "t", "partition": 0, "offset": 5},
                                   {"group": "g", "topic": "t", "partition": 1, "offset": 7}]}
    _, _, paused = await call(kcsim_trio, "GET", "/state/paused", query="group=g")
    assert paused == {"paused": [{"group": "g", "topic": "t", "partition": 1}]}

    _, _, log = await call(kcsim_trio, "GET", "/requests", query="api=OffsetCommit&group=g")
    (commit,) = log["requests"]
    assert commit["api"] == "OffsetCommit" and commit["groups"] == ["g"]
    assert commit["errors"] == [] and log["last_seq"] >= commit["seq"]
    _, _, both = await call(kcsim_trio, "GET", "/requests",
                            query="api=OffsetCommit,CreateTopics&since=0")
    assert [r["api"] for r in both["requests"]] == ["CreateTopics", "OffsetCommit"]
    _, _, found = await call(kcsim_trio, "POST", "/wait/request",
                             {"api": "OffsetCommit", "group": "g", "count": 1})
    assert found["requests"] == [commit]
    _, _, cleared = await call(kcsim_trio, "DELETE", "/requests")
    assert cleared == {"cleared": True} and kcsim_trio.requests() == []


def changelog(bootstrap: str, topic: str) -> None:
    """A compacted topic holding three values of one key, a batch each."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient as ConfluentAdmin
    from confluent_kafka.admin import NewTopic

    admin = ConfluentAdmin({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[
        topic].result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for value in (b"1", b"2", b"3"):
        producer.produce(topic, value, key=b"k", partition=0)
        producer.flush(10)


async def test_log_maintenance_runs_the_cleaner_now(kcsim_trio: Any) -> None:
    await trio.to_thread.run_sync(changelog, kcsim_trio.bootstrap, "changelog")
    status, _, answer = await call(kcsim_trio, "POST", "/log-maintenance", {})
    assert (status, answer) == (200, {"retention": [], "cleaned": []})  # all in the active one
    status, _, answer = await call(kcsim_trio, "POST", "/log-maintenance", {"roll": True})
    assert (status, answer) == (200, {"retention": [], "cleaned": [
        {"topic": "changelog", "partition": 0, "records_before": 3, "records_after": 1}]})


async def test_an_unexpected_failure_is_500_with_its_message_and_the_api_serves_on(
        kcsim_trio: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("the coordinator is gone")

    monkeypatch.setattr(kcsim_trio, "groups", broken)
    status, _, answer = await call(kcsim_trio, "GET", "/state/groups")
    assert (status, answer) == (500, {"error": "RuntimeError: the coordinator is gone",
                                      "field": None})
    status, _, _ = await call(kcsim_trio, "GET", "/clock")
    assert status == 200


async def test_a_body_over_a_mebibyte_is_413(kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "POST", "/faults", raw=b" " * (1024 * 1024 + 1))
    assert (status, answer["field"]) == (413, "body")
