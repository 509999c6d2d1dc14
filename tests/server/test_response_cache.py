"""Cached answers of read-only APIs never outlive the state they describe."""

from __future__ import annotations

import socket
import struct

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.headers import (
    RequestHeader,
    encode_request_header,
    request_header_version,
    response_header_version,
)


def _call(sock: socket.socket, api_key: int, version: int, request, correlation_id: int):
    api = APIS[api_key]
    header = encode_request_header(RequestHeader(api_key, version, correlation_id, "cache-test"),
                                   request_header_version(api, version))
    body = codec(api_key, "request").encode(request, version)
    sock.sendall(struct.pack(">i", len(header) + len(body)) + header + body)
    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    frame = sock.recv(size, socket.MSG_WAITALL)
    assert struct.unpack_from(">i", frame)[0] == correlation_id
    skip = 5 if response_header_version(api, version) >= 1 else 4  # v1 adds a tag byte
    return codec(api_key, "response").decode(frame[skip:], version)


def test_metadata_answer_follows_topic_changes(kcsim):
    Metadata = codec(3, "request").cls
    CreateTopics = codec(19, "request").cls
    DeleteTopics = codec(20, "request").cls
    all_topics = Metadata(topics=None, allow_auto_topic_creation=False)
    with socket.create_connection(("127.0.0.1", kcsim.port)) as sock:
        first = _call(sock, 3, 12, all_topics, 1).topics
        assert [t.name for t in first] == ["__consumer_offsets"]  # the one internal topic
        assert _call(sock, 3, 12, all_topics, 2).topics == first  # served twice, same answer
        created = _call(sock, 19, 7, CreateTopics(topics=[CreateTopics.CreatableTopic(
            name="fresh", num_partitions=2, replication_factor=1)], timeout_ms=1000), 3)
        assert created.topics[0].error_code == 0
        topics = _call(sock, 3, 12, all_topics, 4).topics
        assert [(t.name, len(t.partitions)) for t in topics if not t.is_internal] == [("fresh", 2)]
        _call(sock, 20, 6, DeleteTopics(topics=[DeleteTopics.DeleteTopicState(name="fresh")],
                                       timeout_ms=1000), 5)
        assert _call(sock, 3, 12, all_topics, 6).topics == first


def test_cached_answers_carry_each_requests_correlation_id(kcsim):
    request = codec(18, "request").cls(client_software_name="t", client_software_version="1")
    with socket.create_connection(("127.0.0.1", kcsim.port)) as sock:
        first = _call(sock, 18, 3, request, 41)
        second = _call(sock, 18, 3, request, 42)
    assert first == second
    assert {k.api_key for k in first.api_keys} >= {0, 1, 3, 18}
