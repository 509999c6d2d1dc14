"""Assemble a server from its parts and run it until SIGINT/SIGTERM."""

from __future__ import annotations

import logging
import signal

import trio

from .config import Config
from .server import Server

log = logging.getLogger("kcsim")


def build(config: Config) -> Server:
    """A ready-to-serve Server with its coordinator and (later) storage attached."""
    return Server(config)


async def run_until_signal(config: Config) -> int:
    server = build(config)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            print(f"kcsim ready on {config.host}:{server.port}", flush=True)
            async for signum in signals:
                log.info("received %s, shutting down", signal.Signals(signum).name)
                nursery.cancel_scope.cancel()
                break
    return 0
