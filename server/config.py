"""Server configuration: defaults, then an optional TOML file, then KCSIM_* env, then flags.

One declaration per setting (name, type, default, help) feeds the CLI, the
environment reader and the TOML reader, so the three can never disagree.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from kcsim.coordinator import assignor_names

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 9092
    advertised_host: str | None = None
    advertised_port: int | None = None
    node_id: int = 1
    cluster_id: str = "kcsim-cluster-000000000"
    data_dir: str = "./data"
    in_memory: bool = False
    auto_create_topics: bool = True
    default_partitions: int = 1
    initial_rebalance_delay_ms: int = 0
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    group_max_size: int = 2147483647
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000
    offsets_retention_check_interval_ms: int = 600000
    offset_metadata_max_bytes: int = 4096
    consumer_group_session_timeout_ms: int = 45000
    consumer_group_heartbeat_interval_ms: int = 5000
    consumer_group_assignors: str = "uniform,range"
    consumer_group_max_size: int = 2147483647
    max_frame_bytes: int = 100 * 1024 * 1024
    max_connections: int = 1000
    idle_timeout_ms: int = 600000
    fsync: str = "always"
    fsync_interval_ms: int = 1000
    segment_bytes: int = 64 * 1024 * 1024
    compaction_interval_ms: int = 60000
    tombstone_retention_ms: int = 24 * 3600 * 1000
    repair: bool = False
    extensions: bool = True
    pause_api_keys: str = "1000,1001,1002"
    log_level: str = "INFO"

    @property
    def advertised(self) -> tuple[str, int]:
        host = self.advertised_host or (self.host if self.host not in ("0.0.0.0", "::", "") else "127.0.0.1")
        return host, self.advertised_port or self.port


HELP: dict[str, str] = {
    "host": "interface to listen on",
    "port": "TCP port to listen on (0 picks a free port)",
    "advertised_host": "host name given to clients in Metadata/FindCoordinator (default: --host)",
    "advertised_port": "port given to clients (default: the listening port)",
    "node_id": "this broker's node id",
    "cluster_id": "cluster id reported in Metadata and DescribeCluster",
    "data_dir": "directory holding the durable log",
    "in_memory": "keep all state in memory only (nothing written to --data-dir)",
    "auto_create_topics": "create unknown topics when a client asks for them in Metadata",
    "default_partitions": "partition count of auto-created topics and CreateTopics with -1",
    "initial_rebalance_delay_ms": "group.initial.rebalance.delay.ms (Kafka's default is 3000)",
    "min_session_timeout_ms": "group.min.session.timeout.ms",
    "max_session_timeout_ms": "group.max.session.timeout.ms",
    "group_max_size": "group.max.size",
    "offsets_retention_ms": "offsets.retention.minutes, in ms",
    "offsets_retention_check_interval_ms": "offsets.retention.check.interval.ms",
    "offset_metadata_max_bytes": "offset.metadata.max.bytes",
    "consumer_group_session_timeout_ms": "group.consumer.session.timeout.ms (KIP-848 groups)",
    "consumer_group_heartbeat_interval_ms": "group.consumer.heartbeat.interval.ms (KIP-848 groups)",
    "consumer_group_assignors": "server-side assignors, the first is the default (uniform, range)",
    "consumer_group_max_size": "group.consumer.max.size",
    "max_frame_bytes": "largest request frame accepted (socket.request.max.bytes)",
    "max_connections": "connections served at once; more are closed on accept",
    "idle_timeout_ms": "close a connection idle this long (connections.max.idle.ms)",
    "fsync": "always | interval | never: when acknowledged writes reach the disk",
    "fsync_interval_ms": "fsync period for --fsync interval",
    "segment_bytes": "size at which a log segment rolls",
    "compaction_interval_ms": "how often closed segments are compacted (0 = never)",
    "tombstone_retention_ms": "how long compaction keeps tombstones",
    "repair": "cut a log at the first corrupt record instead of refusing to start",
    "extensions": "serve the kcsim extension APIs (KIP-1249 pause/resume/list paused partitions)",
    "pause_api_keys": "wire API keys of PausePartitions,ResumePartitions,ListPausedPartitions",
    "log_level": "DEBUG, INFO, WARNING or ERROR",
}


def _coerce(kind: Any, raw: Any) -> Any:
    if isinstance(raw, str):
        text = raw.strip()
        if kind in (bool, "bool"):
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"expected a boolean, got {raw!r}")
        if kind in (int, "int", "int | None"):
            return int(text)
        return text
    return raw


def load(file: str | None = None, env: Mapping[str, str] | None = None, **overrides: Any) -> Config:
    """Build a Config: defaults < TOML file < KCSIM_* environment < explicit overrides."""
    env = os.environ if env is None else env
    cfg = Config()
    types = {f.name: f.type for f in fields(Config)}
    path = file or env.get("KCSIM_CONFIG")
    if path:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
        table = table.get("kcsim", table)
        for key, value in table.items():
            name = key.replace("-", "_")
            if name not in types:
                raise ValueError(f"{path}: unknown setting {key!r}")
            setattr(cfg, name, value)
    for name, kind in types.items():
        raw = env.get("KCSIM_" + name.upper())
        if raw is not None:
            try:
                setattr(cfg, name, _coerce(kind, raw))
            except ValueError as exc:
                raise ValueError(f"KCSIM_{name.upper()}: {exc}") from None
    for name, value in overrides.items():
        if value is not None:
            setattr(cfg, name, value)
    validate(cfg)
    return cfg


def validate(cfg: Config) -> None:
    if cfg.fsync not in ("always", "interval", "never"):
        raise ValueError(f"fsync must be always, interval or never, not {cfg.fsync!r}")
    if not 0 <= cfg.port <= 65535:
        raise ValueError(f"port {cfg.port} out of range")
    if cfg.default_partitions < 1:
        raise ValueError("default_partitions must be at least 1")
    extension_keys(cfg)
    try:
        assignor_names(cfg.consumer_group_assignors)
    except ValueError as exc:
        raise ValueError(f"consumer_group_assignors: {exc}") from None
    if cfg.min_session_timeout_ms > cfg.max_session_timeout_ms:
        raise ValueError("min_session_timeout_ms exceeds max_session_timeout_ms")


DECLARED_EXTENSION_KEYS = (1000, 1001, 1002)


def extension_keys(cfg: Config) -> dict[int, int]:
    """Wire key -> declared key of each extension API (empty when extensions are off)."""
    if not cfg.extensions:
        return {}
    try:
        wire = [int(k) for k in str(cfg.pause_api_keys).split(",")]
    except ValueError:
        raise ValueError(f"pause_api_keys must be three integers, not {cfg.pause_api_keys!r}") from None
    if len(wire) != 3 or len(set(wire)) != 3 or any(not 0 <= k <= 32767 for k in wire):
        raise ValueError(f"pause_api_keys must be three distinct keys 0..32767, not {cfg.pause_api_keys!r}")
    return dict(zip(wire, DECLARED_EXTENSION_KEYS, strict=False))
