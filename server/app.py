"""Wiring: assemble a server from its rooms, once, and run it until SIGINT/SIGTERM.

`build` makes the broker state (topics, coordinators, the durable state replayed into
them), the `__consumer_offsets` topic with its one durable hook, the request layer's
dispatcher over the state, and the shell that serves it. Nothing is patched onto an
object later.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import signal
from typing import TYPE_CHECKING

import trio

from kcsim.coordinator import GroupConfig, GroupCoordinator

from .config import SETTINGS, validate
from .durability import open_durability, remove_orphan_partitions, replay
from .offsets import activation
from .offsets.topic import OffsetsTopic, ensure_topic
from .requests import Dispatcher
from .shell.allocator import keep_large_buffers
from .shell.clock import Clock
from .shell.limits import log_connection_room, raise_open_file_limit
from .shell.server import Server
from .state.broker_state import BrokerState
from .state.topics import TopicRegistry
from .tls import open_tls

if TYPE_CHECKING:
    from .config import Config

log = logging.getLogger("kcsim")


# GroupConfig fields a server setting of the same name gives (the others are Kafka's
# fixed values); the assignors are the one setting written differently (a list).
_GROUP_SETTINGS = tuple(
    f.name for f in dataclasses.fields(GroupConfig)
    if f.name in SETTINGS and f.name != "consumer_group_assignors")


# Records __consumer_offsets takes, in memory, before it first compacts itself.
IN_MEMORY_COMPACT_EVERY = 100_000


def group_config(config: Config) -> GroupConfig:
    """The coordinator's settings, taken from the server's by name."""
    return GroupConfig(**{name: getattr(config, name) for name in _GROUP_SETTINGS},
                       consumer_group_assignors=config.assignors)


def build(config: Config, clock: Clock | None = None, *, loaded: bool = False) -> Server:
    """A ready-to-serve Server: broker state and coordinator built, durable state replayed.

    `clock` carries the time a test advanced over a restart (default: a new clock).
    Raises ConfigError for a Config built in code with a value out of its range;
    `loaded` says it came from `config.load`, which checked every value already."""
    if not loaded:
        validate(config)
    clock = clock if clock is not None else Clock()
    if config.in_memory:
        topics = TopicRegistry()
        state = BrokerState(config, topics, GroupCoordinator(group_config(config), topics), clock)
        topic = ensure_topic(topics, config.offsets_topic_num_partitions, lambda records: None)
        view = OffsetsTopic(topic, clock.now_ms, state.data_arrived.unpark_all,
                            config.offsets_topic_value_version)
        view.compact_every = IN_MEMORY_COMPACT_EVERY
        view.tombstone_retention_ms = config.tombstone_retention_ms
        state.offsets_topic = view
        state.offsets_activation = activation.in_memory(view, state)
        return Server(config, Dispatcher(state), clock, tls=open_tls(config))
    # The writer stamps records with the server's clock (wall-clock time until it serves).
    durability = open_durability(config, clock.now_ms)
    topics = TopicRegistry(durability.open_partition)
    try:
        state = BrokerState(config, topics, GroupCoordinator(group_config(config), topics), clock)
        replay(durability, state.apply_all)
        remove_orphan_partitions(durability, set(topics.by_id))
        topic = ensure_topic(topics, config.offsets_topic_num_partitions,
                             durability.writer.commit_now)
        view = OffsetsTopic(topic, clock.now_ms, state.data_arrived.unpark_all,
                            config.offsets_topic_value_version)
        state.offsets_topic = view
        state.offsets_activation = activation.on_disk(view, durability, config.data_dir)
    except BaseException:
        topics.close()
        durability.close()
        raise
    try:
        tls = open_tls(config)
    except BaseException:
        topics.close()
        durability.close()
        raise
    return Server(config, Dispatcher(state), clock, durability, tls)


def ready_line(config: Config, server: Server, control_url: str | None = None,
               metrics_url: str | None = None) -> str:
    """`kcsim ready on HOST:PORT` of the first listener (tools parse that part), then what
    every listener advertises, then where the HTTP control API and the metrics are, if
    they are served, and the CA file clients of SSL listeners trust, if kcsim made one."""
    host = config.listener_plans[0].host or "0.0.0.0"
    advertised = ",".join(str(address) for address in server.advertised)
    line = f"kcsim ready on {host}:{server.port}; advertised listeners {advertised}"
    if control_url is not None:
        line += f"; control API {control_url}"
    if metrics_url is not None:
        line += f"; metrics {metrics_url}/metrics"
    return line if server.ssl_ca_file is None else f"{line}; SSL CA {server.ssl_ca_file}"


async def run_until_signal(config: Config) -> int:
    """Serve `config` (from `config.load`) until SIGINT or SIGTERM; the exit status."""
    open_files = raise_open_file_limit()  # before replay opens the partition files
    event_log = None
    if config.event_log is not None:  # opened first: a path it cannot write stops the start
        from .event_log import EventLogFile

        event_log = EventLogFile(config.event_log)
        try:
            event_log.open()
        except OSError as exc:
            log.error("cannot write the event log %s: %s", config.event_log, exc)
            return 1
    try:
        server = build(config, loaded=True)
    except Exception as exc:  # storage refused to open: say why, exit non-zero
        log.error("cannot start: %s", exc)
        return 1
    # The replayed state is long-lived: keep the cyclic collector off it, and let
    # request garbage (short-lived, acyclic) accumulate longer between collections.
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    keep_large_buffers()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            if event_log is not None and server.state.groups is not None:
                await nursery.start(event_log.run, server.state.groups.events)
            await nursery.start(server.serve)
            log_connection_room(open_files)
            control_url = metrics_url = None
            if config.metrics_port is not None:
                metrics_url = await _start_metrics(nursery, server, config)
            if config.control_port is not None and server.exit_code == 0:
                control_url = await _start_control(nursery, server, config)
            if control_url is not None or metrics_url is not None:
                # The HTTP servers' modules are loaded now: keep them off the collector too.
                gc.freeze()
            if server.exit_code == 0:
                print(ready_line(config, server, control_url, metrics_url), flush=True)

            async def wait_for_signal() -> None:
                async for signum in signals:
                    log.info("received %s, shutting down", signal.Signals(signum).name)
                    break
                server.stop()

            nursery.start_soon(wait_for_signal)
            await server.stopped.wait()
            nursery.cancel_scope.cancel()
    return server.exit_code


def _bind_error(group: BaseExceptionGroup[OSError]) -> BaseException:
    """The OSError of a failed bind, out of the exception groups hypercorn nests it in."""
    found: BaseException = group
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found


async def _start_metrics(nursery: trio.Nursery, server: Server, config: Config) -> str | None:
    """Serve the metrics beside the broker; their URL, or None (and the server stopping
    with status 2, as for a setting that does not fit) when the port cannot be bound."""
    from .metrics.http import serve_metrics

    host, port = config.metrics_host, config.metrics_port
    assert port is not None
    failed: BaseException | None = None
    try:
        urls: list[str] = await nursery.start(serve_metrics, server.broker.metrics.render,
                                              host, port)
    except* OSError as group:
        failed = _bind_error(group)
    if failed is not None:
        log.error("cannot serve metrics on %s:%s (--metrics-port %s): %s", host, port, port,
                  failed)
        server.exit_code = 2
        server.stop()
        return None
    return urls[0]


async def _start_control(nursery: trio.Nursery, server: Server, config: Config) -> str | None:
    """Serve the HTTP control API beside the broker; its URL, or None (and the server
    stopping with status 1) when its port cannot be bound."""
    from .control.http_server import serve_control

    host, port = config.control_host, config.control_port
    log.warning("serving the HTTP control API: it changes this broker's behaviour on request, "
                "for tests only")
    failed: BaseException | None = None
    try:
        urls: list[str] = await nursery.start(serve_control, server, host, port)
    except* OSError as group:
        failed = _bind_error(group)
    if failed is not None:
        log.error("cannot serve the control API on %s:%s: %s", host, port, failed)
        server.exit_code = 1
        server.stop()
        return None
    return urls[0]
