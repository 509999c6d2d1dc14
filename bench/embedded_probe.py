"""Times embedded start-up in a fresh interpreter: `python -m bench.embedded_probe SIDE RUNS`.

A separate process keeps the bench's own imports and heap out of the figure;
it prints one JSON line with the import time and each start()/stop() time.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def _factory(side: str) -> Callable[[], Any]:
    if side == "kcsim":
        from kcsim.server.embedded import EmbeddedServer

        return lambda: EmbeddedServer(port=0)
    from .floor import EmbeddedFloor

    return EmbeddedFloor


def probe(side: str, runs: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    make = _factory(side)
    imported = time.perf_counter() - t0
    start_s, stop_s = [], []
    for _ in range(runs):
        a = time.perf_counter()
        srv = make().start()
        b = time.perf_counter()
        socket.create_connection(("127.0.0.1", srv.port), timeout=5).close()
        c = time.perf_counter()
        srv.stop()
        stop_s.append(time.perf_counter() - c)
        start_s.append(b - a)
    return {"import_s": imported, "start_s": start_s, "stop_s": stop_s}


if __name__ == "__main__":
    print(json.dumps(probe(sys.argv[1], int(sys.argv[2]))))
