"""Server configuration: defaults, then an optional TOML file, then KCSIM_* env, then flags.

:class:`Config` is the one declaration of every setting: its type, its range or
choices (as msgspec constraints), its default and its help. The flags, the
environment reader and the TOML reader are derived from it, and every value,
wherever it came from, is checked against it before the server starts. A bad
one raises :class:`ConfigError` naming the key as the user wrote it (TOML key,
environment variable or flag), the value given and what is expected.

The group coordinator's defaults are its own (GroupConfig, Kafka's values) and
storage's are storage's: this module takes them from there instead of
repeating them.
"""

from __future__ import annotations

import difflib
import functools
import json
import os
import ssl
import tomllib
import typing
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

import msgspec
import msgspec.inspect
from msgspec import Meta

from kcsim.coordinator import ASSIGNORS, GroupConfig, TxnConfig, assignor_names
from kcsim.coordinator.kafka_format import DEFAULT_PARTITIONS as DEFAULT_OFFSETS_PARTITIONS
from kcsim.protocol.oauthbearer import parse_scope
from kcsim.storage.compaction_policy import (
    DEFAULT_MIN_CLEANABLE_DIRTY_RATIO,
    DEFAULT_MIN_COMPACTION_LAG_MS,
)
from kcsim.storage.segment import DEFAULT_SEGMENT_BYTES, MIN_SEGMENT_BYTES
from kcsim.storage.writer import DEFAULT_TOMBSTONE_RETENTION_MS, FsyncPolicy

from . import features as features_mod
from . import listeners as listeners_mod

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


class ConfigError(ValueError):
    """A setting that cannot be used; the message names it as the user gave it."""


INT32_MAX = 2**31 - 1
MAX_BROKERS = 64
DECLARED_EXTENSION_KEYS = (1000, 1001, 1002)
# The mechanisms kcsim serves, and those SASL listeners accept unless told.
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
DEFAULT_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_GROUP = GroupConfig()

# Ranges follow the Kafka settings these mirror: INT settings stop at 2^31-1,
# counts and sizes Kafka declares atLeast(1) start at 1.
Port = Annotated[int, Meta(ge=0, le=65535)]
ClientPort = Annotated[int, Meta(ge=1, le=65535)]
Int32 = Annotated[int, Meta(ge=0, le=INT32_MAX)]
# Requests the request log keeps where a test can read them (in-process brokers, or
# `kcsim serve --control-port`); a plain `kcsim serve` keeps none and spends nothing on it.
DEFAULT_REQUEST_LOG_SIZE = 4096
Positive32 = Annotated[int, Meta(ge=1, le=INT32_MAX)]
Millis = Annotated[int, Meta(ge=0)]
PositiveMillis = Annotated[int, Meta(ge=1)]
NonEmpty = Annotated[str, Meta(min_length=1)]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]


@functools.cache
def _api_keys(text: str) -> tuple[int, ...]:
    """Three distinct wire API keys, comma-separated (ValueError otherwise); read once
    per text, as every broker's start asks."""
    keys = tuple(int(k) for k in text.split(","))
    if len(keys) != 3 or len(set(keys)) != 3 or any(not 0 <= k <= 32767 for k in keys):
        raise ValueError(text)
    return keys


def _valid_api_keys(text: str) -> bool:
    try:
        _api_keys(text)
    except ValueError:
        return False
    return True


def _valid_assignors(text: str) -> bool:
    try:
        assignor_names(text)
    except ValueError:
        return False
    return True


def _valid_listeners(text: str) -> bool:
    listeners_mod.parse(text)  # ValueError says what is wrong
    return True


def _valid_advertised_listeners(text: str) -> bool:
    listeners_mod.parse(text, advertised=True)
    return True


def _valid_protocol_map(text: str) -> bool:
    listeners_mod.parse_protocol_map(text)
    return True


def _valid_mechanisms(text: str) -> bool:
    mechanisms(text)  # ValueError says what is wrong
    return True


def _valid_plain_users(text: str) -> bool:
    plain_users(text)
    return True


# What `--authorizer` accepts: kcsim's name, and the class names Kafka configures it by.
AUTHORIZERS = ("standard", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
               "kafka.security.authorizer.AclAuthorizer")


def _valid_authorizer(text: str) -> bool:
    if text not in AUTHORIZERS:
        raise ValueError("kcsim's authorizer is Kafka's StandardAuthorizer: "
                         + " or ".join(AUTHORIZERS))
    return True


def super_users(text: str | None) -> frozenset[str]:
    """The principals of `super.users`: `User:a;User:b` (each with its type)."""
    if not text:
        return frozenset()
    users = frozenset(u.strip() for u in text.split(";") if u.strip())
    for user in users:
        kind, _, name = user.partition(":")
        if not kind or not name:
            raise ValueError(f"{user!r} is not a principal TYPE:NAME (User:alice)")
    return users


def _valid_super_users(text: str) -> bool:
    super_users(text)
    return True


def mechanisms(text: str) -> tuple[str, ...]:
    """The SASL mechanisms of a comma-separated list, in order, each one kcsim serves."""
    out = tuple(dict.fromkeys(m.strip().upper() for m in text.split(",") if m.strip()))
    if not out:
        raise ValueError("no SASL mechanism given")
    unknown = [m for m in out if m not in SASL_MECHANISMS]
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: kcsim serves the SASL mechanisms "
                         + ", ".join(SASL_MECHANISMS))
    return out


def _valid_scope(text: str) -> bool:
    parse_scope(text)
    return True


def plain_users(text: str) -> dict[str, str]:
    """`name:password,...` as a dict; ValueError for an entry without a name or password."""
    users: dict[str, str] = {}
    for entry in text.split(","):
        name, sep, password = entry.partition(":")
        if not sep or not name.strip() or not password:
            raise ValueError(f"{entry!r} is not name:password")
        users[name.strip()] = password
    return users


def _valid_features(entries: tuple[str, ...]) -> bool:
    features_mod.parse_pins(entries)
    return True


def _checked(expect: str, check: Callable[[Any], bool]) -> dict[str, Any]:
    """Meta extra of a setting whose values need more than a type and a range.

    `check` returns False for "not what is expected", or raises ValueError to say why."""
    return {"expect": expect, "check": check}


class Config(msgspec.Struct, kw_only=True):
    """Every server setting: type and range in the annotation, help as its description."""

    host: Annotated[str, Meta(description="interface to listen on")] = "127.0.0.1"
    port: Annotated[Port, Meta(description="TCP port to listen on (0 picks a free port)")] = 9092
    advertised_host: Annotated[NonEmpty | None, Meta(
        description="host name given to clients in Metadata/FindCoordinator (default: --host)",
    )] = None
    advertised_port: Annotated[ClientPort | None, Meta(
        description="port given to clients (default: the listening port)")] = None
    listeners: Annotated[str | None, Meta(
        description="listeners as Kafka names them, instead of --host/--port: "
                    "PLAINTEXT://0.0.0.0:9092,INTERNAL://0.0.0.0:29092 (empty host: every "
                    "interface; port 0 picks a free port)",
        extra=_checked("NAME://host:port, comma-separated", _valid_listeners),
    )] = None
    advertised_listeners: Annotated[str | None, Meta(
        description="the address each listener gives its clients, instead of "
                    "--advertised-host/--advertised-port: PLAINTEXT://localhost:9092,"
                    "INTERNAL://kcsim:29092 (a listener not named advertises its own address)",
        extra=_checked("NAME://host:port, comma-separated", _valid_advertised_listeners),
    )] = None
    listener_security_protocol_map: Annotated[str | None, Meta(
        description="NAME:PROTOCOL for each listener, as Kafka's: PLAINTEXT, SSL, "
                    "SASL_PLAINTEXT or SASL_SSL (default: a listener named as a protocol "
                    "speaks it, any other PLAINTEXT)",
        extra=_checked("NAME:PROTOCOL, comma-separated", _valid_protocol_map),
    )] = None
    ssl_keystore_location: Annotated[NonEmpty | None, Meta(
        description="PEM file with the SSL listeners' certificate chain and private key "
                    "(ssl.keystore.location of type PEM; default: a throw-away CA and server "
                    "certificate made at start, the CA written to the data dir)")] = None
    ssl_key_password: Annotated[NonEmpty | None, Meta(
        description="password of the private key in --ssl-keystore-location, if encrypted "
                    "(ssl.key.password)")] = None
    ssl_truststore_location: Annotated[NonEmpty | None, Meta(
        description="PEM file of the CAs whose client certificates are trusted "
                    "(ssl.truststore.location; default: the generated CA)")] = None
    ssl_client_auth: Annotated[Literal["none", "requested", "required"], Meta(
        description="ssl.client.auth: whether SSL clients must (required) or may (requested) "
                    "present a certificate; its subject is the connection's principal")] = "none"
    ssl_handshake_timeout_ms: Annotated[PositiveMillis, Meta(
        description="close an SSL connection whose TLS handshake has not finished by then"
    )] = 10000
    sasl_enabled_mechanisms: Annotated[str, Meta(
        description="sasl.enabled.mechanisms: the SASL mechanisms SASL listeners accept, "
                    "comma-separated, of " + ", ".join(SASL_MECHANISMS) + " (OAUTHBEARER: "
                    "unsecured JWTs, as Kafka's default validator takes them)",
        extra=_checked("mechanisms, comma-separated", _valid_mechanisms),
    )] = ",".join(DEFAULT_SASL_MECHANISMS)
    sasl_plain_users: Annotated[str | None, Meta(
        description="the users SASL/PLAIN accepts, name:password,... (Kafka's JAAS "
                    "user_NAME=\"PASSWORD\" of PlainLoginModule; SCRAM users are records, "
                    "made with AlterUserScramCredentials)",
        extra=_checked("name:password, comma-separated", _valid_plain_users),
    )] = None
    sasl_server_max_receive_size: Annotated[Positive32, Meta(
        description="sasl.server.max.receive.size: the largest frame a connection may send "
                    "before it has authenticated (larger: the connection is closed)")] = 524288
    sasl_oauthbearer_principal_claim: Annotated[NonEmpty, Meta(
        description="the JWT claim OAUTHBEARER takes the principal from (the unsecured "
                    "validator's unsecuredValidatorPrincipalClaimName)")] = "sub"
    sasl_oauthbearer_scope_claim: Annotated[NonEmpty, Meta(
        description="the JWT claim holding the token's scope "
                    "(unsecuredValidatorScopeClaimName)")] = "scope"
    sasl_oauthbearer_required_scope: Annotated[str | None, Meta(
        description="space-separated scope every OAUTHBEARER token must hold "
                    "(unsecuredValidatorRequiredScope)",
        extra=_checked("scope items, space-separated", _valid_scope),
    )] = None
    sasl_oauthbearer_clock_skew_ms: Annotated[Int32, Meta(
        description="clock skew allowed when checking a token's exp and iat against the "
                    "broker's clock (unsecuredValidatorAllowableClockSkewMs)")] = 0
    connections_max_reauth_ms: Annotated[Millis, Meta(
        description="connections.max.reauth.ms: a SASL session lasts at most this long "
                    "(and an OAUTHBEARER one no longer than its token) on the broker's clock: "
                    "the client re-authenticates, or its connection is closed at its next "
                    "request; 0: sessions never expire, but OAUTHBEARER tokens do")] = 0
    connection_failed_authentication_delay_ms: Annotated[Millis, Meta(
        description="connection.failed.authentication.delay.ms: how long a connection that "
                    "failed to authenticate waits, on the real clock, before its answer is sent "
                    "and it is closed")] = 100
    authorizer: Annotated[str | None, Meta(
        description="authorizer.class.name: `standard` (Kafka's StandardAuthorizer) checks "
                    "every request against the ACLs (default: none, nothing is checked)",
        extra=_checked("standard", _valid_authorizer),
    )] = None
    super_users: Annotated[str | None, Meta(
        description="super.users: principals the authorizer allows everything, "
                    "User:a;User:b",
        extra=_checked("User:NAME, semicolon-separated", _valid_super_users),
    )] = None
    allow_everyone_if_no_acl_found: Annotated[bool, Meta(
        description="allow.everyone.if.no.acl.found: a resource no ACL names is open to "
                    "everyone (default, as Kafka's: closed to all but super users)")] = False
    batch_connections: Annotated[bool, Meta(
        description="serve plaintext connections whose requests are answered at once in one "
                    "pass per wake-up (epoll; Linux), each connection in its own task only "
                    "while it waits: for hundreds of connections; off (default): every "
                    "connection in its own task, cheaper for a few")] = False
    node_id: Annotated[Int32, Meta(description="this broker's node id")] = 1
    brokers: Annotated[int, Meta(
        ge=1, le=MAX_BROKERS,
        description="brokers (nodes) this kcsim plays: node ids from --node-id on, each with "
                    "its own listeners on the ports after --port's, all over one log; "
                    "partition leaders and coordinators are spread over them")] = 1
    cluster_id: Annotated[NonEmpty, Meta(
        description="cluster id reported in Metadata and DescribeCluster")] = "kcsim-cluster-000000000"
    data_dir: Annotated[NonEmpty, Meta(description="directory holding the durable log")] = "./data"
    in_memory: Annotated[bool, Meta(
        description="keep all state in memory only (nothing written to --data-dir)")] = False
    auto_create_topics: Annotated[bool, Meta(
        description="create unknown topics when a client asks for them in Metadata")] = True
    default_partitions: Annotated[Positive32, Meta(
        description="partition count of auto-created topics and CreateTopics with -1")] = 1
    offsets_topic_num_partitions: Annotated[Positive32, Meta(
        description="offsets.topic.num.partitions: partitions of __consumer_offsets, fixed "
                    "once the topic exists (as in Kafka)")] = DEFAULT_OFFSETS_PARTITIONS
    offsets_topic_value_version: Annotated[int, Meta(
        ge=3, le=4,
        description="OffsetCommitValue version written to __consumer_offsets: 4 as Kafka 4.x "
                    "writes it, 3 as Kafka 2.1-3.x did (what Burrow 1.2 decodes)")] = 4
    initial_rebalance_delay_ms: Annotated[Int32, Meta(
        description="group.initial.rebalance.delay.ms (Kafka's default is 3000)",
    )] = _GROUP.initial_rebalance_delay_ms
    min_session_timeout_ms: Annotated[Int32, Meta(
        description="group.min.session.timeout.ms")] = _GROUP.min_session_timeout_ms
    max_session_timeout_ms: Annotated[Int32, Meta(
        description="group.max.session.timeout.ms")] = _GROUP.max_session_timeout_ms
    group_max_size: Annotated[Positive32, Meta(
        description="group.max.size")] = _GROUP.group_max_size
    offsets_retention_ms: Annotated[PositiveMillis, Meta(
        description="offsets.retention.minutes, in ms")] = _GROUP.offsets_retention_ms
    offsets_retention_check_interval_ms: Annotated[PositiveMillis, Meta(
        description="offsets.retention.check.interval.ms",
    )] = _GROUP.offsets_retention_check_interval_ms
    offset_metadata_max_bytes: Annotated[Int32, Meta(
        description="offset.metadata.max.bytes")] = _GROUP.offset_metadata_max_bytes
    consumer_group_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.consumer.session.timeout.ms (KIP-848 groups)",
    )] = _GROUP.consumer_group_session_timeout_ms
    consumer_group_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.consumer.heartbeat.interval.ms (KIP-848 groups)",
    )] = _GROUP.consumer_group_heartbeat_interval_ms
    consumer_group_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.consumer.assignment.interval.ms: the least time between two target "
                    "assignments of a KIP-848 group (Kafka 4.3+; 0: assign in the heartbeat "
                    "that changes the group)",
    )] = _GROUP.consumer_group_assignment_interval_ms
    consumer_group_min_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.consumer.min.session.timeout.ms: the least a group's "
                    "consumer.session.timeout.ms may be set to",
    )] = _GROUP.consumer_group_min_session_timeout_ms
    consumer_group_max_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.consumer.max.session.timeout.ms: the most a group's "
                    "consumer.session.timeout.ms may be set to",
    )] = _GROUP.consumer_group_max_session_timeout_ms
    consumer_group_min_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.consumer.min.heartbeat.interval.ms: the least a group's "
                    "consumer.heartbeat.interval.ms may be set to",
    )] = _GROUP.consumer_group_min_heartbeat_interval_ms
    consumer_group_max_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.consumer.max.heartbeat.interval.ms: the most a group's "
                    "consumer.heartbeat.interval.ms may be set to",
    )] = _GROUP.consumer_group_max_heartbeat_interval_ms
    consumer_group_min_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.consumer.min.assignment.interval.ms: the least a group's "
                    "consumer.assignment.interval.ms (and the broker's) may be set to",
    )] = _GROUP.consumer_group_min_assignment_interval_ms
    consumer_group_max_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.consumer.max.assignment.interval.ms: the most a group's "
                    "consumer.assignment.interval.ms (and the broker's) may be set to",
    )] = _GROUP.consumer_group_max_assignment_interval_ms
    consumer_group_assignors: Annotated[str, Meta(
        description="server-side assignors, the first is the default (uniform, range)",
        extra=_checked("distinct assignor names, comma-separated, from: "
                       + ", ".join(sorted(ASSIGNORS)), _valid_assignors),
    )] = ",".join(_GROUP.consumer_group_assignors)
    consumer_group_max_size: Annotated[Positive32, Meta(
        description="group.consumer.max.size")] = _GROUP.consumer_group_max_size
    streams_group_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.streams.session.timeout.ms (KIP-1071 streams groups)",
    )] = _GROUP.streams_group_session_timeout_ms
    streams_group_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.streams.heartbeat.interval.ms (KIP-1071 streams groups)",
    )] = _GROUP.streams_group_heartbeat_interval_ms
    streams_group_initial_rebalance_delay_ms: Annotated[Int32, Meta(
        description="group.streams.initial.rebalance.delay.ms: how long a new streams group "
                    "waits for more members before its first assignment (0: none)",
    )] = _GROUP.streams_group_initial_rebalance_delay_ms
    streams_group_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.streams.assignment.interval.ms: the least time between two target "
                    "assignments of a streams group (0: assign in the heartbeat that changes "
                    "the group)",
    )] = _GROUP.streams_group_assignment_interval_ms
    streams_group_max_size: Annotated[Positive32, Meta(
        description="group.streams.max.size")] = _GROUP.streams_group_max_size
    streams_group_num_standby_replicas: Annotated[Int32, Meta(
        description="group.streams.num.standby.replicas: standby tasks per task, each on "
                    "another process than the active one",
    )] = _GROUP.streams_group_num_standby_replicas
    streams_group_min_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.streams.min.session.timeout.ms: the least a group's "
                    "streams.session.timeout.ms may be set to",
    )] = _GROUP.streams_group_min_session_timeout_ms
    streams_group_max_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.streams.max.session.timeout.ms: the most a group's "
                    "streams.session.timeout.ms may be set to",
    )] = _GROUP.streams_group_max_session_timeout_ms
    streams_group_min_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.streams.min.heartbeat.interval.ms: the least a group's "
                    "streams.heartbeat.interval.ms may be set to",
    )] = _GROUP.streams_group_min_heartbeat_interval_ms
    streams_group_max_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.streams.max.heartbeat.interval.ms: the most a group's "
                    "streams.heartbeat.interval.ms may be set to",
    )] = _GROUP.streams_group_max_heartbeat_interval_ms
    streams_group_min_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.streams.min.assignment.interval.ms: the least a group's "
                    "streams.assignment.interval.ms may be set to",
    )] = _GROUP.streams_group_min_assignment_interval_ms
    streams_group_max_assignment_interval_ms: Annotated[Int32, Meta(
        description="group.streams.max.assignment.interval.ms: the most a group's "
                    "streams.assignment.interval.ms may be set to",
    )] = _GROUP.streams_group_max_assignment_interval_ms
    streams_group_max_standby_replicas: Annotated[Int32, Meta(
        description="group.streams.max.standby.replicas: the most a group's "
                    "streams.num.standby.replicas may be set to",
    )] = _GROUP.streams_group_max_standby_replicas
    streams_group_num_warmup_replicas: Annotated[Int32, Meta(
        description="group.streams.num.warmup.replicas: kept, but no warm-up task is placed, "
                    "as in Kafka 4.4",
    )] = _GROUP.streams_group_num_warmup_replicas
    streams_group_max_warmup_replicas: Annotated[Int32, Meta(
        description="group.streams.max.warmup.replicas: the most a group's "
                    "streams.num.warmup.replicas may be set to",
    )] = _GROUP.streams_group_max_warmup_replicas
    streams_group_acceptable_recovery_lag: Annotated[int, Meta(
        ge=0, description="group.streams.acceptable.recovery.lag: told to streams members",
    )] = _GROUP.streams_group_acceptable_recovery_lag
    streams_group_task_offset_interval_ms: Annotated[Positive32, Meta(
        description="group.streams.task.offset.interval.ms: how often streams members report "
                    "their task offsets (told to them)",
    )] = _GROUP.streams_group_task_offset_interval_ms
    streams_group_min_task_offset_interval_ms: Annotated[Positive32, Meta(
        description="group.streams.min.task.offset.interval.ms: the least a group's "
                    "streams.task.offset.interval.ms may be set to",
    )] = _GROUP.streams_group_min_task_offset_interval_ms
    share_group_session_timeout_ms: Annotated[Positive32, Meta(
        description="group.share.session.timeout.ms: a share group member's session",
    )] = _GROUP.share_group_session_timeout_ms
    share_group_heartbeat_interval_ms: Annotated[Positive32, Meta(
        description="group.share.heartbeat.interval.ms: told to share group members",
    )] = _GROUP.share_group_heartbeat_interval_ms
    share_group_max_size: Annotated[Positive32, Meta(
        description="group.share.max.size: the most members a share group may have",
    )] = _GROUP.share_group_max_size
    share_group_record_lock_duration_ms: Annotated[Positive32, Meta(
        description="group.share.record.lock.duration.ms: how long a share consumer holds "
                    "the records it fetched (on the broker's clock)",
    )] = _GROUP.share_group_record_lock_duration_ms
    share_group_delivery_count_limit: Annotated[Positive32, Meta(
        description="group.share.delivery.count.limit: deliveries before a record is archived",
    )] = _GROUP.share_group_delivery_count_limit
    transaction_max_timeout_ms: Annotated[Positive32, Meta(
        description="transaction.max.timeout.ms: the longest transaction timeout a producer "
                    "may ask for")] = TxnConfig().transaction_max_timeout_ms
    max_incremental_fetch_session_cache_slots: Annotated[Int32, Meta(
        description="max.incremental.fetch.session.cache.slots: fetch sessions kept, split "
                    "evenly over 8 shards as in Kafka (under 8: none)")] = 1000
    max_frame_bytes: Annotated[Positive32, Meta(
        description="largest request frame accepted (socket.request.max.bytes)")] = 100 * 1024 * 1024
    max_connections: Annotated[Int32, Meta(
        description="connections served at once, more are closed on accept "
                    "(0: no limit but the open-file limit, as Kafka)")] = 0
    idle_timeout_ms: Annotated[PositiveMillis, Meta(
        description="close a connection idle this long (connections.max.idle.ms)")] = 600000
    fsync: Annotated[FsyncPolicy, Meta(
        description="when acknowledged writes reach the disk: always = fsync before answering, "
                    "interval = every --fsync-interval-ms, never = when the OS likes (all "
                    "three write to the OS before answering)")] = "interval"
    fsync_interval_ms: Annotated[PositiveMillis, Meta(
        description="fsync period for --fsync interval")] = 1000
    segment_bytes: Annotated[int, Meta(
        ge=MIN_SEGMENT_BYTES, le=INT32_MAX,
        description="size at which a log segment rolls")] = DEFAULT_SEGMENT_BYTES
    compaction_interval_ms: Annotated[Millis, Meta(
        description="the longest a dirty log waits for compaction: every interval, closed "
                    "segments written since the last compaction are compacted whatever "
                    "the dirty ratio (0 = never compact)")] = 60000
    min_cleanable_dirty_ratio: Annotated[float, Meta(
        ge=0.0, le=1.0,
        description="min.cleanable.dirty.ratio: compact the log as soon as the closed "
                    "segments written since the last compaction are more than this share of "
                    "the closed segments' bytes (checked at start and as segments roll)",
    )] = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO
    min_compaction_lag_ms: Annotated[Millis, Meta(
        description="min.compaction.lag.ms: a record is compacted only once it is this old",
    )] = DEFAULT_MIN_COMPACTION_LAG_MS
    tombstone_retention_ms: Annotated[Millis, Meta(
        description="how long compaction keeps tombstones")] = DEFAULT_TOMBSTONE_RETENTION_MS
    log_retention_check_interval_ms: Annotated[PositiveMillis, Meta(
        description="log.retention.check.interval.ms: how often, by the broker's clock, "
                    "topics' retention and log cleaner run")] = 300000
    repair: Annotated[bool, Meta(
        description="cut a log at the first corrupt record instead of refusing to start")] = False
    extensions: Annotated[bool, Meta(
        description="serve the kcsim extension APIs (KIP-1249 pause/resume/list paused partitions)",
    )] = True
    events: Annotated[bool, Meta(
        description="write the group event log: each change of a group's life (members "
                    "joining and leaving, rebalances, pauses, offsets, transactions) with "
                    "its cause, as records replay rebuilds (off: none is written)")] = True
    pause_api_keys: Annotated[str, Meta(
        description="wire API keys of PausePartitions,ResumePartitions,ListPausedPartitions",
        extra=_checked("three distinct API keys 0..32767, comma-separated", _valid_api_keys),
    )] = ",".join(map(str, DECLARED_EXTENSION_KEYS))
    feature: Annotated[tuple[str, ...], Meta(
        description="pin the finalized level of a feature ApiVersions reports, repeatable "
                    "(a feature not pinned is finalized at the highest level kcsim "
                    "implements; level 0 turns it off)",
        extra=_checked("NAME=LEVEL, from: " + ", ".join(
            f"{name} {lo}-{hi}" for name, (lo, hi) in features_mod.SUPPORTED.items()),
            _valid_features),
    )] = ()
    log_level: Annotated[LogLevel, Meta(description="how much the server logs")] = "INFO"
    request_log_size: Annotated[Int32 | None, Meta(
        description="requests the request log keeps, newest last, for tests to query "
                    f"(0: none; default: {DEFAULT_REQUEST_LOG_SIZE} where a test can read "
                    "them, in-process or with --control-port, else none)")] = None
    control_port: Annotated[Port | None, Meta(
        description="serve the HTTP control API for tests on this port (0 picks a free "
                    "port; default: off). It changes the broker's behaviour: tests only "
                    "(docs/control-http.md)")] = None
    control_host: Annotated[NonEmpty, Meta(
        description="interface the HTTP control API listens on")] = "127.0.0.1"
    event_log: Annotated[NonEmpty | None, Meta(
        description="append every group event from start-up on to this file, one JSON "
                    "line each (events replayed from the data dir are not written again; "
                    "default: off)")] = None
    metrics_port: Annotated[Port | None, Meta(
        description="serve Prometheus metrics at /metrics on this port (0 picks a free "
                    "port; default: off; the control port serves them too)")] = None
    metrics_host: Annotated[NonEmpty, Meta(
        description="interface the metrics port listens on")] = "127.0.0.1"
    metrics: Annotated[bool, Meta(
        description="count requests, their time and errors per API for the metrics "
                    "(off: nothing is counted per request)")] = True

    def in_process(self) -> Config:
        """These settings for a broker in a test's own process, where its request log can
        be read: it keeps DEFAULT_REQUEST_LOG_SIZE requests unless told otherwise."""
        if self.request_log_size is not None:
            return self
        return msgspec.structs.replace(self, request_log_size=DEFAULT_REQUEST_LOG_SIZE)

    @property
    def kept_requests(self) -> int:
        """The request log's size: kept only where a test can read it, unless set."""
        if self.request_log_size is not None:
            return self.request_log_size
        return DEFAULT_REQUEST_LOG_SIZE if self.control_port is not None else 0

    @property
    def listener_plans(self) -> tuple[listeners_mod.ListenerPlan, ...]:
        """Where to listen and what to advertise, from --listeners or the shorthand
        (ValueError for settings that do not fit together: load and validate say which)."""
        bound = self._bound_listeners()
        return self._plans(bound, listeners_mod.protocols(bound, self._protocol_map()))

    def _bound_listeners(self) -> tuple[listeners_mod.Listener, ...]:
        if self.listeners is None:
            return (listeners_mod.Listener(listeners_mod.SHORTHAND_NAME, self.host, self.port),)
        return listeners_mod.parse(self.listeners)

    def _protocol_map(self) -> dict[str, str] | None:
        if self.listener_security_protocol_map is None:
            return None
        return listeners_mod.parse_protocol_map(self.listener_security_protocol_map)

    def _plans(self, bound: tuple[listeners_mod.Listener, ...],
               protocol_of: dict[str, str]) -> tuple[listeners_mod.ListenerPlan, ...]:
        if self.advertised_listeners is not None:
            return listeners_mod.plan(
                bound, listeners_mod.parse(self.advertised_listeners, advertised=True),
                protocol_of)
        plans = listeners_mod.plan(bound, (), protocol_of)
        if self.advertised_host is None and self.advertised_port is None:
            return plans
        return (plans[0]._replace(advertised_host=self.advertised_host,
                                  advertised_port=self.advertised_port),)

    @property
    def node_ids(self) -> tuple[int, ...]:
        """The node id of each broker this kcsim plays, in order."""
        return tuple(range(self.node_id, self.node_id + self.brokers))

    @property
    def super_user_set(self) -> frozenset[str]:
        return super_users(self.super_users)

    @property
    def feature_levels(self) -> dict[str, int]:
        """The finalized level of each feature kcsim reports (level 0 left out)."""
        return _finalized(self.feature)

    @property
    def assignors(self) -> tuple[str, ...]:
        """consumer_group_assignors as names, the default first."""
        return assignor_names(self.consumer_group_assignors)


@functools.cache
def _finalized(pins: tuple[str, ...]) -> dict[str, int]:
    return features_mod.finalized(features_mod.parse_pins(pins))


# Pairs Kafka also requires to be ordered: (smaller, strictly?, larger).
ORDERED: tuple[tuple[str, bool, str], ...] = (
    ("min_session_timeout_ms", False, "max_session_timeout_ms"),
    ("consumer_group_heartbeat_interval_ms", True, "consumer_group_session_timeout_ms"),
    ("consumer_group_min_assignment_interval_ms", False, "consumer_group_assignment_interval_ms"),
    ("consumer_group_assignment_interval_ms", False, "consumer_group_max_assignment_interval_ms"),
)


# -- the table derived from Config ------------------------------------------------------


class Setting(NamedTuple):
    name: str
    annotation: Any  # what msgspec converts and checks a value against
    kind: Any  # the msgspec type info of the value (None stripped)
    optional: bool
    default: Any
    help: str
    choices: tuple[Any, ...]  # of an enumeration, in the order declared
    expect: str  # "what is expected", for error messages and --help
    check: Callable[[Any], bool] | None

    @property
    def boolean(self) -> bool:
        return isinstance(self.kind, msgspec.inspect.BoolType)

    @property
    def repeatable(self) -> bool:
        """A list: a flag given again adds to it, the environment separates with commas."""
        return isinstance(self.kind, msgspec.inspect.VarTupleType)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return "KCSIM_" + self.name.upper()


def _declared_choices(annotation: Any) -> tuple[Any, ...]:
    """A Literal's values in the order written (msgspec's type info sorts them)."""
    if typing.get_origin(annotation) is Literal:
        return typing.get_args(annotation)
    for arg in typing.get_args(annotation):
        if choices := _declared_choices(arg):
            return choices
    return ()


def _describe(kind: Any, choices: tuple[Any, ...]) -> str:
    info = msgspec.inspect
    if isinstance(kind, info.BoolType):
        return "true or false"
    if choices:
        return "one of " + ", ".join(map(str, choices))
    if isinstance(kind, info.IntType):
        if kind.ge is not None and kind.le is not None:
            return f"an integer from {kind.ge} to {kind.le}"
        return "an integer" + (f" >= {kind.ge}" if kind.ge is not None else "")
    if isinstance(kind, info.FloatType) and kind.ge is not None and kind.le is not None:
        return f"a number from {kind.ge} to {kind.le}"
    if isinstance(kind, info.StrType):
        return "a non-empty string" if kind.min_length else "a string"
    return str(kind)


def _setting(field: msgspec.structs.FieldInfo) -> Setting:
    info = msgspec.inspect.type_info(field.type)
    description, extra = "", None
    if isinstance(info, msgspec.inspect.Metadata):
        description = (info.extra_json_schema or {}).get("description", "")
        extra = info.extra
        info = info.type
    optional = False
    if isinstance(info, msgspec.inspect.UnionType):
        optional = True
        (info,) = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
    choices = _declared_choices(field.type)
    expect = extra["expect"] if extra else _describe(info, choices)
    return Setting(field.name, field.type, info, optional, field.default, description, choices,
                   expect, extra["check"] if extra else None)


SETTINGS: dict[str, Setting] = {f.name: _setting(f) for f in msgspec.structs.fields(Config)}
HELP: dict[str, str] = {name: s.help for name, s in SETTINGS.items()}


# -- reading and checking values --------------------------------------------------------


_TRUE_WORDS = ("yes", "on")
_FALSE_WORDS = ("no", "off")


def _from_text(setting: Setting, text: str) -> Any:
    """What an environment variable or flag spelled, before the type check."""
    text = text.strip()
    if setting.optional and text == "":
        return None
    if setting.repeatable:
        return [part.strip() for part in text.split(",") if part.strip()]
    if isinstance(setting.kind, msgspec.inspect.BoolType):
        word = text.lower()
        return "true" if word in _TRUE_WORDS else "false" if word in _FALSE_WORDS else text
    return _fold_choice(setting, text)


def _fold_choice(setting: Setting, value: Any) -> Any:
    """Choices are matched without regard to case (`--log-level debug`)."""
    if isinstance(value, str):
        for choice in setting.choices:
            if value.lower() == str(choice).lower():
                return choice
    return value


def _convert(setting: Setting, value: Any, given: str, *, text: bool) -> Any:
    """`value` as the setting's type, checked; `given` names it in the error."""
    value = _from_text(setting, value) if text and isinstance(value, str) else _fold_choice(
        setting, value)
    try:
        result = msgspec.convert(value, setting.annotation, strict=not text)
    except msgspec.ValidationError:
        raise ConfigError(f"{given}: expected {setting.expect}{_quoted_hint(setting, value)}") from None
    if setting.check is not None and result is not None:
        try:
            fits = setting.check(result)
        except ValueError as exc:
            raise ConfigError(f"{given}: {exc}") from None
        if not fits:
            raise ConfigError(f"{given}: expected {setting.expect}")
    return result


def _quoted_hint(setting: Setting, value: Any) -> str:
    """A number or boolean written as a string in a typed source (TOML, Python)."""
    if not isinstance(value, str) or setting.choices or isinstance(
            setting.kind, msgspec.inspect.StrType):
        return ""
    try:
        msgspec.convert(_from_text(setting, value), setting.annotation, strict=False)
    except msgspec.ValidationError:
        return ""
    return ", not a quoted string"


def _toml_text(value: Any) -> str:
    return json.dumps(value, default=str)


def _unknown(key: str, where: str) -> ConfigError:
    close = difflib.get_close_matches(key.replace("-", "_"), SETTINGS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}unknown setting {key!r}{hint}")


def _read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the configuration file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    section = table.get("kcsim", table)
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: kcsim must be a table of settings")
    return section


def load(file: str | None = None, env: Mapping[str, str] | None = None, *,
         flags: Mapping[str, Any] | None = None, **overrides: Any) -> Config:
    """Build a checked Config: defaults < TOML file < KCSIM_* environment < flags < overrides.

    ``flags`` are `kcsim serve` options as argparse gave them (text, or booleans);
    ``overrides`` are typed values from Python. None means "not given".
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    given: dict[str, str] = {}

    def put(name: str, value: Any, where: str, *, text: bool) -> None:
        values[name] = _convert(SETTINGS[name], value, where, text=text)
        given[name] = where

    path = file or env.get("KCSIM_CONFIG")
    if path:
        for key, value in _read_toml(path).items():
            name = key.replace("-", "_")
            if name not in SETTINGS:
                raise _unknown(key, f"{path}: ")
            put(name, value, f"{path}: {key} = {_toml_text(value)}", text=False)
    for name, setting in SETTINGS.items() if env else ():  # embedded servers pass env={}
        raw = env.get(setting.env)
        if raw is not None:
            put(name, raw, f"{setting.env}={raw}", text=True)
    for name, value in (flags or {}).items():
        if value is not None:
            setting = SETTINGS[name]
            if isinstance(value, bool):
                where = setting.flag if value else "--no-" + setting.flag[2:]
            elif isinstance(value, list):  # a repeatable flag, as given
                where = " ".join(f"{setting.flag} {v}" for v in value)
            else:
                where = f"{setting.flag} {value}"
            put(name, value, where, text=isinstance(value, str))
    for name, value in overrides.items():
        if name not in SETTINGS:
            raise _unknown(name, "")
        if value is not None:
            put(name, value, f"{name}={value!r}", text=False)
    cfg = Config(**values)
    _check_order(cfg, given)
    _check_listeners(cfg, given)
    return cfg


def validate(cfg: Config) -> None:
    """Check a Config built in code (not through :func:`load`) like a loaded one."""
    given = {}
    for name, setting in SETTINGS.items():
        value = getattr(cfg, name)
        given[name] = f"{name}={value!r}"
        _convert(setting, value, given[name], text=False)
    _check_order(cfg, given)
    _check_listeners(cfg, given)


def _check_order(cfg: Config, given: Mapping[str, str]) -> None:
    for low, strict, high in ORDERED:
        a, b = getattr(cfg, low), getattr(cfg, high)
        if a > b or (strict and a == b):
            relation = "less than" if strict else "at most"
            raise ConfigError(f"{_named(low, cfg, given)} must be {relation} "
                              f"{_named(high, cfg, given)}")


# The shorthand of one listener, and what replaces it.
_SHORTHAND = (("listeners", ("host", "port")),
              ("advertised_listeners", ("advertised_host", "advertised_port")))


def _check_listeners(cfg: Config, given: Mapping[str, str]) -> None:
    """The listener settings must fit together: one way of naming them, every
    advertised name a listener, every listener PLAINTEXT."""
    for full, shorthand in _SHORTHAND:
        if getattr(cfg, full) is None:
            continue
        for name in shorthand:
            if getattr(cfg, name) != SETTINGS[name].default:
                raise ConfigError(
                    f"{given.get(name, name)} cannot be combined with {given.get(full, full)}: "
                    f"give the address in {SETTINGS[full].flag} ({SETTINGS[full].env}) instead")
    bound = cfg._bound_listeners()
    try:
        protocol_of = listeners_mod.protocols(bound, cfg._protocol_map())
    except ValueError as exc:
        key = ("listener_security_protocol_map" if cfg.listener_security_protocol_map is not None
               else "listeners")
        raise ConfigError(f"{_named(key, cfg, given)}: {exc}") from None
    try:
        cfg._plans(bound, protocol_of)
    except ValueError as exc:
        raise ConfigError(f"{_named('advertised_listeners', cfg, given)}: {exc}") from None
    _check_ssl(cfg, given)


def _check_ssl(cfg: Config, given: Mapping[str, str]) -> None:
    """The SSL files must be there and fit together: a key password needs a key store, a
    key store's certificate must match its key, client certificates need CAs to trust."""
    for name in ("ssl_keystore_location", "ssl_truststore_location"):
        path = getattr(cfg, name)
        if path is not None and not os.path.isfile(path):
            raise ConfigError(f"{given[name]}: no such file")
    truststore = cfg.ssl_truststore_location
    if truststore is not None:
        try:
            ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_verify_locations(truststore)
        except ssl.SSLError as exc:
            raise ConfigError(f"{given['ssl_truststore_location']}: not PEM certificates: "
                              f"{exc.reason or exc}") from None
    keystore = cfg.ssl_keystore_location
    if keystore is None:
        if cfg.ssl_key_password is not None:
            raise ConfigError(f"{SETTINGS['ssl_key_password'].flag} is given without "
                              f"{SETTINGS['ssl_keystore_location'].flag}")
        return
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(
            keystore, password=cfg.ssl_key_password)
    except ssl.SSLError as exc:
        raise ConfigError(f"{given['ssl_keystore_location']}: not a PEM certificate chain "
                          f"with its private key (or the wrong --ssl-key-password): "
                          f"{exc.reason or exc}") from None
    if cfg.ssl_client_auth != "none" and cfg.ssl_truststore_location is None:
        raise ConfigError(f"{_named('ssl_client_auth', cfg, given)} with "
                          f"{given['ssl_keystore_location']} needs "
                          f"{SETTINGS['ssl_truststore_location'].flag}: the CAs that sign "
                          "the clients' certificates")


def _named(name: str, cfg: Config, given: Mapping[str, str]) -> str:
    return given.get(name) or f"{name} (default {getattr(cfg, name)})"


def extension_keys(cfg: Config) -> dict[int, int]:
    """Wire key -> declared key of each extension API (empty when extensions are off)."""
    if not cfg.extensions:
        return {}
    return dict(zip(_api_keys(cfg.pause_api_keys), DECLARED_EXTENSION_KEYS, strict=True))

