"""The test controls over HTTP, as a test in any language uses them: `kcsim serve
--control-port` in a subprocess, steered only through its HTTP API (urllib, JSON) and
watched through real Kafka clients (confluent-kafka, kafka-python, the Java Admin).

Nothing of kcsim is imported here: what the test knows of the broker is its ready
line, its Kafka port and its control API. Waits are the API's long polls, never sleeps.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import pytest
from confluent_kafka import Producer
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from .ck_members import QUIET, ChildMember, Member
from .ck_members import wait_for as wait_until

pytestmark = pytest.mark.timeout(120)

PARTITIONS = 6
DAY_MS = 24 * 3600 * 1000
CONTROL = re.compile(r"control API (http://\S+)")


class HttpFailed(AssertionError):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class Control:
    """The broker's HTTP control API, through urllib."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __call__(self, method: str, path: str, body: dict[str, Any] | None = None,
                 **query: Any) -> Any:
        given = {k: v for k, v in query.items() if v is not None}
        url = self.url + path + ("?" + urllib.parse.urlencode(given) if given else "")
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method,
                                         headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            raise HttpFailed(exc.code, json.loads(exc.read())) from None

    def add_rule(self, **rule: Any) -> int:
        return int(self("POST", "/faults", rule)["id"])

    def rule(self, rule_id: int) -> dict[str, Any]:
        return self("GET", f"/faults/{rule_id}")  # type: ignore[no-any-return]

    def requests(self, **filters: Any) -> list[dict[str, Any]]:
        return self("GET", "/requests", **filters)["requests"]  # type: ignore[no-any-return]

    def last_seq(self) -> int:
        return int(self("GET", "/requests", since=2**62)["last_seq"])

    def wait_group(self, group: str, state: str = "Stable", members: int | None = None,
                   timeout: float = 30) -> dict[str, Any]:
        return self("POST", "/wait/group", {"group": group, "state": state,  # type: ignore[no-any-return]
                                            "members": members, "timeout": timeout})

    def wait_request(self, **filters: Any) -> list[dict[str, Any]]:
        return self("POST", "/wait/request", filters)["requests"]  # type: ignore[no-any-return]

    def group(self, group: str) -> dict[str, Any] | None:
        found = self("GET", "/state/groups", group=group)["groups"]
        return found[0] if found else None

    def offsets(self, group: str) -> dict[tuple[str, int], int]:
        return {(o["topic"], o["partition"]): o["offset"]
                for o in self("GET", "/state/offsets", group=group)["offsets"]}

    def advance(self, ms: int) -> int:
        return int(self("POST", "/clock/advance", {"ms": ms})["now_ms"])


def start(kcsim_factory: Any, **settings: Any) -> tuple[str, Control]:
    """`kcsim serve --control-port 0` (in memory); its bootstrap and its control API."""
    server = kcsim_factory(in_memory=True, control_port=0, **settings)
    found = CONTROL.search(server.ready_line)
    assert found, f"no control API in the ready line: {server.ready_line}"
    return server.bootstrap, Control(found.group(1))


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()


def produce(bootstrap: str, topic: str, partitions: range, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, **QUIET})
    for p in partitions:
        for i in range(count):
            producer.produce(topic, f"{p}-{i}".encode(), partition=p)
    assert producer.flush(30) == 0


def fetched_offsets(bootstrap: str, group: str) -> dict[int, int]:
    """The group's committed offsets as kafka-python's admin reads them (OffsetFetch)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    try:
        found = admin.list_group_offsets(group)[group]
    finally:
        admin.close()
    return {tp.partition: om.offset for tp, om in found.items()}


def partitions_of(view: dict[str, Any]) -> dict[str, list[int]]:
    return {m["client_id"]: sorted(p for _, p in m["partitions"]) for m in view["members"]}


def test_a_silent_classic_member_expires_when_the_clock_passes_its_session(
        kcsim_factory: Any, unique_name: Any) -> None:
    """confluent-kafka classic members: one (session 45 s) in a child process that is
    killed, two (session 60 s) that keep heartbeating. 45 s of broker time later the
    silent one is gone at once and the two share its partitions."""
    bootstrap, control = start(kcsim_factory)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, PARTITIONS)
    stays = [Member(bootstrap, group, topic, "classic", f"stay{i}",
                    **{"session.timeout.ms": 60_000}).start() for i in range(2)]
    doomed = ChildMember(bootstrap, group, topic, "classic", "doomed")
    try:
        view = control.wait_group(group, "Stable", members=3)
        assert sorted(map(len, partitions_of(view).values())) == [2, 2, 2]

        doomed.kill()  # no LeaveGroup: its session is all that ends it
        killed = control.last_seq()
        for member in stays:  # each heartbeats after the kill, so its session restarts
            control.wait_request(api="Heartbeat", client_id=member.name, since=killed)
        control.advance(45_001)

        now = control.group(group)
        assert now is not None and sorted(partitions_of(now)) == ["stay0", "stay1"]
        view = control.wait_group(group, "Stable", members=2)
        assert sorted(p for ps in partitions_of(view).values() for p in ps) == list(range(PARTITIONS))
        wait_until(lambda: sorted(p for m in stays for p in m.assignment) == list(range(PARTITIONS)),
                   "the two members consuming all six partitions")
    finally:
        doomed.kill()
        for member in stays:
            member.close()


def test_a_silent_kip848_member_expires_when_the_clock_passes_its_session(
        kcsim_factory: Any, unique_name: Any) -> None:
    """confluent-kafka KIP-848 members: one in a child process that is killed. Its session
    (45 s) ends when the broker's clock passes its last heartbeat by 45 s; the others
    heartbeated since, so theirs do not, and they take its partitions."""
    bootstrap, control = start(kcsim_factory, consumer_group_heartbeat_interval_ms=500)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, PARTITIONS)
    stays = [Member(bootstrap, group, topic, "consumer", f"stay{i}").start() for i in range(2)]
    doomed = ChildMember(bootstrap, group, topic, "consumer", "doomed")
    try:
        view = control.wait_group(group, "Stable", members=3)
        assert sorted(map(len, partitions_of(view).values())) == [2, 2, 2]

        doomed.kill()
        last = control.requests(api="ConsumerGroupHeartbeat", client_id="doomed")[-1]
        for member in stays:  # a heartbeat of each after the doomed one's last, by 2 ms
            since = last["seq"]
            while True:
                beat = control.wait_request(api="ConsumerGroupHeartbeat",
                                            client_id=member.name, since=since)[0]
                if beat["received_ms"] >= last["received_ms"] + 2:
                    break
                since = beat["seq"]
        # Frozen, the clock cannot move between reading it and advancing it: the others'
        # sessions outlast the doomed one's by as little as 1 ms.
        now = control("POST", "/clock/freeze")["now_ms"]
        control.advance(last["received_ms"] + 45_000 + 1 - now)

        expired = control.group(group)
        assert expired is not None and sorted(partitions_of(expired)) == ["stay0", "stay1"]
        control("POST", "/clock/resume")
        view = control.wait_group(group, "Stable", members=2)
        assert sorted(p for ps in partitions_of(view).values() for p in ps) == list(range(PARTITIONS))
        wait_until(lambda: sorted(p for m in stays for p in m.assignment) == list(range(PARTITIONS)),
                   "the two members consuming all six partitions")
    finally:
        doomed.kill()
        for member in stays:
            member.close()


def test_offsets_of_an_empty_group_expire_seven_days_on(
        kcsim_factory: Any, unique_name: Any) -> None:
    """kafka-python commits and leaves; a week of broker time plus one retention check
    later, OffsetFetch finds nothing."""
    bootstrap, control = start(kcsim_factory)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, 2)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             enable_auto_commit=False)
    consumer.assign([TopicPartition(topic, p) for p in range(2)])
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(3, "", -1) for p in range(2)})
    consumer.close()
    control.wait_group(group, "Empty")
    assert fetched_offsets(bootstrap, group) == {0: 3, 1: 3}

    check_ms = 600_000  # offsets.retention.check.interval.ms
    control.advance(7 * DAY_MS - check_ms)
    assert fetched_offsets(bootstrap, group) == {0: 3, 1: 3}  # not a week yet
    control.advance(2 * check_ms)
    assert control.offsets(group) == {}
    assert fetched_offsets(bootstrap, group) == {}


def test_a_commit_answered_not_coordinator_twice_is_retried_and_lands(
        kcsim_factory: Any, unique_name: Any) -> None:
    """kafka-python's commit gets NOT_COORDINATOR twice: it looks the coordinator up
    again and retries, and the third commit is served (OffsetFetch shows it). The
    consumer assigns its partitions itself: a commit needs the coordinator, not a
    membership."""
    bootstrap, control = start(kcsim_factory)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, 2)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             client_id="committer", enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        assert consumer.committed(TopicPartition(topic, 0)) is None  # the coordinator found
        since = control.last_seq()
        rule = control.add_rule(api="OffsetCommit", group=group, error="NOT_COORDINATOR",
                                times=2)

        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(5, "", -1),
                         TopicPartition(topic, 1): OffsetAndMetadata(6, "", -1)})
    finally:
        consumer.close()
    assert control.rule(rule)["fired"] == 2
    mine = control.requests(client_id="committer", since=since,
                            api="OffsetCommit,FindCoordinator")
    commits = [r for r in mine if r["api"] == "OffsetCommit"]
    assert [r["errors"] for r in commits][:3] == [["NOT_COORDINATOR"], ["NOT_COORDINATOR"], []]
    assert [r["fault"] for r in commits][:3] == [rule, rule, None]
    found_again = [r for r in mine if r["api"] == "FindCoordinator"]
    assert found_again and found_again[0]["seq"] > commits[0]["seq"], \
        "the consumer looks the coordinator up again after NOT_COORDINATOR"
    assert fetched_offsets(bootstrap, group) == {0: 5, 1: 6}
    assert control.offsets(group) == {(topic, 0): 5, (topic, 1): 6}


def test_a_consumer_waits_out_a_loading_coordinator_then_resumes_from_its_offsets(
        kcsim_factory: Any, unique_name: Any) -> None:
    """confluent-kafka: OffsetFetch answers COORDINATOR_LOAD_IN_PROGRESS three times; the
    consumer asks again until it is served and starts at the committed offsets."""
    bootstrap, control = start(kcsim_factory)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, range(2), 10)
    committer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                              enable_auto_commit=False)
    committer.assign([TopicPartition(topic, p) for p in range(2)])
    committer.commit({TopicPartition(topic, 0): OffsetAndMetadata(4, "", -1),
                      TopicPartition(topic, 1): OffsetAndMetadata(7, "", -1)})
    committer.close()
    rule = control.add_rule(api="OffsetFetch", group=group,
                            error="COORDINATOR_LOAD_IN_PROGRESS", times=3)
    member = Member(bootstrap, group, topic, "classic", "loader").start()
    try:
        wait_until(lambda: {r.partition for r in member.seen()} == {0, 1}, "records of both")
        first = {p: min(r.offset for r in member.seen() if r.partition == p) for p in (0, 1)}
        assert first == {0: 4, 1: 7}
    finally:
        member.close()
    fetches = control.requests(api="OffsetFetch", client_id="loader")
    assert [r["errors"] for r in fetches[:4]] == [["COORDINATOR_LOAD_IN_PROGRESS"]] * 3 + [[]]
    assert control.rule(rule)["fired"] == 3


def test_fetch_latency_shows_in_the_clients_fetch_round_trip(
        kcsim_factory: Any, unique_name: Any) -> None:
    """kafka-python's own fetch-latency metric rises by the 200 ms a rule adds to Fetch and
    falls back once the rule is removed."""
    bootstrap, control = start(kcsim_factory)
    topic = unique_name("t")
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, range(1), 5)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, fetch_max_wait_ms=10,
                             metrics_sample_window_ms=500, metrics_num_samples=2)
    consumer.assign([TopicPartition(topic, 0)])

    def latency_ms() -> float:
        consumer.poll(timeout_ms=100)  # the client fetches meanwhile, on its own schedule
        return float(consumer.metrics()["consumer-fetch-manager-metrics"]["fetch-latency-avg"])

    try:
        before = wait_until(lambda: (lambda ms: ms if 0 < ms < 100 else None)(latency_ms()),
                            "fetches without latency", interval=0)
        rule = control.add_rule(api="Fetch", latency_ms=200, times=None)
        slow = wait_until(lambda: (lambda ms: ms if ms >= 200 else None)(latency_ms()),
                          "fetches 200 ms slower", interval=0)
        assert control.rule(rule)["fired"] >= 2
        slowest = control.requests(api="Fetch")[-1]
        assert slowest["answered_ms"] - slowest["received_ms"] >= 200
        removed = control("DELETE", f"/faults/{rule}")
        assert removed["active"] is False and control("GET", "/faults") == {"rules": []}
        after = wait_until(lambda: (lambda ms: ms if ms < 100 else None)(latency_ms()),
                           "fetches fast again", interval=0)
    finally:
        consumer.close()
    assert before < 100 <= 200 <= slow and after < 100


def test_a_connection_closed_after_join_group_is_reopened_and_the_group_forms(
        kcsim_factory: Any, unique_name: Any) -> None:
    """confluent-kafka: the broker closes the connection right after answering a member's
    first JoinGroup; the client reconnects and joins again, and the group forms."""
    bootstrap, control = start(kcsim_factory)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, 4)
    rule = control.add_rule(api="JoinGroup", client_id="cut", close="after")
    members = [Member(bootstrap, group, topic, "classic", name).start()
               for name in ("cut", "whole")]
    try:
        view = control.wait_group(group, "Stable", members=2)
        assert sorted(p for m in view["members"] for _, p in m["partitions"]) == [0, 1, 2, 3]
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == [0, 1, 2, 3],
                   "both members with their partitions")
    finally:
        for member in members:
            member.close()
    assert control.rule(rule)["fired"] == 1
    joins = control.requests(api="JoinGroup", client_id="cut")
    assert joins[0]["fault"] == rule and joins[0]["answered"]
    assert len({r["connection"] for r in joins}) >= 2, "the member joined again on a new connection"


def test_members_get_their_assignment_only_once_a_held_sync_group_is_released(
        kcsim_factory: Any, unique_name: Any) -> None:
    """confluent-kafka: both members' SyncGroup requests are held; the group waits in
    CompletingRebalance without assignments until the test releases them."""
    bootstrap, control = start(kcsim_factory, initial_rebalance_delay_ms=3000)
    topic, group = unique_name("t"), unique_name("g")
    create_topic(bootstrap, topic, 4)
    rule = control.add_rule(api="SyncGroup", group=group, hold=True, times=2)
    members = [Member(bootstrap, group, topic, "classic", f"m{i}").start() for i in range(2)]
    try:
        control.wait_group(group, "PreparingRebalance", members=2)
        control.advance(6000)  # the initial rebalance delay, extended once, without waiting
        held = control("POST", "/wait/fault", {"id": rule, "held": 2, "timeout": 5})
        assert held["held"] == 2
        assert control.group(group)["state"] == "CompletingRebalance"  # type: ignore[index]
        assert control.requests(api="SyncGroup") == []
        assert all(not m.assignment for m in members)

        assert control("POST", f"/faults/{rule}/release") == {"released": 2}
        view = control.wait_group(group, "Stable", members=2)
        assert sorted(p for m in view["members"] for _, p in m["partitions"]) == [0, 1, 2, 3]
        wait_until(lambda: sorted(p for m in members for p in m.assignment) == [0, 1, 2, 3],
                   "both members with their partitions")
    finally:
        for member in members:
            member.close()
    syncs = control.requests(api="SyncGroup")
    assert [r["fault"] for r in syncs[:2]] == [rule, rule]


@pytest.mark.java
def test_the_java_admin_fetches_offsets_of_three_groups_in_one_request(
        kcsim_factory: Any, java: Any, unique_name: Any) -> None:
    """Admin.listConsumerGroupOffsets of three groups is one OffsetFetch v8+ naming all
    three (KIP-709), as the request log shows over HTTP."""
    bootstrap, control = start(kcsim_factory)
    topic = unique_name("t")
    create_topic(bootstrap, topic, 1)
    client = java(bootstrap)
    groups = [unique_name(f"g{i}") for i in range(3)]
    for i, group in enumerate(groups):
        assert client.alter_offsets(group, topic, {0: i + 1}) == {0: None}
    since = control.last_seq()
    found = client.offsets_many(groups)
    assert found == {g: {(topic, 0): (i + 1, "")} for i, g in enumerate(groups)}
    (fetch,) = control.requests(api="OffsetFetch", since=since)
    assert fetch["version"] >= 8
    assert sorted(fetch["groups"]) == sorted(groups)
    assert fetch["client_id"] == "kcsim-java-group-admin"


def test_bad_input_is_refused_with_400_naming_the_field(kcsim_factory: Any) -> None:
    _, control = start(kcsim_factory)
    for rule, field, message in (
            ({"api": "OffsetComit", "error": "NOT_COORDINATOR"}, "api",
             "api: unknown API 'OffsetComit' (did you mean OffsetCommit?)"),
            ({"api": "OffsetCommit", "error": "NOT_COORD"}, "error",
             "error: unknown Kafka error 'NOT_COORD' (did you mean NOT_COORDINATOR?)"),
            ({"api": "ElectLeaders", "error": "NOT_COORDINATOR"}, "api",
             "api: the ElectLeaders API is not served by kcsim"),
            ({"api": "OffsetCommit", "error": "NOT_COORDINATOR", "times": -1}, "times",
             "times: expected a count >= 1, or None for every time, got -1")):
        with pytest.raises(HttpFailed) as refused:
            control("POST", "/faults", rule)
        assert (refused.value.status, refused.value.body) == (400, {"error": message,
                                                                   "field": field})
    with pytest.raises(HttpFailed) as missing:
        control("GET", "/nothing-here")
    assert missing.value.status == 404
    with pytest.raises(HttpFailed) as wrong:
        control("DELETE", "/clock")
    assert wrong.value.status == 405
    with pytest.raises(HttpFailed) as timed_out:
        control.wait_group("nobody", "Stable", timeout=0.2)
    assert timed_out.value.status == 408
    assert "there is no such group" in timed_out.value.body["error"]
    assert control("GET", "/faults") == {"rules": []}
