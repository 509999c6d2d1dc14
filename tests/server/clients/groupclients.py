"""kafka-python, confluent-kafka and aiokafka behind the surface the group scenarios use.

Each client class offers `consumer()` (a group member polling in the background) and
the group admin calls the library has; capability flags say which ones exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
from typing import TYPE_CHECKING, Any, TypeVar

from .groupkit import (
    HEARTBEAT_MS,
    SESSION_MS,
    WAIT_S,
    Described,
    DescribedMember,
    MemberView,
    Offsets,
    ThreadedMember,
    error_name,
)

if TYPE_CHECKING:
    from collections.abc import Coroutine, Iterable

T = TypeVar("T")
MAX_POLL_INTERVAL_MS = 30000
_ids = itertools.count()


class GroupClient:
    """What a client library can do for groups; subclasses fill in the calls."""

    name = ""
    default_assignor = "range"  # the protocol a group of this client's default consumers selects
    lists_states = True  # ListGroups answers carry the group state and filter by it
    describes_instance_ids = True  # DescribeGroups answers carry group.instance.id
    describes_unknown_as_dead = True  # False: describing an unknown group fails GROUP_ID_NOT_FOUND
    can_list_many_offsets = False  # listConsumerGroupOffsets for several groups in one call
    can_alter_offsets = False
    can_delete_offsets = False
    can_delete_groups = False
    can_remove_members = False  # Admin removal of static members by group.instance.id
    committed_has_metadata = True  # the consumer's committed() reports commit metadata

    def close(self) -> None:
        pass


# -- kafka-python --------------------------------------------------------------------


def _kafka_python_error(error: Any) -> str | None:
    """A kafka-python error class, instance or class name as Kafka's error name."""
    import kafka.errors as Errors

    if isinstance(error, str):
        if error == "OK":
            return None
        error = getattr(Errors, error)
    return error_name(error.errno)


class KafkaPythonMember(ThreadedMember):
    def __init__(self, bootstrap: str, name: str, group: str, topic: str,
                 instance_id: str | None, session_ms: int, assignor: str | None) -> None:
        self.bootstrap, self.group, self.topic = bootstrap, group, topic
        self.instance_id, self.session_ms, self.assignor = instance_id, session_ms, assignor
        super().__init__(name)

    def _open(self) -> None:
        from kafka import KafkaConsumer
        from kafka.consumer.subscription_state import ConsumerRebalanceListener
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        from kafka.coordinator.assignors.range import RangePartitionAssignor

        member = self
        extra: dict[str, Any] = {}
        if self.assignor is not None:
            assignors = {a.name: a for a in (RangePartitionAssignor, CooperativeStickyAssignor)}
            extra["partition_assignment_strategy"] = [assignors[self.assignor]]

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                pass

            def on_partitions_assigned(self, assigned: Any) -> None:
                member.assigned_events += 1

        self.consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id=self.group,
            group_instance_id=self.instance_id, client_id=f"kcsim-kp-{self.name}",
            auto_offset_reset="earliest", enable_auto_commit=False,
            session_timeout_ms=self.session_ms, heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS, fetch_max_wait_ms=100,
            reconnect_backoff_max_ms=1000, **extra)
        self.consumer.subscribe([self.topic], listener=Listener())
        # kafka-python 3.0 joins before its first metadata for the subscription and
        # rejoins once it arrives; if a poll times out during that rejoin, the leader's
        # result is dropped and it keeps a stale assignment without heartbeats. Fresh
        # metadata before the first poll avoids that rejoin.
        assert self.topic in self.consumer.topics()

    def _poll(self) -> list[tuple[int, int, str]]:
        return [(r.partition, r.offset, r.key.decode())
                for batch in self.consumer.poll(timeout_ms=50).values() for r in batch]

    def _snapshot(self) -> tuple[list[int], str, int | None]:
        meta = self.consumer.group_metadata()
        return (sorted(tp.partition for tp in self.consumer.assignment()),
                meta.member_id, meta.generation_id)

    def _close(self) -> None:
        self.consumer.close(timeout_ms=5000)

    def commit(self, offsets: dict[int, tuple[int, str]] | None = None) -> None:
        from kafka import OffsetAndMetadata, TopicPartition

        if offsets is None:
            self.call(lambda: self.consumer.commit())
        else:
            explicit = {TopicPartition(self.topic, p): OffsetAndMetadata(o, m, -1)
                        for p, (o, m) in offsets.items()}
            self.call(lambda: self.consumer.commit(explicit))

    def committed(self, partitions: Iterable[int]) -> dict[int, tuple[int, str] | None]:
        from kafka import TopicPartition

        def fetch() -> dict[int, tuple[int, str] | None]:
            out: dict[int, tuple[int, str] | None] = {}
            for p in partitions:
                om = self.consumer.committed(TopicPartition(self.topic, p), metadata=True)
                out[p] = None if om is None else (om.offset, om.metadata)
            return out

        return self.call(fetch)


class KafkaPythonClient(GroupClient):
    name = "kafka-python"
    can_list_many_offsets = True
    can_remove_members = True
    can_alter_offsets = True
    can_delete_offsets = True
    can_delete_groups = True

    def __init__(self, bootstrap: str) -> None:
        from kafka import KafkaAdminClient

        self.bootstrap = bootstrap
        self.admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000,
                                      client_id="kcsim-kp-admin")

    def close(self) -> None:
        self.admin.close()

    def consumer(self, group: str, topic: str, name: str, instance_id: str | None = None,
                 session_ms: int = SESSION_MS, assignor: str | None = None) -> KafkaPythonMember:
        return KafkaPythonMember(self.bootstrap, name, group, topic, instance_id, session_ms,
                                 assignor)

    def list_groups(self, states: list[str] | None = None) -> dict[str, str | None]:
        return {g["group_id"]: g["group_state"] for g in self.admin.list_groups(states_filter=states)}

    def describe(self, group: str) -> Described:
        d = self.admin.describe_groups([group])[group]
        if d["error"] is not None and "GroupIdNotFound" in d["error"]:
            return Described("Dead", [])  # DescribeGroups v6+ for a group that does not exist
        assert d["error"] is None, d["error"]
        members = []
        for m in d["members"]:
            assigned = m["member_assignment"] or {"assigned_partitions": []}
            members.append(DescribedMember(
                m["member_id"], m["group_instance_id"], m["client_id"],
                [(t["topic"], p) for t in assigned["assigned_partitions"] for p in t["partitions"]]))
        return Described(d["group_state"], members, d["protocol_data"] or None)

    @staticmethod
    def _offsets(found: dict[Any, Any]) -> Offsets:
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in found.items()}

    def offsets(self, group: str) -> Offsets:
        return self._offsets(self.admin.list_group_offsets(group)[group])

    def offsets_many(self, groups: list[str]) -> dict[str, Offsets]:
        return {g: self._offsets(found)
                for g, found in self.admin.list_group_offsets(list(groups)).items()}

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> dict[int, str | None]:
        from kafka import OffsetAndMetadata, TopicPartition

        result = self.admin.alter_group_offsets(
            group, {TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
        return {tp.partition: _kafka_python_error(e) for tp, e in result.items()}

    def delete_offsets(self, group: str, topic: str, partitions: list[int]) -> dict[int, str | None]:
        from kafka import TopicPartition
        from kafka.errors import BrokerResponseError

        try:
            result = self.admin.delete_group_offsets(
                group, [TopicPartition(topic, p) for p in partitions])
        except BrokerResponseError as exc:
            return {p: _kafka_python_error(exc) for p in partitions}
        return {tp.partition: _kafka_python_error(e) for tp, e in result.items()}

    def delete_groups(self, groups: list[str]) -> dict[str, str | None]:
        return {g: _kafka_python_error(e) for g, e in self.admin.delete_groups(groups).items()}

    def remove_members(self, group: str, instance_ids: list[str]) -> dict[str, str | None]:
        from kafka.admin import MemberToRemove

        result = self.admin.remove_group_members(
            group, [MemberToRemove(group_instance_id=i) for i in instance_ids])
        return {i: _kafka_python_error(result[i]) for i in instance_ids}


# -- confluent-kafka -----------------------------------------------------------------


CONFLUENT_STATES = {"STABLE": "Stable", "EMPTY": "Empty", "DEAD": "Dead",
                    "PREPARING_REBALANCING": "PreparingRebalance",
                    "COMPLETING_REBALANCING": "CompletingRebalance", "UNKNOWN": "Unknown"}


def _confluent_state(state: Any) -> str:
    return CONFLUENT_STATES[state.name]


class _Warnings(logging.Handler):
    """Keeps librdkafka's warnings and errors of one client (not propagated to the root logger)."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.logger = logging.getLogger(f"kcsim-tests.groups.{name}.{next(_ids)}")
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.lines.append(f"{record.levelname}: {record.getMessage()}")


class ConfluentMember(ThreadedMember):
    def __init__(self, bootstrap: str, name: str, group: str, topic: str,
                 instance_id: str | None, session_ms: int, assignor: str | None) -> None:
        self.bootstrap, self.group, self.topic = bootstrap, group, topic
        self.instance_id, self.session_ms, self.assignor = instance_id, session_ms, assignor
        self.log = _Warnings(name)
        super().__init__(name)

    def _open(self) -> None:
        from confluent_kafka import Consumer

        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "group.id": self.group,
                "client.id": f"kcsim-ck-{self.name}", "auto.offset.reset": "earliest",
                "enable.auto.commit": False, "session.timeout.ms": self.session_ms,
                "heartbeat.interval.ms": HEARTBEAT_MS, "max.poll.interval.ms": MAX_POLL_INTERVAL_MS,
                "fetch.wait.max.ms": 100, "reconnect.backoff.max.ms": 1000,
                "logger": self.log.logger}
        if self.instance_id is not None:
            conf["group.instance.id"] = self.instance_id
        if self.assignor is not None:
            conf["partition.assignment.strategy"] = self.assignor
        self.consumer = Consumer(conf)

        def on_assign(consumer: Any, partitions: Any) -> None:
            self.assigned_events += 1

        self.consumer.subscribe([self.topic], on_assign=on_assign)

    def _poll(self) -> list[tuple[int, int, str]]:
        messages: list[Any] = self.consumer.consume(num_messages=500, timeout=0.05)
        return [(m.partition(), m.offset(), m.key().decode()) for m in messages if m.error() is None]

    def _snapshot(self) -> tuple[list[int], str, int | None]:
        return (sorted(tp.partition for tp in self.consumer.assignment()),
                self.consumer.memberid() or "", None)

    def _close(self) -> None:
        self.consumer.close()

    def close(self) -> None:
        super().close()
        assert not self.log.lines, f"librdkafka complained in {self.name}: {self.log.lines[:5]}"

    def commit(self, offsets: dict[int, tuple[int, str]] | None = None) -> None:
        from confluent_kafka import TopicPartition

        if offsets is None:
            self.call(lambda: self.consumer.commit(asynchronous=False))
        else:
            explicit = [TopicPartition(self.topic, p, o, m) for p, (o, m) in offsets.items()]
            self.call(lambda: self.consumer.commit(offsets=explicit, asynchronous=False))

    def committed(self, partitions: Iterable[int]) -> dict[int, tuple[int, str] | None]:
        from confluent_kafka import TopicPartition

        wanted = [TopicPartition(self.topic, p) for p in partitions]
        found = self.call(lambda: self.consumer.committed(wanted, timeout=10))
        return {tp.partition: None if tp.offset < 0 else (tp.offset, tp.metadata or "")
                for tp in found}


def _confluent_error(exc: BaseException) -> str:
    from confluent_kafka import KafkaException

    assert isinstance(exc, KafkaException), repr(exc)
    return exc.args[0].name()


class ConfluentClient(GroupClient):
    name = "confluent-kafka"
    can_alter_offsets = True
    can_delete_groups = True

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.log = _Warnings("admin")
        conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "client.id": "kcsim-ck-admin",
                                "logger": self.log.logger}
        self.admin = AdminClient(conf)

    def close(self) -> None:
        self.admin.poll(0)
        assert not self.log.lines, f"librdkafka complained in the admin client: {self.log.lines[:5]}"

    def consumer(self, group: str, topic: str, name: str, instance_id: str | None = None,
                 session_ms: int = SESSION_MS, assignor: str | None = None) -> ConfluentMember:
        return ConfluentMember(self.bootstrap, name, group, topic, instance_id, session_ms,
                               assignor)

    def list_groups(self, states: list[str] | None = None) -> dict[str, str | None]:
        from confluent_kafka import ConsumerGroupState

        by_name = {v: ConsumerGroupState[k] for k, v in CONFLUENT_STATES.items()}
        wanted = {by_name[s] for s in states} if states else None
        result = self.admin.list_consumer_groups(
            request_timeout=10, **({"states": wanted} if wanted else {})).result(timeout=WAIT_S)
        assert not result.errors, result.errors
        return {g.group_id: _confluent_state(g.state) for g in result.valid}

    def describe(self, group: str) -> Described:
        future = self.admin.describe_consumer_groups([group], request_timeout=10)[group]
        try:
            d = future.result(timeout=WAIT_S)
        except Exception as exc:
            if _confluent_error(exc) == "GROUP_ID_NOT_FOUND":
                return Described("Dead", [])  # DescribeGroups v6+ for a group that does not exist
            raise
        members = [DescribedMember(m.member_id, m.group_instance_id, m.client_id,
                                   [(tp.topic, tp.partition) for tp in m.assignment.topic_partitions])
                   for m in d.members]
        return Described(_confluent_state(d.state), members, d.partition_assignor or None)

    def offsets(self, group: str) -> Offsets:
        from confluent_kafka import ConsumerGroupTopicPartitions

        found = self.admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=10)[group].result(timeout=WAIT_S)
        for tp in found.topic_partitions:
            assert tp.error is None, tp.error
        return {(tp.topic, tp.partition): (tp.offset, tp.metadata or "")
                for tp in found.topic_partitions}

    def alter_offsets(self, group: str, topic: str, offsets: dict[int, int]) -> dict[int, str | None]:
        from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

        request = ConsumerGroupTopicPartitions(
            group, [TopicPartition(topic, p, o) for p, o in offsets.items()])
        future = self.admin.alter_consumer_group_offsets([request], request_timeout=10)[group]
        try:
            result = future.result(timeout=WAIT_S)
        except Exception as exc:
            return {p: _confluent_error(exc) for p in offsets}
        return {tp.partition: None if tp.error is None else tp.error.name()
                for tp in result.topic_partitions}

    def delete_groups(self, groups: list[str]) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for group, future in self.admin.delete_consumer_groups(groups, request_timeout=10).items():
            try:
                future.result(timeout=WAIT_S)
                out[group] = None
            except Exception as exc:
                out[group] = _confluent_error(exc)
        return out


# -- aiokafka ------------------------------------------------------------------------


class AsyncioThread:
    """An asyncio loop on a background thread; run() waits for a coroutine's result."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="aiokafka", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = WAIT_S) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


class AiokafkaMember:
    def __init__(self, runner: AsyncioThread, bootstrap: str, name: str, group: str, topic: str,
                 instance_id: str | None, session_ms: int, assignor: str | None) -> None:
        self.runner, self.name, self.topic = runner, name, topic
        self.records: list[tuple[int, int, str]] = []
        self.assigned_events = 0
        self.error: str | None = None
        runner.run(self._start(bootstrap, group, instance_id, session_ms, assignor))

    async def _start(self, bootstrap: str, group: str, instance_id: str | None,
                     session_ms: int, assignor: str | None) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka.abc import ConsumerRebalanceListener
        from aiokafka.coordinator.assignors.range import RangePartitionAssignor

        member = self

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                pass

            def on_partitions_assigned(self, assigned: Any) -> None:
                member.assigned_events += 1

        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, group_instance_id=instance_id,
            client_id=f"kcsim-aio-{self.name}", auto_offset_reset="earliest",
            enable_auto_commit=False, session_timeout_ms=session_ms,
            heartbeat_interval_ms=HEARTBEAT_MS, max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
            fetch_max_wait_ms=100, request_timeout_ms=10000,
            **({"partition_assignment_strategy": (RangePartitionAssignor,)} if assignor else {}))
        self.consumer.subscribe([self.topic], listener=Listener())
        await self.consumer.start()
        self.task = asyncio.ensure_future(self._consume())

    async def _consume(self) -> None:
        try:
            while True:
                batches = await self.consumer.getmany(timeout_ms=50)
                self.records += [(r.partition, r.offset, r.key.decode())
                                 for batch in batches.values() for r in batch]
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self.error = repr(exc)

    def view(self) -> MemberView:
        async def snapshot() -> MemberView:
            return MemberView(sorted(tp.partition for tp in self.consumer.assignment()),
                              list(self.records), self.assigned_events, "", None, self.error)

        return self.runner.run(snapshot())

    def commit(self, offsets: dict[int, tuple[int, str]] | None = None) -> None:
        from aiokafka import TopicPartition
        from aiokafka.structs import OffsetAndMetadata

        explicit = None if offsets is None else {
            TopicPartition(self.topic, p): OffsetAndMetadata(o, m) for p, (o, m) in offsets.items()}
        self.runner.run(self.consumer.commit(explicit))

    def committed(self, partitions: Iterable[int]) -> dict[int, tuple[int, str] | None]:
        from aiokafka import TopicPartition

        async def fetch() -> dict[int, tuple[int, str] | None]:
            out: dict[int, tuple[int, str] | None] = {}
            for p in partitions:
                offset = await self.consumer.committed(TopicPartition(self.topic, p))
                out[p] = None if offset is None else (offset, "")
            return out

        return self.runner.run(fetch())

    def close(self) -> None:
        async def stop() -> None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            await self.consumer.stop()

        self.runner.run(stop())
        assert self.error is None, f"member {self.name} failed: {self.error}"


class AiokafkaClient(GroupClient):
    name = "aiokafka"
    default_assignor = "roundrobin"
    committed_has_metadata = False
    lists_states = False  # ListGroups v0-v2 only
    describes_instance_ids = False  # DescribeGroups v0-v3 only

    def __init__(self, bootstrap: str) -> None:
        from aiokafka.admin import AIOKafkaAdminClient

        self.bootstrap = bootstrap
        self.runner = AsyncioThread()

        async def start() -> Any:
            admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000,
                                        client_id="kcsim-aio-admin")
            await admin.start()
            return admin

        self.admin = self.runner.run(start())

    def close(self) -> None:
        try:
            self.runner.run(self.admin.close())
        finally:
            self.runner.close()

    def consumer(self, group: str, topic: str, name: str, instance_id: str | None = None,
                 session_ms: int = SESSION_MS, assignor: str | None = None) -> AiokafkaMember:
        assert assignor in (None, "range"), "aiokafka has no cooperative assignor"
        return AiokafkaMember(self.runner, self.bootstrap, name, group, topic, instance_id,
                              session_ms, assignor)

    def list_groups(self, states: list[str] | None = None) -> dict[str, str | None]:
        assert states is None, "aiokafka lists groups with ListGroups v0-v2, without states"
        listed = self.runner.run(self.admin.list_consumer_groups())
        return {g[0]: (g[2] if len(g) > 2 else None) for g in listed}

    def describe(self, group: str) -> Described:
        from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

        [response] = self.runner.run(self.admin.describe_consumer_groups([group]))
        [entry] = response.groups
        error_code, _group_id, state, _protocol_type, protocol, members = entry[:6]
        assert error_code == 0, error_name(error_code)
        described = []
        for m in members:
            member_id, instance_id = m[0], (m[1] if len(m) == 6 else None)
            client_id, assignment = m[-4], m[-1]
            partitions = []
            if assignment:
                decoded = ConsumerProtocolMemberAssignment.decode(assignment)
                partitions = [(t, p) for t, ps in decoded.assignment for p in ps]
            described.append(DescribedMember(member_id, instance_id, client_id, partitions))
        return Described(state, described, protocol or None)

    def offsets(self, group: str) -> Offsets:
        found = self.runner.run(self.admin.list_consumer_group_offsets(group))
        return {(tp.topic, tp.partition): (om.offset, om.metadata) for tp, om in found.items()}


PYTHON_CLIENTS = {"kafka-python": KafkaPythonClient, "confluent": ConfluentClient,
                  "aiokafka": AiokafkaClient}
