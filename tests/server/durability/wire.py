"""Raw Kafka requests for the durability tests: topics, simple offset commits, fetches.

A `Wire` is one blocking socket; `send` and `receive` are separate so a caller
can keep several requests in flight (responses come back in request order).
"""

from __future__ import annotations

import socket
import struct
from typing import Any, Self

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec, request_class
from kcsim.protocol.headers import (
    RequestHeader,
    decode_response_header,
    encode_request_header,
    request_header_version,
    response_header_version,
)

OFFSET_COMMIT, OFFSET_FETCH, METADATA, CREATE_TOPICS = 8, 9, 3, 19
COMMIT_V, FETCH_V, CREATE_TOPICS_V = 8, 8, 7
TOPIC_ALREADY_EXISTS = 36

_SIZE = struct.Struct(">i")


class Closed(Exception):
    """The server closed the connection (or died) before answering."""


def encode_request(api_key: int, version: int, correlation_id: int, request: Any) -> bytes:
    header = encode_request_header(RequestHeader(api_key, version, correlation_id, "durability"),
                                   request_header_version(APIS[api_key], version))
    payload = header + codec(api_key, "request").encode(request, version)
    return _SIZE.pack(len(payload)) + payload


def commit_request(group: str, topic: str, offsets: dict[int, int]) -> Any:
    """OffsetCommit of a simple (memberless) group: generation -1, empty member id."""
    cls = request_class(OFFSET_COMMIT)
    return cls(group_id=group, generation_id_or_member_epoch=-1, member_id="",
               group_instance_id=None, retention_time_ms=-1, topics=[
                   cls.OffsetCommitRequestTopic(name=topic, partitions=[
                       cls.OffsetCommitRequestPartition(
                           partition_index=p, committed_offset=o, committed_leader_epoch=-1,
                           committed_metadata="") for p, o in offsets.items()])])


def fetch_request(groups: dict[str, tuple[str, list[int]]]) -> Any:
    """OffsetFetch v8 for several groups, each with one topic and its partitions."""
    cls = request_class(OFFSET_FETCH)
    return cls(require_stable=False, groups=[
        cls.OffsetFetchRequestGroup(group_id=g, topics=[
            cls.OffsetFetchRequestTopics(name=t, partition_indexes=ps)])
        for g, (t, ps) in groups.items()])


class Wire:
    """One connection to a server, speaking raw Kafka requests."""

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._corr = 0
        self._pending: list[tuple[int, int, int]] = []  # (correlation id, api key, version)
        self._buf = bytearray()

    @classmethod
    def to(cls, server: Any, timeout: float = 10.0) -> Wire:
        return cls(server.host, server.port, timeout)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def send(self, api_key: int, version: int, request: Any) -> int:
        self._corr += 1
        try:
            self.sock.sendall(encode_request(api_key, version, self._corr, request))
        except OSError as exc:
            raise Closed(str(exc)) from None
        self._pending.append((self._corr, api_key, version))
        return self._corr

    def receive(self) -> Any:
        """The decoded response to the oldest request in flight."""
        corr, api_key, version = self._pending.pop(0)
        size = _SIZE.unpack(self._read(4))[0]
        frame = self._read(size)
        got, pos = decode_response_header(frame, response_header_version(APIS[api_key], version))
        assert got == corr, f"correlation id {got}, expected {corr}"
        return codec(api_key, "response").decode(frame[pos:], version)

    def call(self, api_key: int, version: int, request: Any) -> Any:
        self.send(api_key, version, request)
        return self.receive()

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            try:
                chunk = self.sock.recv(256 * 1024)
            except OSError as exc:
                raise Closed(str(exc)) from None
            if not chunk:
                raise Closed("connection closed by the server")
            self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    # -- requests the tests share ----------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        cls = request_class(CREATE_TOPICS)
        resp = self.call(CREATE_TOPICS, CREATE_TOPICS_V, cls(timeout_ms=10000, topics=[
            cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=1)]))
        error = resp.topics[0].error_code
        assert error in (0, TOPIC_ALREADY_EXISTS), f"CreateTopics {name!r} answered {error}"

    def commit(self, group: str, topic: str, offsets: dict[int, int]) -> None:
        """Commit and check every partition was accepted."""
        resp = self.call(OFFSET_COMMIT, COMMIT_V, commit_request(group, topic, offsets))
        errors = {p.partition_index: p.error_code for t in resp.topics for p in t.partitions}
        assert errors == dict.fromkeys(offsets, 0), f"OffsetCommit {group} answered {errors}"

    def fetch(self, groups: dict[str, tuple[str, list[int]]]) -> dict[tuple[str, int], int]:
        """(group, partition) -> committed offset (-1 when none)."""
        resp = self.call(OFFSET_FETCH, FETCH_V, fetch_request(groups))
        out = {}
        for g in resp.groups:
            assert g.error_code == 0, f"OffsetFetch of {g.group_id} answered {g.error_code}"
            for t in g.topics:
                for p in t.partitions:
                    assert p.error_code == 0, (
                        f"OffsetFetch {g.group_id} {t.name}-{p.partition_index} "
                        f"answered {p.error_code}")
                    out[(g.group_id, p.partition_index)] = p.committed_offset
        return out
