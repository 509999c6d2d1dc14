"""The floor: a trivial trio server speaking only Kafka framing.

It reads size-prefixed frames exactly as kcsim's connection loop does and answers
each with a response fixed per API key, pre-encoded before it starts, carrying
the request's correlation id. Nothing is decoded, routed or allocated per request
beyond the send, so its cost is what trio and the sockets alone cost; every kcsim
figure is shown beside this one.

    python -m bench.floor --port 0 [--responses FILE]

prints `floor ready on HOST:PORT` once it accepts. FILE holds the table written by
`write_table`; without it every request gets an empty body.
"""

from __future__ import annotations

import argparse
import struct
import sys
import threading
from typing import Any

import trio

_SIZE = struct.Struct(">i")
_ENTRY = struct.Struct(">hi")
_RECV = 256 * 1024


def write_table(path: str, table: dict[int, bytes]) -> None:
    """Store {api key: response after the correlation id (header tags + body)}."""
    with open(path, "wb") as f:
        for key, rest in sorted(table.items()):
            f.write(_ENTRY.pack(key, len(rest)))
            f.write(rest)


def read_table(path: str) -> dict[int, bytes]:
    with open(path, "rb") as f:
        raw = f.read()
    table: dict[int, bytes] = {}
    pos = 0
    while pos < len(raw):
        key, n = _ENTRY.unpack_from(raw, pos)
        pos += _ENTRY.size
        table[key] = raw[pos : pos + n]
        pos += n
    return table


def _prepared(table: dict[int, bytes]) -> dict[int, tuple[bytes, bytes]]:
    """(size prefix, rest) per API key: the size is fixed because the body is."""
    return {key: (_SIZE.pack(4 + len(rest)), rest) for key, rest in table.items()}


def _handler(table: dict[int, bytes]) -> Any:
    responses = _prepared(table)
    empty = (_SIZE.pack(4), b"")
    unpack = _SIZE.unpack_from

    async def serve(stream: trio.SocketStream) -> None:
        buf = bytearray()
        try:
            while True:
                pos = 0
                end = len(buf)
                out: list[bytes] = []
                while end - pos >= 4:
                    (size,) = unpack(buf, pos)
                    if end - pos - 4 < size:
                        break
                    api_key = (buf[pos + 4] << 8) | buf[pos + 5]
                    head, rest = responses.get(api_key, empty)
                    out.append(head)
                    out.append(bytes(buf[pos + 8 : pos + 12]))
                    out.append(rest)
                    pos += 4 + size
                if pos:
                    del buf[:pos]
                if out:
                    await stream.send_all(b"".join(out))
                data = await stream.receive_some(_RECV)
                if not data:
                    return
                buf += data
        except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionError):
            pass
        finally:
            with trio.CancelScope(shield=True):
                await stream.aclose()

    return serve


async def serve(host: str, port: int, table: dict[int, bytes],
                *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(_handler(table), listeners)


async def _main(host: str, port: int, table: dict[int, bytes]) -> None:
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(serve, host, port, table)
        print(f"floor ready on {host}:{bound}", flush=True)


class EmbeddedFloor:
    """The floor on a background thread: what a bare trio server costs to start in-process."""

    def __init__(self, table: dict[int, bytes] | None = None, host: str = "127.0.0.1") -> None:
        self.table = table or {}
        self.host = host
        self.port: int | None = None
        self._ready = threading.Event()
        self._token: Any = None
        self._scope: trio.CancelScope | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> EmbeddedFloor:
        self._thread = threading.Thread(target=trio.run, args=(self._run,), daemon=True)
        self._thread.start()
        self._ready.wait()
        return self

    async def _run(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._scope = scope
            async with trio.open_nursery() as nursery:
                self.port = await nursery.start(serve, self.host, 0, self.table)
                self._ready.set()

    def stop(self) -> None:
        if self._token is not None and self._scope is not None:
            try:
                trio.from_thread.run_sync(self._scope.cancel, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=10)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--responses", help="response table written by bench.floor.write_table")
    args = p.parse_args(argv)
    table = read_table(args.responses) if args.responses else {}
    try:
        trio.run(_main, args.host, args.port, table)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
