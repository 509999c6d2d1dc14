"""Kafka's answer to a request that fails as a whole, for every group API and version.

The error goes where the version of the API has room for it: the top level, or
every group, or every partition. Each answer is checked after a round trip
through the wire encoding of its version, so a field the version lacks cannot
pass for the error's place.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from kcsim.coordinator import SUPPORTED_VERSIONS
from kcsim.protocol.codecs import codec, request_class
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness

ERR = E.COORDINATOR_NOT_AVAILABLE
TOPIC_ID = uuid.UUID(int=7)

OffsetCommit = request_class(8)
OffsetFetch = request_class(9)
OffsetDelete = request_class(47)
Pause = request_class(1000)
Resume = request_class(1001)


def _requests() -> dict[int, Any]:
    """One request per API naming two groups, or one group with two partitions."""
    return {
        8: OffsetCommit(group_id="g", topics=[OffsetCommit.OffsetCommitRequestTopic(
            name="t", topic_id=TOPIC_ID, partitions=[
                OffsetCommit.OffsetCommitRequestPartition(partition_index=p, committed_offset=1)
                for p in (0, 1)])]),
        9: OffsetFetch(
            group_id="g",
            topics=[OffsetFetch.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1])],
            groups=[OffsetFetch.OffsetFetchRequestGroup(group_id=g, topics=None) for g in "ab"]),
        11: request_class(11)(group_id="g", member_id="m"),
        28: request_class(28)(group_id="g", topics=[
            request_class(28).TxnOffsetCommitRequestTopic(
                name="t", topic_id=TOPIC_ID, partitions=[
                    request_class(28).TxnOffsetCommitRequestPartition(partition_index=p,
                                                                      committed_offset=1)
                    for p in (0, 1)])]),
        12: request_class(12)(group_id="g", member_id="m"),
        13: request_class(13)(group_id="g", member_id="m"),
        14: request_class(14)(group_id="g", member_id="m"),
        15: request_class(15)(groups=["a", "b"]),
        16: request_class(16)(),
        42: request_class(42)(groups_names=["a", "b", "a"]),
        47: OffsetDelete(group_id="g", topics=[]),
        68: request_class(68)(group_id="g", member_id="m"),
        69: request_class(69)(group_ids=["a", "b"]),
        76: request_class(76)(group_id="g", member_id="m"),
        77: request_class(77)(group_ids=["a", "b"]),
        88: request_class(88)(group_id="g", member_id="m"),
        89: request_class(89)(group_ids=["a", "b"]),
        90: request_class(90)(groups=[
            request_class(90).DescribeShareGroupOffsetsRequestGroup(group_id=g, topics=None)
            for g in "ab"]),
        91: request_class(91)(group_id="g", topics=[]),
        92: request_class(92)(group_id="g", topics=[]),
        1000: Pause(group_id="g", topics=[]),
        1001: Resume(group_id="g", topics=[]),
        1002: request_class(1002)(group_id="g"),
    }


def _where(api_key: int, version: int) -> str:
    """Where Kafka puts a whole-request error (its getErrorResponse methods)."""
    if api_key in (8, 28):
        return "partitions"
    if api_key == 9:
        return "partitions" if version < 2 else "top" if version < 8 else "groups"
    if api_key in (15, 42, 69, 77, 89, 90):
        return "groups"
    return "top"


def _cases() -> list[tuple[int, int]]:
    return [(k, v) for k, (lo, hi) in SUPPORTED_VERSIONS.items() for v in range(lo, hi + 1)]


@pytest.mark.parametrize(("api_key", "version"), _cases())
def test_the_error_goes_where_the_version_has_room_for_it(api_key: int, version: int) -> None:
    h = Harness()
    request = _requests()[api_key]
    built = h.gc.error_response(api_key, version, request, ERR)
    response = codec(api_key, "response").decode(
        codec(api_key, "response").encode(built, version), version)
    where = _where(api_key, version)
    if where == "top":
        assert response.error_code == ERR
    elif where == "groups":
        entries = response.results if api_key == 42 else response.groups
        assert [(g.group_id, g.error_code) for g in entries] == [("a", ERR), ("b", ERR)]
        if api_key == 9:
            assert all(g.topics == [] for g in entries)
        if api_key == 15:
            assert all((g.group_state, g.protocol_type, g.members) == ("", "", []) for g in entries)
    else:
        (topic,) = response.topics
        assert [(p.partition_index, p.error_code) for p in topic.partitions] == [(0, ERR), (1, ERR)]
        if version >= {8: 10, 28: 6}.get(api_key, 1 << 15):  # named by id (KIP-848, KIP-1319)
            assert topic.topic_id == TOPIC_ID
        else:
            assert topic.name == "t"
        if api_key == 9:
            assert all(p.committed_offset == -1 for p in topic.partitions)


def test_a_join_error_carries_no_member_and_the_version_s_empty_protocol_name() -> None:
    h = Harness()
    request = _requests()[11]
    v6 = h.gc.error_response(11, 6, request, ERR)
    v7 = h.gc.error_response(11, 7, request, ERR)
    assert (v6.member_id, v6.generation_id, v6.protocol_name) == ("", -1, "")
    assert (v7.member_id, v7.generation_id, v7.protocol_name) == ("", -1, None)


def test_an_api_the_group_coordinator_does_not_serve_is_refused() -> None:
    with pytest.raises(ValueError, match="not served"):
        Harness().gc.error_response(3, 0, None, ERR)
