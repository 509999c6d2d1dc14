"""The request log: every answered request, with what tests ask about derived when they ask."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from kafka import KafkaAdminClient

from ..rawgroup import RawMember, connect, create_topic, fetch_offsets
from ..rawkafka import API_VERSIONS, api_versions_frame


async def test_requests_and_their_answers(autojump_clock: Any, kcsim_trio: Any) -> None:
    wire = await connect(kcsim_trio.port, client_id="logged")
    await create_topic(wire, "t", 2)
    member = RawMember(wire, "g1", "t")
    assert sorted(await member.commit({0: 4, 5: 1})) == [0, 3]  # partition 5 does not exist
    await fetch_offsets(wire, "g1", "t", 2)
    create, commit, fetch = kcsim_trio.requests()
    assert (create.api, create.api_key, create.version, create.topics) == ("CreateTopics", 19, 5, ["t"])
    assert (commit.api, commit.version, commit.client_id, commit.groups, commit.topics) == (
        "OffsetCommit", 7, "logged", ["g1"], ["t"])
    assert commit.errors == ["UNKNOWN_TOPIC_OR_PARTITION"]
    assert (fetch.api, fetch.groups, fetch.errors) == ("OffsetFetch", ["g1"], [])
    assert create.connection == commit.connection == fetch.connection
    assert [r.seq for r in (create, commit, fetch)] == [1, 2, 3]
    assert [r.correlation_id for r in (create, commit, fetch)] == [1, 2, 3]
    assert create.received_ms <= commit.received_ms <= fetch.answered_ms

    assert kcsim_trio.requests("OffsetCommit") == [commit]
    assert kcsim_trio.requests(group="g1") == [commit, fetch]
    assert kcsim_trio.requests(error="UNKNOWN_TOPIC_OR_PARTITION") == [commit]
    assert kcsim_trio.requests(client_id="other") == []
    assert kcsim_trio.requests(version=7) == [commit, fetch]
    assert kcsim_trio.requests(since=commit.seq) == [fetch]
    assert kcsim_trio.last_request_seq() == fetch.seq
    assert msgspec.to_builtins(commit)["groups"] == ["g1"]
    kcsim_trio.clear_requests()
    assert kcsim_trio.requests() == []


async def test_answers_from_the_response_cache_are_logged_too(autojump_clock: Any,
                                                              kcsim_trio: Any) -> None:
    for _ in range(2):  # the second is answered from the cache
        wire = await connect(kcsim_trio.port)
        await wire.stream.send_all(api_versions_frame(1))
        assert await wire.stream.receive_some(65536)
    first, second = kcsim_trio.requests(API_VERSIONS)
    assert first.client_id == second.client_id == "kcsim-tests"
    assert first.connection != second.connection
    assert second.errors == [] and second.answered


@pytest.mark.kcsim(request_log_size=3)
async def test_the_log_keeps_the_newest(autojump_clock: Any, kcsim_trio: Any) -> None:
    wire = await connect(kcsim_trio.port)
    for n in range(5):
        await fetch_offsets(wire, f"g{n}", "t", 1)
    assert [r.groups for r in kcsim_trio.requests()] == [["g2"], ["g3"], ["g4"]]
    assert [r.seq for r in kcsim_trio.requests()] == [3, 4, 5]


def test_a_real_clients_requests(kcsim: Any) -> None:
    admin = KafkaAdminClient(bootstrap_servers=kcsim.bootstrap, client_id="ka",
                             request_timeout_ms=5000)
    try:
        admin.list_group_offsets("some-group")
    finally:
        admin.close()
    (fetch,) = kcsim.requests("OffsetFetch")
    assert (fetch.client_id, fetch.groups) == ("ka", ["some-group"])
    assert {r.api for r in kcsim.requests(client_id="ka")} >= {"ApiVersions", "Metadata",
                                                             "FindCoordinator", "OffsetFetch"}
    (found,) = kcsim.requests("FindCoordinator")
    assert found.groups == ["some-group"]



async def test_large_requests_and_answers_are_kept_as_what_tests_ask(autojump_clock: Any,
                                                                      kcsim_trio: Any) -> None:
    """A frame over LOG_KEEPS bytes is not kept whole; its groups, topics and errors are."""
    from kcsim.server.control.request_log import LOG_KEEPS

    wire = await connect(kcsim_trio.port, client_id="big")
    await create_topic(wire, "t", 2)
    member = RawMember(wire, "g1", "t")
    many = dict.fromkeys(range(1000), 1)  # partitions 2.. do not exist
    assert sorted(set(await member.commit(many))) == [0, 3]
    (commit,) = kcsim_trio.requests("OffsetCommit")
    entry = kcsim_trio.server.broker.request_log.entries[-1]
    assert len(entry[6]) < 10 and len(entry[7]) < 10  # a digest and error codes, not frames
    assert LOG_KEEPS < 1000 * 8
    assert (commit.client_id, commit.groups, commit.topics, commit.errors) == (
        "big", ["g1"], ["t"], ["UNKNOWN_TOPIC_OR_PARTITION"])
