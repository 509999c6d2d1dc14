"""Classic group members driven to Stable, each over its own connection.

A member has one request in flight and follows the Java consumer's protocol:
JoinGroup without a member id, again with the id MEMBER_ID_REQUIRED handed
out, then SyncGroup (the leader sends a round-robin assignment of every member
it was given); REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION sends it back to
JoinGroup, UNKNOWN_MEMBER_ID back to JoinGroup without an id. With an initial
rebalance delay of 0 the first generation can close before every member has
joined, so a member holding an assignment heartbeats every
HEARTBEAT_INTERVAL_S while others of its group are still joining: that is how
it learns of the next rebalance (a Java consumer waits heartbeat.interval.ms,
3 s, which would measure the client's timer rather than the coordinator). A
group is done once all its members hold an assignment of the same generation.

`scripted=True` is for the floor, which answers each API with one fixed
response: every member sends JoinGroup, JoinGroup and SyncGroup, whatever the
answers, so the floor shows what the same exchange costs with no coordinator.
"""

from __future__ import annotations

import selectors
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from . import classic as c
from .client import BenchError, Frame, send_pending

HEARTBEAT_INTERVAL_S = 0.005
_I32 = struct.Struct(">i")
_RECV = 256 * 1024

JOINING, SYNCING, HEARTBEATING, DONE = "joining", "syncing", "heartbeating", "done"


class Member:
    """One consumer of one group; `conn` is the connection it owns during a run."""

    __slots__ = ("assigned", "client_id", "conn", "frame", "generation", "group", "heartbeat",
                 "member_id", "next_heartbeat", "rebalance_ms", "session_ms", "state")

    def __init__(self, group: str, client_id: str, conn: int,
                 session_ms: int = 45000, rebalance_ms: int = 60000) -> None:
        self.group = group
        self.client_id = client_id
        self.conn = conn
        self.session_ms = session_ms
        self.rebalance_ms = rebalance_ms
        self.member_id = ""
        self.generation = -1
        self.assigned = -1  # generation of the assignment held, -1 for none
        self.state = JOINING
        self.frame: Frame | None = None
        self.heartbeat: Frame | None = None
        self.next_heartbeat = 0.0

    def join(self) -> Frame:
        self.state = JOINING
        self.assigned = -1
        return c.join_frame(self.group, self.member_id, self.session_ms, self.rebalance_ms)


@dataclass
class RunResult:
    """What one `Driver.run` did: wall time to the last group done, and request counts."""

    seconds: float
    requests: dict[str, int] = field(default_factory=dict)
    generations: dict[str, int] = field(default_factory=dict)

    def max_generation(self) -> int:
        return max(self.generations.values(), default=0)


class _Conn:
    __slots__ = ("corr", "member", "rbuf", "sock", "wbuf", "writing")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rbuf = bytearray()
        self.wbuf = bytearray()
        self.writing = False
        self.corr = 0
        self.member: Member | None = None


class Driver:
    """`connections` sockets to one server; each run binds one member to each socket it uses."""

    def __init__(self, host: str, port: int, connections: int, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._sel = selectors.DefaultSelector()
        self.conns: list[_Conn] = []
        try:
            for _ in range(connections):
                sock = socket.create_connection((host, port), timeout=10)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.setblocking(False)
                conn = _Conn(sock)
                self.conns.append(conn)
                self._sel.register(sock, selectors.EVENT_READ, conn)
        except OSError:
            self.close()
            raise

    def close(self) -> None:
        for conn in self.conns:
            self._sel.unregister(conn.sock)
            conn.sock.close()
        self.conns = []
        self._sel.close()

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one run -----------------------------------------------------------------

    def run(self, members: list[Member], scripted: bool = False) -> RunResult:
        """Drive every member's group to Stable (or through the scripted exchange)."""
        groups: dict[str, list[Member]] = {}
        for m in members:
            groups.setdefault(m.group, []).append(m)
            conn = self.conns[m.conn]
            if conn.member is not None:
                raise ValueError(f"connection {m.conn} is given to two members")
            conn.member = m
        self._open = set(groups)
        self._groups = groups
        self._resting: set[Member] = set()  # assigned, in a group still rebalancing
        self._scripted = scripted
        self._counts = {"JoinGroup": 0, "SyncGroup": 0, "Heartbeat": 0}
        self._waiting = 0
        self._finished_at = 0.0
        start = time.perf_counter()
        deadline = start + self.timeout
        try:
            for m in members:
                self._send(m, m.join())
            while self._waiting:
                now = time.perf_counter()
                if now > deadline:
                    stuck = {g: sorted({m.state for m in ms}) for g, ms in groups.items()
                             if g in self._open}
                    raise BenchError(f"{len(stuck)} groups not Stable after {self.timeout:g}s: "
                                     f"{dict(list(stuck.items())[:3])}")
                wait = self._due_heartbeats(now)
                for key, mask in self._sel.select(min(wait, deadline - now)):
                    conn = key.data
                    if mask & selectors.EVENT_WRITE:
                        self._flush(conn)
                    if mask & selectors.EVENT_READ:
                        self._receive(conn)
        finally:
            for m in members:
                self.conns[m.conn].member = None
        gens = {g: ms[0].generation for g, ms in groups.items()}
        return RunResult(self._finished_at - start, dict(self._counts), gens)

    def _due_heartbeats(self, now: float) -> float:
        """Send heartbeats that are due; seconds until the next one (or a long wait)."""
        wait = 0.05
        for m in self._resting:
            if m.frame is None:
                if m.next_heartbeat <= now:
                    m.state = HEARTBEATING
                    assert m.heartbeat is not None
                    self._send(m, m.heartbeat)
                else:
                    wait = min(wait, m.next_heartbeat - now)
        return wait

    def _send(self, m: Member, frame: Frame) -> None:
        conn = self.conns[m.conn]
        conn.corr = (conn.corr + 1) & 0x7FFFFFFF
        m.frame = frame
        self._waiting += 1
        self._counts[_NAMES[frame.api_key]] = self._counts.get(_NAMES[frame.api_key], 0) + 1
        conn.wbuf += frame.encode(conn.corr)
        self._flush(conn)

    def _flush(self, conn: _Conn) -> None:
        send_pending(self._sel, conn, "member connection")

    def _receive(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(_RECV)
        except BlockingIOError:
            return
        if not data:
            raise BenchError("server closed a member's connection")
        buf = conn.rbuf
        buf += data
        if len(buf) < 4:
            return
        (size,) = _I32.unpack_from(buf, 0)
        if len(buf) < 4 + size:
            return
        raw = bytes(buf[4 : 4 + size])
        del buf[: 4 + size]
        if buf:
            raise BenchError("a response arrived that no request asked for")
        (corr,) = _I32.unpack_from(raw, 0)
        if corr != conn.corr:
            raise BenchError(f"correlation id {corr}, expected {conn.corr}")
        m = conn.member
        assert m is not None and m.frame is not None
        frame, m.frame = m.frame, None
        self._waiting -= 1
        self._answer(m, frame, frame.decode_response(raw))

    # -- the member's protocol -------------------------------------------------

    def _answer(self, m: Member, frame: Frame, resp: Any) -> None:
        if m.group not in self._open:
            return  # a heartbeat that was in flight when its group finished
        if self._scripted:
            self._scripted_step(m, frame)
            return
        err = resp.error_code
        if frame.api_key == c.JOIN_GROUP:
            if err == c.MEMBER_ID_REQUIRED:
                m.member_id = resp.member_id
                self._send(m, m.join())
            elif err == 0:
                m.generation = resp.generation_id
                m.state = SYNCING
                leader = resp.leader == m.member_id
                members = [x.member_id for x in resp.members] if leader else []
                self._send(m, c.sync_frame(m.group, m.generation, m.member_id, members))
            elif err == c.UNKNOWN_MEMBER_ID:
                m.member_id = ""
                self._send(m, m.join())
            else:
                raise BenchError(f"JoinGroup of {m.group} answered error {err}")
        elif frame.api_key == c.SYNC_GROUP:
            if err == 0:
                m.heartbeat = c.heartbeat_frame(m.group, m.generation, m.member_id)
                self._done(m)
            else:
                self._rejoin(m, err, "SyncGroup")
        elif err == 0:
            m.state = DONE
            m.next_heartbeat = time.perf_counter() + HEARTBEAT_INTERVAL_S
        else:
            self._rejoin(m, err, "Heartbeat")

    def _rejoin(self, m: Member, err: int, api: str) -> None:
        self._resting.discard(m)
        if err == c.UNKNOWN_MEMBER_ID:
            m.member_id = ""
        elif err not in (c.REBALANCE_IN_PROGRESS, c.ILLEGAL_GENERATION):
            raise BenchError(f"{api} of {m.group} answered error {err}")
        self._send(m, m.join())

    def _done(self, m: Member) -> None:
        now = time.perf_counter()
        m.state = DONE
        m.assigned = gen = m.generation
        m.next_heartbeat = now + HEARTBEAT_INTERVAL_S
        members = self._groups[m.group]
        if all(x.assigned == gen for x in members):
            self._open.discard(m.group)
            self._resting.difference_update(members)
            self._finished_at = now
        else:
            self._resting.add(m)

    def _scripted_step(self, m: Member, frame: Frame) -> None:
        if frame.api_key == c.JOIN_GROUP and not m.member_id:
            m.member_id = c.member_id_of(m.client_id, m.conn)
            self._send(m, m.join())
        elif frame.api_key == c.JOIN_GROUP:
            m.generation = 1
            m.state = SYNCING
            members = self._groups[m.group]
            view = [x.member_id or c.member_id_of(x.client_id, x.conn) for x in members]
            leader = m is members[0]
            self._send(m, c.sync_frame(m.group, 1, m.member_id, view if leader else []))
        else:
            m.state = DONE
            now = time.perf_counter()
            if all(x.state is DONE for x in self._groups[m.group]):
                self._open.discard(m.group)
                self._finished_at = now


_NAMES = {c.JOIN_GROUP: "JoinGroup", c.SYNC_GROUP: "SyncGroup", c.HEARTBEAT: "Heartbeat"}
