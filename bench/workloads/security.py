"""What TLS and SASL cost: server CPU per OffsetCommit over a SASL_SSL connection
(authenticated with SCRAM-SHA-512) against a PLAINTEXT one, once connected (target: at most
1.3x), and how long a connection takes to set up: TCP alone, TCP and TLS, TCP and TLS and a
SCRAM-SHA-512 exchange, each until its first ApiVersions answer.

One `kcsim serve` has both listeners; the SCRAM user is made through its HTTP control API.
The load is a blocking client per connection with `--pipeline` requests in flight (the bench's
LoadClient speaks no TLS), the same for both; slices alternate between the two connections so
load from other processes falls on both alike, and the ratio is the median of the rounds'.
Set-up times are the median of SETUPS connections each, one after another; the SCRAM
exchange includes the client's own PBKDF2 (4096 iterations), as a real client pays it.
"""

from __future__ import annotations

import re
import socket
import ssl
import statistics
import struct
import time
from typing import Any

from kcsim.protocol.scram import ScramClient
from kcsim.tools.control_client import ControlClient

from .. import classic as c
from .. import cpuclock
from ..admin import ensure_topic
from ..client import BenchError, Frame, LoadClient, request
from ..harness import RunContext, Side
from ..registry import Figure, at_most, workload

GROUP = "bench-security"
USER, PASSWORD = "bench", "bench-secret"
TARGET_RATIO = 1.3
SETUPS = 30
SLICE_S = 0.2
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_CONTROL = re.compile(r"control API (http://[^\s;]+)")
_CA = re.compile(r"SSL CA (\S+)")
_SIZE = struct.Struct(">i")


class _Wire:
    """One blocking connection, over TLS when given a CA, SCRAM-authenticated when asked."""

    def __init__(self, host: str, port: int, ca: str | None = None, scram: bool = False) -> None:
        sock = socket.create_connection((host, port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ca is not None:
            sock = ssl.create_default_context(cafile=ca).wrap_socket(sock, server_hostname=host)
        self.sock = sock
        self._corr = 0
        if scram:
            self._scram()

    def close(self) -> None:
        self.sock.close()

    def call(self, frame: Frame) -> Any:
        self._corr += 1
        self.sock.sendall(frame.encode(self._corr))
        return frame.decode_response(self._read())

    def _read(self) -> bytes:
        (size,) = _SIZE.unpack(self._exactly(4))
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise BenchError("the server closed the connection")
            data += chunk
        return bytes(data)

    def _scram(self) -> None:
        if self.call(request(SASL_HANDSHAKE, 1, mechanism="SCRAM-SHA-512")).error_code:
            raise BenchError("SaslHandshake for SCRAM-SHA-512 refused")
        client = ScramClient("SCRAM-SHA-512", USER, PASSWORD)
        first = self.call(request(SASL_AUTHENTICATE, 2, auth_bytes=client.first()))
        final = self.call(request(SASL_AUTHENTICATE, 2,
                                  auth_bytes=client.final(first.auth_bytes)))
        if first.error_code or final.error_code or not client.verify(final.auth_bytes):
            raise BenchError(f"SCRAM authentication failed: {final.error_message}")

    def run(self, frame: Frame, in_flight: int, duration: float) -> int:
        """Requests answered in `duration` s, `in_flight` sent at a time."""
        batch = b"".join(frame.encode(i) for i in range(in_flight))
        done, end = 0, time.perf_counter() + duration
        while time.perf_counter() < end:
            self.sock.sendall(batch)
            for _ in range(in_flight):
                self._read()
            done += in_flight
        return done


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _setup_ms(host: str, port: int, ca: str | None, scram: bool) -> float:
    """Median ms to connect (TLS, SCRAM as asked) and have a first ApiVersions answered."""
    versions = request(API_VERSIONS, 3, client_software_name="kcsim-bench",
                       client_software_version="1")
    times = []
    for _ in range(SETUPS):
        start = time.perf_counter()
        wire = _Wire(host, port, ca, scram)
        if wire.call(versions).error_code:
            raise BenchError("ApiVersions answered an error")
        times.append((time.perf_counter() - start) * 1000)
        wire.close()
    return statistics.median(times)


@workload("security", "request_rate", order=27)
def security(ctx: RunContext) -> list[Figure]:
    """Server CPU per OffsetCommit over SASL_SSL/SCRAM against PLAINTEXT, and set-up times."""
    s = ctx.settings
    rounds = max(2, s.rounds, round(s.duration / SLICE_S))
    plain_port, secured_port = _free_port(), _free_port()
    side = Side(ctx, "security", "kcsim", ctx.kcsim(
        ["--in-memory", "--control-port", "0", "--sasl-enabled-mechanisms", "SCRAM-SHA-512"],
        listeners=f"PLAINTEXT://127.0.0.1:{plain_port},SASL_SSL://127.0.0.1:{secured_port}"))
    cpu_us: dict[str, list[float]] = {"PLAINTEXT": [], "SASL_SSL": []}
    setup: dict[str, float] = {}

    def run(side: Side) -> None:
        srv = side.server
        srv.start()
        control, ca = _CONTROL.search(srv.ready_line), _CA.search(srv.ready_line)
        if control is None or ca is None:
            raise BenchError(f"no control API or CA in the ready line {srv.ready_line!r}")
        ControlClient(control.group(1)).call("POST", "/users",
                                             {"name": USER, "password": PASSWORD})
        with LoadClient(srv.host, plain_port) as client:
            ensure_topic(client, c.TOPIC, c.PARTITIONS)
        commit = c.commit_frame(GROUP, 7)
        wires = {"PLAINTEXT": _Wire(srv.host, plain_port),
                 "SASL_SSL": _Wire(srv.host, secured_port, ca.group(1), scram=True)}
        try:
            for wire in wires.values():
                answer = wire.call(commit)
                if any(p.error_code for t in answer.topics for p in t.partitions):
                    raise BenchError("the bench's OffsetCommit answered an error")
                wire.run(commit, s.pipeline, s.warmup / 2)
            for r in range(rounds):
                for name in (("PLAINTEXT", "SASL_SSL") if r % 2 == 0
                             else ("SASL_SSL", "PLAINTEXT")):
                    before = cpuclock.cpu_seconds(srv.pid)
                    done = wires[name].run(commit, s.pipeline, s.duration / rounds)
                    cpu_us[name].append((cpuclock.cpu_seconds(srv.pid) - before) / done * 1e6)
        finally:
            for wire in wires.values():
                wire.close()
        setup["TCP"] = _setup_ms(srv.host, plain_port, None, False)
        setup["TCP + TLS"] = _setup_ms(srv.host, secured_port, ca.group(1), False)
        setup["TCP + TLS + SCRAM-SHA-512"] = _setup_ms(srv.host, secured_port, ca.group(1),
                                                       True)

    ctx.log(f"security: PLAINTEXT and SASL_SSL interleaved, {s.pipeline} in flight")
    with side.srv:  # type: ignore[union-attr]
        side.attempt(run)
    side.report_stderr()
    ok = side.error is None and all(cpu_us.values())
    ratios = [b / a for a, b in zip(cpu_us["PLAINTEXT"], cpu_us["SASL_SSL"], strict=True)
              if a > 0]
    figures = [
        Figure("security", f"server CPU/OffsetCommit, {name}", "µs",
               statistics.median(cpu_us[name]) if ok else None, None, kcsim_error=side.error)
        for name in ("PLAINTEXT", "SASL_SSL")]
    figures.append(Figure(
        "security", "CPU/OffsetCommit SASL_SSL over PLAINTEXT, median of rounds", "x",
        statistics.median(ratios) if ok and ratios else None, None,
        at_most(TARGET_RATIO, "x"), kcsim_error=side.error,
        extra={"kcsim": {"rounds": [round(x, 3) for x in ratios]}}))
    figures += [Figure("security", f"connection set-up, {what} (median of {SETUPS})", "ms",
                       setup.get(what), None, kcsim_error=side.error)
                for what in ("TCP", "TCP + TLS", "TCP + TLS + SCRAM-SHA-512")]
    return figures
