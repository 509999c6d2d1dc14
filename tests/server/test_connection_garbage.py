"""A connection that ends leaves no reference cycle behind: its objects are freed when
it closes, so a flood of bad clients never feeds the cyclic collector long pauses."""

from __future__ import annotations

import gc
import logging
import socket
import struct
import time
from collections import Counter
from typing import Any

import pytest

from kcsim.protocol.headers import RequestHeader, encode_request_header

CONNECTIONS = 30


def _frame(api_key: int, version: int, body: bytes) -> bytes:
    payload = encode_request_header(RequestHeader(api_key, version, 1, "t"), 1) + body
    return struct.pack(">i", len(payload)) + payload


ENDINGS = {
    "malformed body": _frame(12, 3, b"\x00\x01g"),  # Heartbeat cut inside its group id
    "unsupported version": _frame(12, 99, b""),
    "oversized frame": struct.pack(">i", 1 << 30),
    "closed by the client": _frame(18, 0, b""),  # ApiVersions answered, then closed
}


def _connect_and_end(port: int, frame: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(frame)
        sock.settimeout(5)
        while sock.recv(1 << 16):  # until the broker closes, or its answer is read
            if frame is ENDINGS["closed by the client"]:
                break


def _wait_until_closed(kcsim: Any) -> None:
    """Until the broker has ended every connection (its side closes after ours)."""
    deadline = time.monotonic() + 10
    while kcsim.run_sync(lambda: kcsim.server.connections):
        assert time.monotonic() < deadline, "the broker kept connections open"
        time.sleep(0.01)


def _cyclic_garbage(fn: Any) -> Counter[str]:
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        return Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.fixture(params=[False, True], ids=["task per connection", "batched connections"])
def shell(request: pytest.FixtureRequest, kcsim_embedded_factory: Any) -> Any:
    return kcsim_embedded_factory(batch_connections=request.param)


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_an_ended_connection_leaves_no_cycle(shell: Any, ending: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    kcsim = shell
    caplog.set_level(logging.ERROR, logger="kcsim")  # a kept log record would keep the objects
    for _ in range(3):  # codecs compiled, loggers made: what stays is not garbage
        _connect_and_end(kcsim.port, ENDINGS[ending])

    def run() -> None:
        for _ in range(CONNECTIONS):
            _connect_and_end(kcsim.port, ENDINGS[ending])
        _wait_until_closed(kcsim)

    garbage = _cyclic_garbage(run)
    assert sum(garbage.values()) < CONNECTIONS, garbage.most_common(10)
