"""Where kcsim answers differently from Apache Kafka on purpose (or not yet fixed), and why.

This list is the one source: the differential tests accept exactly these
differences, and docs/kafka-differences.md is generated from it
(`python -m tests.oracle.differences > docs/kafka-differences.md`; a test checks
the document is current).

An entry matches a difference when the scenario, API name and field path match
its patterns (`*` any run of characters, `?` one) and the version lies in its range.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

BY_DESIGN = "by design"
KAFKA_ONLY = "Kafka-only feature"
NOT_YET_FIXED = "not yet fixed"


class _Absent:
    """Where one broker's answer has no such field or list entry at all."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


@dataclass(frozen=True)
class Allowed:
    key: str
    api: str
    path: str
    status: str
    reason: str
    scenario: str = "*"
    versions: tuple[int, int] = (0, 32767)
    kcsim: object = "*"
    kafka: object = "*"

    def matches(self, scenario: str, api: str, version: int, path: str,
                kcsim: object, kafka: object) -> bool:
        return (_glob(self.scenario, scenario) and _glob(self.api, api)
                and self.versions[0] <= version <= self.versions[1]
                and _glob(self.path, path)
                and _value(self.kcsim, kcsim) and _value(self.kafka, kafka))


def _glob(pattern: str, text: str) -> bool:
    """`*` any run of characters, `?` one; everything else (brackets too) literal."""
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.fullmatch(regex, text) is not None


def _value(expected: object, actual: object) -> bool:
    return expected == "*" or expected == actual or (expected == "<absent>" and actual is ABSENT)


ALLOWED: tuple[Allowed, ...] = (
    Allowed(
        "streams-topology-crash", "StreamsGroupHeartbeat", "error_code", BY_DESIGN,
        "A joining member's topology with two subtopologies of one id, a copartition group "
        "naming a topic its subtopology does not read, or a repartition topic of a negative "
        "partition count: Kafka 4.4's coordinator fails on it with an unexpected exception "
        "(UNKNOWN_SERVER_ERROR); kcsim refuses it as an invalid topology "
        "(STREAMS_INVALID_TOPOLOGY), as Kafka refuses the topologies it checks.",
        scenario="sg_errors", kcsim=130, kafka=-1),
    Allowed(
        "streams-topology-crash-message", "StreamsGroupHeartbeat", "error_message", BY_DESIGN,
        "The same topologies (see streams-topology-crash): Kafka's unexpected exception "
        "carries no message; kcsim says what is wrong with the topology.",
        scenario="sg_errors", kcsim="<text>", kafka=None),
    Allowed(
        "share-assignment-once-initialized", "ShareGroupHeartbeat",
        "assignment.topic_partitions[*]", BY_DESIGN,
        "The heartbeat that joins a share group, or that subscribes to another topic: Kafka "
        "4.4 assigns a topic's partitions only once its share coordinator has initialized "
        "their state, in the background, so that answer leaves them out (a later heartbeat "
        "brings them, at a higher epoch); kcsim makes a share partition's state at its first "
        "ShareFetch and assigns the partitions in the heartbeat that subscribes.",
        scenario="sh_heartbeats", kafka="<absent>"),
    Allowed(
        "share-unknown-topic-id-crash", "Share*", "error_code", BY_DESIGN,
        "A ShareFetch or ShareAcknowledge naming a topic id the broker does not know: Kafka "
        "4.4 with an authorizer configured (as the oracle's broker is) fails with an "
        "unexpected exception (a NullPointerException in AuthHelper.filterByAuthorized: "
        "UNKNOWN_SERVER_ERROR for the whole request); without one it answers the partition "
        "UNKNOWN_TOPIC_ID, as kcsim does.", scenario="sh_*", kcsim=0, kafka=-1),
    Allowed(
        "share-unknown-topic-id-crash-partitions", "Share*", "responses[<topic#*>]", BY_DESIGN,
        "The same requests (see share-unknown-topic-id-crash): Kafka's failed answer lists "
        "no partitions; kcsim's answers the unknown topic's partition UNKNOWN_TOPIC_ID.",
        scenario="sh_*", kafka="<absent>"),
    Allowed(
        "share-unknown-topic-id-crash-lock", "Share*", "acquisition_lock_timeout_ms", BY_DESIGN,
        "The same requests (see share-unknown-topic-id-crash): Kafka's failed answer carries "
        "no lock duration (0); kcsim's answer, a success, the group's "
        "share.record.lock.duration.ms.", scenario="sh_*", kafka=0),
    Allowed(
        "extension-apis", "ApiVersions", "api_keys[100?]", KAFKA_ONLY,
        "kcsim's KIP-1249 extension APIs (PausePartitions, ResumePartitions, "
        "ListPausedPartitions; keys 1000-1002 by default, `--no-extensions` turns them off) "
        "do not exist in Kafka.", kafka="<absent>"),
    Allowed(
        "old-versions-kept", "ApiVersions", "api_keys[*].min_version", BY_DESIGN,
        "kcsim still serves the old versions Kafka 4.0 removed (KIP-896: OffsetCommit v0-1, "
        "OffsetFetch v0, ListOffsets v0, CreateTopics v0-1, DeleteTopics v0, DescribeConfigs "
        "v0), so older clients keep working against it. Kafka 4.4 still advertises Produce "
        "v0-2 (for librdkafka's sake) but rejects them; kcsim advertises Produce from v3."),
    Allowed(
        "topic-configs", "CreateTopics", "topics[*].configs[*]", BY_DESIGN,
        "CreateTopics v5+ lists the topic's configs: kcsim the eight it models "
        "(cleanup.policy, compression.type, max.message.bytes, message.timestamp.type, "
        "min.insync.replicas, retention.bytes, retention.ms, segment.bytes), Kafka all "
        "of its ~37 topic configs.", kcsim="<absent>"),
    Allowed(
        "min-insync-source", "CreateTopics", "topics[*].configs[min.insync.replicas].config_source",
        BY_DESIGN,
        "Kafka 4.x writes min.insync.replicas as a cluster-wide dynamic default when the "
        "storage is formatted (source 3, DYNAMIC_DEFAULT_BROKER_CONFIG); kcsim has no such "
        "layer and reports Kafka's built-in default (source 5).", kcsim=5, kafka=3),
    Allowed(
        "fetch-out-of-range-offsets", "Fetch", "responses[*].partitions[*].*", BY_DESIGN,
        "A partition answered OFFSET_OUT_OF_RANGE (a fetch below the log start offset or past "
        "the high watermark): kcsim still tells its high watermark, last stable offset and "
        "log start offset, where Kafka 4.4 sends -1 for each; clients reset through "
        "ListOffsets either way, and a reader learns where the log starts without asking.",
        scenario="delete_records_cases", kafka=-1),
    Allowed(
        "group-configs-unused", "DescribeConfigs", "results[*].configs[*]", KAFKA_ONLY,
        "A group's configs are the consumer group's consumer.session.timeout.ms, "
        "consumer.heartbeat.interval.ms and consumer.assignment.interval.ms and the streams "
        "group's streams.session.timeout.ms, streams.heartbeat.interval.ms, "
        "streams.num.standby.replicas, streams.initial.rebalance.delay.ms and "
        "streams.assignment.interval.ms (with Kafka's internal streams.num.warmup.replicas, "
        "streams.acceptable.recovery.lag and streams.task.offset.interval.ms, which can be "
        "set but are not described), and the share group's share.session.timeout.ms, "
        "share.heartbeat.interval.ms, share.record.lock.duration.ms, "
        "share.delivery.count.limit, share.auto.offset.reset and share.isolation.level, "
        "which kcsim's coordinator uses. Kafka 4.4 also lists "
        "(and lets IncrementalAlterConfigs set) share.assignment.interval.ms, "
        "share.assignor.offload.enable, share.partition.max.record.locks, "
        "share.renew.acknowledge.enable and the "
        "errors.deadletterqueue.* configs, the streams group's "
        "streams.assignor.name and streams.rack.aware.assignment.tags (kcsim has one "
        "assignor and no rack-aware placement), and the assignor offload switches (which "
        "Kafka 4.4's coordinator declares but does not act on); kcsim leaves them out "
        "of DescribeConfigs and refuses them as unknown (INVALID_CONFIG, \"Unknown group "
        "config name\").", scenario="group_configs_listed", kcsim="<absent>"),
    Allowed(
        "config-documentation", "DescribeConfigs", "results[*].configs[*].documentation",
        BY_DESIGN,
        "DescribeConfigs with include_documentation gives kcsim's own one-line description "
        "of each config it models (server/state/config_docs.py: what the config means, and "
        "where kcsim only keeps the value, that it has no effect here); Kafka gives its own, "
        "longer documentation string. The texts differ; which configs have one does not."),
)


def allowed(scenario: str, api: str, version: int, path: str,
            kcsim: object, kafka: object) -> Allowed | None:
    for entry in ALLOWED:
        if entry.matches(scenario, api, version, path, kcsim, kafka):
            return entry
    return None


# What the comparison leaves out or compares loosely (tests/oracle/harness.py does it).
NORMALISED: tuple[tuple[str, str], ...] = (
    ("kafka-consumer-groups output", "runs of blanks made one (column widths), member ids, "
     "client hosts and the broker's address replaced by placeholders; listings keep only the "
     "scenario's groups, and listings and reset plans are sorted (Kafka prints them in hash "
     "order)"),
    ("kafka-delete-records, kafka-transactions and kafka-log-dirs output (tests/oracle/"
     "test_admin_tools.py)", "as kafka-consumer-groups', and: producer ids named by the "
     "transactional id that holds them (each broker hands out its own); wall-clock times and "
     "durations replaced; partition lines and transaction listings sorted (Kafka answers in "
     "hash order); the log directory's path replaced and a partition's size compared only "
     "as empty or not (Kafka counts its segment files, kcsim the batches it keeps)"),
    ("`throttle_time_ms`", "dropped: quota bookkeeping, not behaviour"),
    ("member ids (`member_id`, `leader`)", "random: replaced by `<client id prefix>-<member#n>`, "
     "numbered in order of appearance, so \"the leader is me\" and \"the same member as "
     "before\" are still compared"),
    ("`cluster_id`, `host`, `port`", "each broker's own: replaced by placeholders"),
    ("`topic_id`", "random: replaced by the topic's name where the run saw it in Metadata or "
     "CreateTopics, else numbered in order of appearance; the zero id stays"),
    ("ListOffsets `timestamp`", "wall clock: anything but -1 becomes `<time>`"),
    ("`error_message`", "free text in Kafka: only null, empty and non-empty are told apart"),
    ("KIP-848 `member_epoch`, `group_epoch`, `assignment_epoch`",
     "compared by order and equality per group (`e#n`), not by value (see below); "
     "0, -1 and -2 stay"),
    ("`subscribed_topic_names`, `partitions`", "compared as sets: Kafka keeps subscriptions "
     "in hash order"),
    ("arrays of structs", "compared as sets keyed by their identifying field (API key, "
     "group id, topic name, partition, member): no client reads meaning into their order"),
    ("ApiVersions", "only the APIs kcsim declares are compared, and only the features it "
     "implements (Kafka 4.4 also reports kraft.version and "
     "eligible.leader.replicas.version); `finalized_features_epoch` (Kafka's metadata "
     "offset) only as known (>= 0) or not"),
    ("ListGroups", "only the scenario's own groups are compared (the Kafka broker is shared "
     "by the whole test session)"),
)

# Differences that are not answers to one request: behaviour over time, clients.
NOTES: tuple[tuple[str, str], ...] = (
    ("KIP-848 target assignments at most once per assignment interval",
     "As Kafka 4.3+, kcsim computes a consumer group's target assignment at most once per "
     "`group.consumer.assignment.interval.ms` (`--consumer-group-assignment-interval-ms`, "
     "default 1 s, within `group.consumer.min/max.assignment.interval.ms`) or the group's "
     "own `consumer.assignment.interval.ms`: a member that joins sooner after the last "
     "target joins at that target's epoch with no partitions, the group shows `Assigning`, "
     "and the first heartbeat once the interval has passed computes the new target (no "
     "timer does; when the last target was computed is kept in its record, so a restart "
     "keeps the schedule). Kafka 4.4 declares `group.consumer.assignor.offload.enable` "
     "(computing targets on a background thread) but its coordinator does not act on it; "
     "kcsim has no such setting. The oracle runs both brokers at interval 0 (a target in "
     "the heartbeat that changes the group), and compares a group whose own interval is "
     "15 s (tests/oracle/test_consumer_groups.py)."),
    ("KIP-848 commits at a member's previous epoch (KIP-1251 not implemented)",
     "Kafka 4.4 keeps, for each partition a member holds, the epoch at which it was "
     "assigned (`AssignmentEpochs` in the current assignment record), and accepts an "
     "OffsetCommit at an older member epoch for partitions held since then. kcsim accepts "
     "only the member's current epoch, as Kafka did before KIP-1251: a commit that races the "
     "heartbeat bumping the member's epoch (a pause, a member joining) is answered "
     "STALE_MEMBER_EPOCH, which librdkafka reports to the application."),
    ("KIP-848 regular expressions are resolved at once",
     "Kafka resolves a member's `subscribed_topic_regex` in the background and bumps the "
     "group epoch when the resolution lands; kcsim resolves it in the heartbeat. The "
     "oracle compares the group once Kafka has assigned the matching topics."),
    ("KIP-848 epoch values",
     "Kafka 4.4 bumps a new group's epoch twice on its first subscription to named "
     "topics (the member joins, then the group's first metadata refresh), and once more "
     "when its coordinator learns of a topic created after the group subscribed to it. "
     "kcsim bumps once. Clients only echo epochs, so the oracle compares epochs by order "
     "and equality, not by value."),
    ("KIP-1071 streams groups: what kcsim does not do yet",
     "kcsim's streams groups place active tasks with a sticky assignor and standby tasks "
     "(`--streams-group-num-standby-replicas`, or the group's streams.num.standby.replicas) "
     "on another process, and no warm-up tasks (neither does Kafka 4.4: its coordinator "
     "refines the target with warm-ups in name only); they have no "
     "topology description (KIP-1331: `topology_description_required` is false, as on a "
     "Kafka without its plugin) and no interactive-query endpoint map "
     "(`partitions_by_user_endpoint` is null). As Kafka 4.4, a new group's first target "
     "waits `--streams-group-initial-rebalance-delay-ms` (3 s) and later ones "
     "`--streams-group-assignment-interval-ms` (1 s), answered `ASSIGNMENT_DELAYED`; the "
     "oracle runs both brokers with 0. A group's internal topics are created by the broker "
     "in the heartbeat that finds them missing, where Kafka's coordinator asks its "
     "controller and they land a little later: the oracle compares the first join and "
     "waits (uncompared) for the tasks. A new group starts at epoch 1, as in Kafka 4.4, "
     "so its first member joins at 2; when a source topic was created just before the "
     "join, Kafka's coordinator may not know it yet and bumps the epoch once more when it "
     "learns of it, so epochs are compared by order, as for KIP-848 groups."),
    ("KIP-932 share groups: epochs and written start offsets",
     "Kafka 4.4 initializes a share group's partitions when a member is first assigned them "
     "and bumps the group epoch for it (a first member sits at epoch 3); kcsim makes a "
     "share partition's state at the first ShareFetch and bumps once (epoch 1). Kafka's "
     "share partition writes each change with the start offset from before it, and gives "
     "a leaving member's records back in the background, so DescribeShareGroupOffsets "
     "may show a start offset that trails the records already acknowledged (the lag is "
     "the same); kcsim writes the start offset with the change. The kafka-share-groups "
     "oracle (tests/oracle/test_share_group_command.py) masks the epochs and the start "
     "offset of a group with records in flight, and waits for Kafka's background write. "
     "tests/oracle/test_share_groups.py compares ShareGroupHeartbeat and ShareGroupDescribe "
     "with epoch values masked (0 and -1 kept), after waiting, uncompared, until Kafka has "
     "given the member its partitions; a first ShareFetch waits (MaxWaitMs) for Kafka's "
     "share partition to initialize. ShareFetch's records are compared as the batches "
     "returned (base offset, record count): kcsim keeps a batch's partition leader epoch "
     "as the producer sent it (-1) where Kafka stamps its own (0), as in Fetch."),
    ("KIP-932 share groups: a target assignment in every heartbeat that changes the group",
     "kcsim computes a share group's target assignment in the heartbeat that changes the "
     "group; Kafka 4.4 at most once per `group.share.assignment.interval.ms` (1 s by "
     "default), so there members that join within it are assigned together, a little "
     "later, and a group can take another path to its target (the simple assignor keeps "
     "what members hold). The oracle runs Kafka at interval 0 and compares the assignments "
     "of groups joined one member at a time (tests/oracle/test_share_groups.py)."),
    ("kafka-python 3.0.12 stalls after a metadata-triggered rejoin: a client bug",
     "Create a topic with CreateTopics, subscribe one kafka-python 3.0.12 consumer and "
     "poll with short time-outs: now and then (3 of 28 runs against Kafka 4.4.0, 2 of "
     "16 against kcsim) the consumer never gets its partitions. Its log shows the same "
     "thing on both brokers: it joins before its first metadata for the topic (empty "
     "assignment), rejoins when the metadata arrives, receives its SyncGroup answer "
     "(Kafka answered in 83 ms, kcsim in about 2 ms) and then sends no heartbeat and no "
     "OffsetFetch until it is closed 45 s later. Kafka's metadata for the new topic was "
     "complete in the first answer (no LEADER_NOT_AVAILABLE, no empty partition list), so "
     "there is no Kafka behaviour to adopt: it is kafka-python's bug. `python -m "
     "tests.oracle.kafka_python_stall <bootstrap> <count>` reproduces it against any "
     "broker; the client tests avoid it by fetching the topic's metadata "
     "(`consumer.topics()`) before the first poll."),
)


@dataclass(frozen=True)
class AllowedOutput:
    """A command whose output differs between the two sides of tests/oracle/test_group_command.py."""

    tool: str
    command: str
    status: str
    reason: str


TOOL = "kcsim consumer-groups"
TOOL_OUTPUT: list[AllowedOutput] = [
    AllowedOutput(
        TOOL, "describe-unknown", BY_DESIGN,
        "`--describe` of an unknown group: Kafka's tool prints the Java exception and its stack "
        "trace and exits 0; kcsim's prints `Error: Consumer group 'G' does not exist.` on "
        "stderr and exits 3 (docs/consumer-groups.md, exit codes)."),
    AllowedOutput(
        TOOL, "reset-active", BY_DESIGN,
        "`--reset-offsets --execute` on an active group: both refuse with the same first "
        "sentence; Kafka's tool prints it and an empty table on stdout and exits 0, kcsim's "
        "prints it on stderr with the partitions that are not paused and a hint to pause them "
        "(KIP-1249), and exits 4."),
    AllowedOutput(
        TOOL, "delete-*", BY_DESIGN,
        "`--delete` that fails (a non-empty or unknown group): Kafka's tool prints `Error: "
        "Deletion of some consumer groups failed:` and the Java exception on stdout and exits 0; "
        "kcsim's prints the Kafka error name and message and a hint on stderr and exits 1 "
        "(NON_EMPTY_GROUP) or 3 (GROUP_ID_NOT_FOUND)."),
    AllowedOutput(
        TOOL, "reset-execute", BY_DESIGN,
        "`--shift-by` past the log end: both set the end offset; kcsim's tool also says so on "
        "stderr (`New offset (11) is higher than latest offset ...`), where Kafka's tool only "
        "logs it at WARN through log4j."),
]


def allowed_output(tool: str, command: str) -> AllowedOutput | None:
    for entry in TOOL_OUTPUT:
        if _glob(entry.tool, tool) and _glob(entry.command, command):
            return entry
    return None


def document() -> str:
    """docs/kafka-differences.md, generated from ALLOWED and NOTES."""
    from .kafka import DEFAULT_KAFKA_VERSION

    lines = [
        "# Where kcsim differs from Apache Kafka",
        "",
        "<!-- Generated from tests/oracle/differences.py by "
        "`python -m tests.oracle.differences`; do not edit by hand. -->",
        "",
        f"The oracle tier (`tests/oracle`, marker `oracle`) runs every scenario against kcsim "
        f"and a real Apache Kafka {DEFAULT_KAFKA_VERSION} broker (KRaft, fetched with Maven) and "
        "compares the answers field by field. These are the differences it accepts; any "
        "other difference fails the suite.",
        "",
        "| API | versions | field | status | why |",
        "|---|---|---|---|---|",
    ]
    for e in ALLOWED:
        lo, hi = e.versions
        versions = "all" if (lo, hi) == (0, 32767) else (f"{lo}" if lo == hi else f"{lo}-{hi}")
        where = e.path if e.scenario == "*" else f"{e.path} (scenario {e.scenario})"
        lines.append(f"| {e.api} | {versions} | `{where}` | {e.status} | {e.reason} |")
    lines += ["", "## kafka-consumer-groups", "",
              "tests/oracle/test_group_command.py runs Kafka's own `kafka-consumer-groups` "
              "(ConsumerGroupCommand from kafka-tools) against kcsim and against Kafka on the "
              "same groups: every command's output is the same. It also runs `kcsim "
              "consumer-groups` for the same commands and compares its output with Kafka's "
              "tool's; these are the commands whose output differs:", "",
              "| command | status | why |", "|---|---|---|"]
    lines += [f"| {e.command} | {e.status} | {e.reason} |" for e in TOOL_OUTPUT]
    lines += ["", "## What is normalised before comparing", ""]
    lines += [f"- {what}: {why}." for what, why in NORMALISED]
    if NOTES:
        lines += ["", "## Other observations", ""]
        for title, text in NOTES:
            lines += [f"### {title}", "", text, ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(document())
