"""Assemble a server from its parts and run it until SIGINT/SIGTERM."""

from __future__ import annotations

import gc
import logging
import signal
from typing import TYPE_CHECKING

import trio

from kcsim.coordinator import GroupConfig, GroupCoordinator, assignor_names

from .durability import open_durability, remove_orphan_partitions, replay
from .shell import Server
from .topics import TopicRegistry

if TYPE_CHECKING:
    from .config import Config

log = logging.getLogger("kcsim")


def group_config(config: Config) -> GroupConfig:
    return GroupConfig(
        initial_rebalance_delay_ms=config.initial_rebalance_delay_ms,
        min_session_timeout_ms=config.min_session_timeout_ms,
        max_session_timeout_ms=config.max_session_timeout_ms,
        group_max_size=config.group_max_size,
        offsets_retention_ms=config.offsets_retention_ms,
        offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
        offset_metadata_max_bytes=config.offset_metadata_max_bytes,
        consumer_group_session_timeout_ms=config.consumer_group_session_timeout_ms,
        consumer_group_heartbeat_interval_ms=config.consumer_group_heartbeat_interval_ms,
        consumer_group_assignors=assignor_names(config.consumer_group_assignors),
        consumer_group_max_size=config.consumer_group_max_size,
    )


def build(config: Config) -> Server:
    """A ready-to-serve Server: coordinator attached, durable state replayed."""
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
