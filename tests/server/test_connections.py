"""Connections like Kafka's: no count limit, room up to the open-file limit, no unbounded buffers.

The tests run `kcsim serve` with its default settings (but one, which sets a limit)
and talk to it over real sockets: thousands at once, a thousand group members next
to an admin client, a client that never reads its answers, and a server that runs
out of descriptors.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import resource
import selectors
import socket
import struct
import termios
import time
from typing import TYPE_CHECKING, Any

import pytest
import trio

from kcsim.admin import AdminClient
from kcsim.protocol.codecs import data_codec, request_class
from kcsim.protocol.consumer_protocol import encode_subscription
from kcsim.protocol.errors import ErrorCode

from .clients.groupkit import wait_for
from .rawkafka import (
    Frames,
    TrioWire,
    api_versions_frame,
    correlation_id,
    decode_response,
    open_descriptors,
    proc_status,
    raise_open_file_limit,
    request_frame,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import KcsimProcess

WAIT_S = 30.0


def _answered(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """The next response frame on a blocking socket (one request in flight)."""
    frames = Frames()
    sock.settimeout(timeout)
    while True:
        data = sock.recv(65536)
        assert data, "closed by the server"
        got = frames.feed(data)
        if got:
            assert len(got) == 1
            return got[0]


def _api_versions(sock: socket.socket, corr: int) -> None:
    sock.sendall(api_versions_frame(corr))
    assert correlation_id(_answered(sock)) == corr


def _call(sock: socket.socket, api_key: int, version: int, request: Any) -> Any:
    sock.sendall(request_frame(api_key, version, 1, request))
    _, response = decode_response(api_key, version, _answered(sock))
    return response


# -- many connections ---------------------------------------------------------------


CONNECTIONS = 10_000


def test_ten_thousand_connections_at_once_are_all_answered(kcsim_server: KcsimProcess) -> None:
    raise_open_file_limit(CONNECTIONS + 200)
    address = (kcsim_server.host, kcsim_server.port)
    selector = selectors.DefaultSelector()
    socks: list[socket.socket] = []
    frames: dict[int, Frames] = {}
    answered: set[int] = set()
    closed: set[int] = set()
    try:
        for i in range(CONNECTIONS):
            sock = socket.socket()
            socks.append(sock)
            sock.setblocking(False)
            assert sock.connect_ex(address) in (0, errno.EINPROGRESS)
            selector.register(sock, selectors.EVENT_WRITE, i)
        deadline = time.monotonic() + WAIT_S
        while len(answered) + len(closed) < CONNECTIONS and time.monotonic() < deadline:
            for key, events in selector.select(timeout=0.5):
                i, sock = key.data, key.fileobj
                assert isinstance(sock, socket.socket)
                if events & selectors.EVENT_WRITE:
                    if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        closed.add(i)
                        selector.unregister(sock)
                        continue
                    request = api_versions_frame(i)
                    assert sock.send(request) == len(request)
                    selector.modify(sock, selectors.EVENT_READ, i)
                    continue
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    closed.add(i)
                    selector.unregister(sock)
                    continue
                got = frames.setdefault(i, Frames()).feed(data)
                if got:
                    assert correlation_id(got[0]) == i
                    answered.add(i)
                    selector.unregister(sock)
        # Every socket is still open here: all of them were served at the same time.
        assert len(answered) == CONNECTIONS, (
            f"of {CONNECTIONS} connections open at once, {len(answered)} were answered, "
            f"{len(closed)} closed by the server, "
            f"{CONNECTIONS - len(answered) - len(closed)} unanswered after {WAIT_S:.0f}s")
    finally:
        selector.close()
        for sock in socks:  # reset, not closed: no port left in TIME_WAIT for later tests
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()


def test_a_connection_limit_asked_for_is_kept(kcsim_factory: Callable[..., KcsimProcess]) -> None:
    server = kcsim_factory(max_connections=2)
    address = (server.host, server.port)
    with socket.create_connection(address, timeout=10) as first, \
            socket.create_connection(address, timeout=10) as second:
        _api_versions(first, 1)
        _api_versions(second, 2)
        with socket.create_connection(address, timeout=10) as third:
            assert third.recv(1) == b""  # closed on accept
        _api_versions(first, 3)

    def third_answered() -> bool:
        with socket.create_connection(address, timeout=10) as third:
            try:
                third.sendall(api_versions_frame(4))
                return third.recv(4) != b""
            except ConnectionResetError:  # refused until the server saw the others close
                return False

    wait_for(third_answered, bool, "a connection to be accepted once others closed")


def test_the_open_file_limit_is_raised_to_the_hard_limit_at_start(
        kcsim_factory: Callable[..., KcsimProcess]) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = max(open_descriptors(os.getpid()) + 64, 256)
    if hard != resource.RLIM_INFINITY and hard <= low:
        pytest.skip(f"NOT RUN: the hard RLIMIT_NOFILE ({hard}) leaves no room above a soft {low}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        server = kcsim_factory()  # inherits the low soft limit
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert server.proc is not None
    with open(f"/proc/{server.proc.pid}/limits") as fh:
        line = next(x for x in fh if x.startswith("Max open files"))
    server_soft, server_hard = line.split()[3:5]
    assert server_soft == server_hard, line
    room = re.search(r"open-file limit (\d+): room for about (\d+) connections", server.stderr())
    assert room, server.stderr()
    assert room.group(1) == server_soft
    assert 0 < int(room.group(2)) < int(server_soft)


# -- a thousand classic group members and an admin client ---------------------------

MEMBERS = 1000
JOIN, JOIN_V, SYNC, SYNC_V, HEARTBEAT, HEARTBEAT_V = 11, 9, 14, 5, 12, 4
HEARTBEAT_S = 0.5


class Member:
    """A classic group member over its own connection: join, sync, heartbeat, rejoin on rebalance."""

    def __init__(self, group: str) -> None:
        self.group = group
        self.member_id = ""
        self.generation: int | None = None  # the generation it synced, while stable

    async def run(self, port: int) -> None:
        wire = TrioWire(await trio.open_tcp_stream("127.0.0.1", port))
        join_cls, sync_cls, heartbeat_cls = (request_class(k) for k in (JOIN, SYNC, HEARTBEAT))
        subscription = encode_subscription(
            data_codec("ConsumerProtocolSubscription").cls(topics=["connections"]), 0)
        async with wire.stream:
            while True:
                self.generation = None
                join = await wire.call(JOIN, JOIN_V, join_cls(
                    group_id=self.group, session_timeout_ms=30000, rebalance_timeout_ms=60000,
                    member_id=self.member_id, protocol_type="consumer",
                    protocols=[join_cls.JoinGroupRequestProtocol(name="range", metadata=subscription)]))
                if join.error_code in (ErrorCode.MEMBER_ID_REQUIRED, ErrorCode.UNKNOWN_MEMBER_ID):
                    self.member_id = join.member_id
                    continue
                assert join.error_code == 0, ErrorCode(join.error_code).name
                self.member_id = join.member_id
                assignments = [sync_cls.SyncGroupRequestAssignment(member_id=m.member_id, assignment=b"")
                               for m in join.members]  # only the leader is sent the members
                sync = await wire.call(SYNC, SYNC_V, sync_cls(
                    group_id=self.group, generation_id=join.generation_id, member_id=self.member_id,
                    protocol_type="consumer", protocol_name="range", assignments=assignments))
                if sync.error_code:
                    continue  # a rebalance began meanwhile: rejoin
                self.generation = join.generation_id
                while True:
                    await trio.sleep(HEARTBEAT_S)
                    beat = await wire.call(HEARTBEAT, HEARTBEAT_V, heartbeat_cls(
                        group_id=self.group, generation_id=join.generation_id,
                        member_id=self.member_id))
                    if beat.error_code:
                        break


def _stable_with(admin: AdminClient, group: str, members: list[Member]) -> None:
    def seen() -> tuple[str, int, bool, set[int | None]]:
        """(state, members described, whether they are ours, generations our members synced)."""
        described = admin.describe_groups([group])
        if described.error(group) is not None:  # no member has joined yet
            return str(described.error(group)), 0, False, set()
        ids = {m.member_id for m in described[group].members}
        return (described[group].state, len(ids), ids == {m.member_id for m in members},
                {m.generation for m in members})

    wait_for(seen, lambda view: view[:3] == ("Stable", MEMBERS, True) and len(view[3]) == 1
             and None not in view[3], f"{MEMBERS} members in a Stable group", timeout=WAIT_S,
             interval=0.2)
    listed = {g.group_id: g.state for g in admin.list_groups()}
    assert listed[group] == "Stable"


async def test_a_thousand_group_members_and_an_admin_client_share_one_server(
        kcsim_server: KcsimProcess, unique_name: Callable[[str], str]) -> None:
    raise_open_file_limit(MEMBERS + 200)
    group = unique_name("g")
    members = [Member(group) for _ in range(MEMBERS)]

    def admin_sees_them() -> None:
        with AdminClient(kcsim_server.bootstrap, timeout=10) as admin:
            _stable_with(admin, group, members)

    async with trio.open_nursery() as nursery:
        for member in members:
            nursery.start_soon(member.run, kcsim_server.port)
        await trio.to_thread.run_sync(admin_sees_them)
        nursery.cancel_scope.cancel()
    assert len({m.member_id for m in members}) == MEMBERS


# -- a client that never reads --------------------------------------------------------

CREATE_TOPICS, CREATE_TOPICS_V, COMMIT, COMMIT_V, FETCH, FETCH_V = 19, 7, 8, 8, 9, 8
PARTITIONS = 20
METADATA_CHARS = 4000  # under offset.metadata.max.bytes: each answer is ~80 KB
PIPELINED = 2000
PEAK_GROWTH_BOUND_KB = 16 * 1024  # measured: ~2 MB with the bound, ~200 MB without


def _offsets_with_long_metadata(sock: socket.socket, topic: str, group: str) -> None:
    create = request_class(CREATE_TOPICS)
    created = _call(sock, CREATE_TOPICS, CREATE_TOPICS_V, create(timeout_ms=10000, topics=[
        create.CreatableTopic(name=topic, num_partitions=PARTITIONS, replication_factor=1)]))
    assert created.topics[0].error_code == 0
    commit = request_class(COMMIT)
    committed = _call(sock, COMMIT, COMMIT_V, commit(
        group_id=group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        retention_time_ms=-1, topics=[commit.OffsetCommitRequestTopic(name=topic, partitions=[
            commit.OffsetCommitRequestPartition(
                partition_index=p, committed_offset=p, committed_leader_epoch=-1,
                committed_metadata="m" * METADATA_CHARS) for p in range(PARTITIONS)])]))
    assert {p.error_code for t in committed.topics for p in t.partitions} == {0}


def _queued(sock: socket.socket) -> int:
    """Bytes received by the kernel for this socket and not read yet."""
    return int(struct.unpack("i", fcntl.ioctl(sock, termios.FIONREAD, b"\0\0\0\0"))[0])


def test_a_client_that_never_reads_costs_the_server_a_bounded_buffer(
        kcsim_server: KcsimProcess, unique_name: Callable[[str], str]) -> None:
    assert kcsim_server.proc is not None
    pid = kcsim_server.proc.pid
    address = (kcsim_server.host, kcsim_server.port)
    topic, group = unique_name("t"), unique_name("g")
    fetch_cls = request_class(FETCH)
    fetch = fetch_cls(require_stable=False, groups=[
        fetch_cls.OffsetFetchRequestGroup(group_id=group, topics=None)])
    with socket.create_connection(address, timeout=10) as other:
        _offsets_with_long_metadata(other, topic, group)
        other.sendall(request_frame(FETCH, FETCH_V, 1, fetch))
        answer_bytes = len(_answered(other))
        assert answer_bytes > PARTITIONS * METADATA_CHARS
        peak_before = proc_status(pid, "VmHWM")

        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # the kernel holds little
        with stalled:
            stalled.settimeout(10)
            stalled.connect(address)
            stalled.sendall(b"".join(request_frame(FETCH, FETCH_V, corr, fetch)
                                     for corr in range(1, PIPELINED + 1)))
            # The server has stopped sending once its answers to the stalled client stop
            # arriving while the other client's requests keep being answered.
            probes = iter(range(2, 1_000_000))

            def served_meanwhile() -> tuple[int, int]:
                before = _queued(stalled)
                _api_versions(other, next(probes))
                return before, _queued(stalled)

            wait_for(served_meanwhile, lambda q: q[0] == q[1] > 0,
                     "the stalled client's answers to stop arriving", timeout=WAIT_S)
            assert _queued(stalled) < PIPELINED * answer_bytes
            growth = proc_status(pid, "VmHWM") - peak_before
            assert growth < PEAK_GROWTH_BOUND_KB, (
                f"the server's peak RSS grew by {growth} kB for a client that does not read "
                f"(unbounded, its {PIPELINED} answers are {PIPELINED * answer_bytes // 1024} kB)")
            with socket.create_connection(address, timeout=10) as newcomer:
                _api_versions(newcomer, 1)

            # Reading again, the client gets every answer, in order.
            frames, received = Frames(), 0
            while received < PIPELINED:
                data = stalled.recv(1 << 20)
                assert data, f"closed by the server after {received} answers"
                for frame in frames.feed(data):
                    received += 1
                    assert correlation_id(frame) == received
                    assert len(frame) == answer_bytes


# -- out of descriptors ------------------------------------------------------------


ACCEPT_FAILED = "cannot accept connections"


def test_out_of_descriptors_the_server_serves_its_connections_and_accepts_again(
        kcsim_server: KcsimProcess) -> None:
    assert kcsim_server.proc is not None
    pid = kcsim_server.proc.pid
    address = (kcsim_server.host, kcsim_server.port)
    limit = open_descriptors(pid) + 16
    try:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, limit))
    except PermissionError as exc:
        pytest.skip(f"NOT RUN: cannot lower the server's RLIMIT_NOFILE: {exc}")
    served: list[socket.socket] = []
    waiting: list[socket.socket] = []
    try:
        while open_descriptors(pid) < limit:  # each connection answered holds one descriptor
            served.append(socket.create_connection(address, timeout=10))
            _api_versions(served[-1], len(served))
        exhausted_at = time.monotonic()
        for corr in range(3):
            waiting.append(socket.create_connection(address, timeout=10))  # queued by the kernel
            waiting[-1].sendall(api_versions_frame(corr))
        wait_for(lambda: kcsim_server.stderr(all_runs=False).count(ACCEPT_FAILED), bool,
                 "the server to log that it cannot accept")
        for sock in waiting:
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)

        # Meanwhile every open connection is served, for a while.
        corr = 100
        while time.monotonic() - exhausted_at < 2.5:
            for sock in served:
                corr += 1
                _api_versions(sock, corr)
        logged = kcsim_server.stderr(all_runs=False).count(ACCEPT_FAILED)
        assert logged <= int(time.monotonic() - exhausted_at) + 1, (
            f"{logged} log lines about failed accepts in {time.monotonic() - exhausted_at:.1f}s")

        # Connections closing make room: the queued ones are accepted and answered.
        for sock in served[1:]:
            sock.close()
        del served[1:]
        for corr, sock in enumerate(waiting):
            sock.setblocking(True)
            assert correlation_id(_answered(sock)) == corr
        _api_versions(served[0], 1)
    finally:
        for sock in served + waiting:
            sock.close()
