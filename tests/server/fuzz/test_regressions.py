"""Every defect the fuzzer found, replayed with its frame against a `kcsim serve` subprocess.

Each test sends the frame (or the smallest request showing the defect) over a
real socket and checks what a client sees: the connection closed with one
clear log line, or a Kafka answer; and the server serving the next client.
"""

from __future__ import annotations

import gc
import os
import socket
import struct
import time
from typing import TYPE_CHECKING

import pytest

from kcsim.protocol.codecs import codec, data_codec
from kcsim.protocol.consumer_protocol import encode_subscription
from kcsim.protocol.errors import ErrorCode

from .harness import probe
from .wire import Connection, frame

if TYPE_CHECKING:
    from collections.abc import Callable

    from kcsim.server.embedded import EmbeddedServer
    from tests.conftest import KcsimProcess

JOIN_GROUP, CREATE_TOPICS, CREATE_PARTITIONS, METADATA = 11, 19, 37, 3

JoinGroup = codec(JOIN_GROUP, "request").cls
CreateTopics = codec(CREATE_TOPICS, "request").cls
CreatePartitions = codec(CREATE_PARTITIONS, "request").cls

I16 = struct.Struct(">h").pack
I32 = struct.Struct(">i").pack


def wait_for_log(server: KcsimProcess, text: str, timeout: float = 5.0) -> str:
    """The first line of the server's stderr containing `text`, once it is there."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in server.stderr().splitlines():
            if text in line:
                return line
        time.sleep(0.02)
    raise AssertionError(f"no log line with {text!r}; stderr:\n{server.stderr()[-3000:]}")


@pytest.fixture
def server(kcsim_factory: Callable[..., KcsimProcess]) -> KcsimProcess:
    return kcsim_factory()


def subscription(*topics: str) -> bytes:
    return encode_subscription(data_codec("ConsumerProtocolSubscription").cls(
        topics=list(topics)), 0)


@pytest.mark.parametrize("version", [1, 3])
def test_join_group_with_a_negative_metadata_length_closes_only_its_connection(
        server: KcsimProcess, version: int) -> None:
    """The frame that stopped the server: JoinGroup whose protocol metadata has length -1.

    The decoder refuses the null in a non-nullable field, the connection is closed
    with one warning naming the field, and the next client is served."""
    body = (I16(7) + b"fuzz-g0" + I32(10000) + I32(30000) + I16(0) + I16(8) + b"consumer"
            + I32(1) + I16(5) + b"range" + I32(-1))
    with Connection(server.port) as conn:
        conn.sock.sendall(frame(JOIN_GROUP, version, 1, body))
        assert conn.closed_by_server()
    line = wait_for_log(server, "protocols[].metadata")
    assert "WARNING" in line
    assert f"JoinGroupRequest v{version}" in line
    assert "non-nullable bytes is null" in line
    probe(server.port, None)
    assert server.running


def test_join_group_naming_one_protocol_twice_completes_its_rebalance(
        server: KcsimProcess) -> None:
    """A member listing the same protocol name twice counted twice in the group's vote,
    so no protocol matched every member and the rebalance timer crashed the server."""
    request = JoinGroup(group_id="dup-protocols", session_timeout_ms=10000,
                        rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
                        protocols=[JoinGroup.JoinGroupRequestProtocol(name="range",
                                                                      metadata=subscription("t"))
                                   for _ in range(3)])
    with Connection(server.port, timeout=15.0) as conn:
        answer, _ = conn.call(JOIN_GROUP, 0, request)
    assert answer.error_code == 0
    assert answer.protocol_name == "range"
    assert answer.leader == answer.member_id
    probe(server.port, None)
    assert server.running


def test_a_topic_of_thousands_of_partitions_opens_no_file_until_written(
        server: KcsimProcess) -> None:
    """Every partition used to open its log file when created: a few large topics ran the
    server out of descriptors, and it could accept no connection."""
    assert server.proc is not None
    fds_before = len(os.listdir(f"/proc/{server.proc.pid}/fd"))
    with Connection(server.port) as conn:
        for i in range(3):
            answer, _ = conn.call(CREATE_TOPICS, 7, CreateTopics(timeout_ms=5000, topics=[
                CreateTopics.CreatableTopic(name=f"wide-{i}", num_partitions=5000,
                                            replication_factor=1)]))
            assert answer.topics[0].error_code == 0
    assert len(os.listdir(f"/proc/{server.proc.pid}/fd")) < fds_before + 10
    probe(server.port, None)


def test_a_creation_larger_than_kafka_allows_in_one_request_is_a_policy_violation(
        server: KcsimProcess) -> None:
    """Kafka's controller writes at most 10,000 records for one request."""
    with Connection(server.port) as conn:
        answer, _ = conn.call(CREATE_TOPICS, 7, CreateTopics(timeout_ms=5000, topics=[
            CreateTopics.CreatableTopic(name="too-wide", num_partitions=10_000,
                                        replication_factor=1)]))
        assert answer.topics[0].error_code == ErrorCode.POLICY_VIOLATION
        answer, _ = conn.call(CREATE_TOPICS, 7, CreateTopics(timeout_ms=5000, topics=[
            CreateTopics.CreatableTopic(name="narrow", num_partitions=1, replication_factor=1)]))
        assert answer.topics[0].error_code == 0
        grown, _ = conn.call(CREATE_PARTITIONS, 3, CreatePartitions(
            timeout_ms=5000, validate_only=False, topics=[CreatePartitions.CreatePartitionsTopic(
                name="narrow", count=10_002, assignments=None)]))
        assert grown.results[0].error_code == ErrorCode.POLICY_VIOLATION
        meta = codec(METADATA, "request").cls
        known, _ = conn.call(METADATA, 12, meta(topics=None, allow_auto_topic_creation=False))
    assert {t.name: len(t.partitions) for t in known.topics if not t.is_internal} == {
        "narrow": 1}


def test_refused_connections_leave_no_reference_cycles(kcsim: EmbeddedServer) -> None:
    """A refused request used to leave its connection's frame and buffers in a reference
    cycle: a client opening bad connections fast made the server pause for collections."""
    assert kcsim.port is not None
    bad = frame(8, 8, 1, b"\xff" * 3)  # OffsetCommit cut short: refused by the decoder

    def send_bad(n: int) -> None:
        for _ in range(n):
            with socket.create_connection(("127.0.0.1", kcsim.port)) as sock:
                sock.sendall(bad)
                sock.settimeout(5)
                assert sock.recv(16) == b""  # closed by the server

    send_bad(20)  # warm up: lazily built decoders and the like
    gc.collect()
    gc.disable()
    try:
        send_bad(200)
        time.sleep(0.2)
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable < 200, f"{unreachable} objects in cycles after 200 refused connections"


def test_bytes_after_a_request_body_are_ignored_as_kafka_ignores_them(
        server: KcsimProcess) -> None:
    """Kafka parses a request body and never looks at what follows it in the frame; so
    a request with bytes after its body is answered, not refused."""
    from kcsim.protocol.headers import decode_response_header

    request = codec(18, "request").cls(client_software_name="trailing",
                                       client_software_version="1")
    payload = codec(18, "request").encode(request, 3) + b"\x00junk"
    with Connection(server.port) as conn:
        conn.sock.sendall(frame(18, 3, 5, payload))
        raw = conn.receive()
    correlation_id, pos = decode_response_header(raw, 0)
    answer = codec(18, "response").decode(raw[pos:], 3)
    assert (correlation_id, answer.error_code) == (5, 0)
