"""Assemble a server from its parts and run it until SIGINT/SIGTERM."""

from __future__ import annotations

import dataclasses
import gc
import logging
import signal
from typing import TYPE_CHECKING

import trio

from kcsim.coordinator.groups import GroupConfig, GroupCoordinator

from .config import SETTINGS, validate
from .durability import open_durability, remove_orphan_partitions, replay
from .shell import Server
from .topics import TopicRegistry

if TYPE_CHECKING:
    from .config import Config

log = logging.getLogger("kcsim")


# GroupConfig fields a server setting of the same name gives (the others are Kafka's
# fixed values); the assignors are the one setting written differently (a list).
_GROUP_SETTINGS = tuple(
    f.name for f in dataclasses.fields(GroupConfig)
    if f.name in SETTINGS and f.name != "consumer_group_assignors")


def group_config(config: Config) -> GroupConfig:
    """The coordinator's settings, taken from the server's by name."""
    return GroupConfig(**{name: getattr(config, name) for name in _GROUP_SETTINGS},
                       consumer_group_assignors=config.assignors)


def build(config: Config) -> Server:
    """A ready-to-serve Server: coordinator attached, durable state replayed.

    Raises ConfigError for a Config built in code with a value out of its range."""
    validate(config)
    server = Server(config)
    broker = server.broker
    if not config.in_memory:
        durability = open_durability(config, server.now_ms)
        try:
            broker.topics = TopicRegistry(durability.open_partition)
            broker.groups = GroupCoordinator(group_config(config), broker.topics)
            replay(durability, broker.apply)
            remove_orphan_partitions(durability, set(broker.topics.by_id))
        except BaseException:
            broker.topics.close()
            durability.close()
            raise
        server.attach_durability(durability)
    else:
        broker.groups = GroupCoordinator(group_config(config), broker.topics)
    return server


async def run_until_signal(config: Config) -> int:
    try:
        server = build(config)
    except Exception as exc:  # storage refused to open: say why, exit non-zero
        log.error("cannot start: %s", exc)
        return 1
    # The replayed state is long-lived: keep the cyclic collector off it, and let
    # request garbage (short-lived, acyclic) accumulate longer between collections.
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            print(f"kcsim ready on {config.host}:{server.port}", flush=True)

            async def wait_for_signal() -> None:
                async for signum in signals:
                    log.info("received %s, shutting down", signal.Signals(signum).name)
                    break
                server.stop()

            nursery.start_soon(wait_for_signal)
            await server.stopped.wait()
            nursery.cancel_scope.cancel()
    return server.exit_code
