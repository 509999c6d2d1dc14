"""KIP-1249: pause a group's partitions so their offsets can be reset while the group runs.

A paused partition is unassigned from the group and set aside by the coordinator;
these calls need a broker that serves the KIP's RPCs (kcsim does, under the keys
its ApiVersions advertises; see PauseApiKeys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcsim.protocol.apis.pause_partitions import (
    LIST_PAUSED_PARTITIONS_KEY,
    PAUSE_PARTITIONS_KEY,
    RESUME_PARTITIONS_KEY,
)
from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .coordinators import for_one_group
from .errors import AdminError
from .partitions import by_topic, partition_outcomes
from .results import Node, Outcomes, TopicPartition
from .wire import negotiate

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .calls import Call
    from .effects import Step

NEEDS_KCSIM = "this broker does not serve KIP-1249 (PausePartitions, ResumePartitions, " \
    "ListPausedPartitions)"


def supports_pause(call: Call) -> Step[bool]:
    served = yield call.served()
    return all(negotiate(served, key, 0, 0) is not None for key in call.state.pause_keys.all())


def _require(served: dict[int, tuple[int, int]], wire_key: int) -> None:
    if negotiate(served, wire_key, 0, 0) is None:
        raise AdminError(ErrorCode.UNSUPPORTED_VERSION, NEEDS_KCSIM,
                         hint="pausing needs a kcsim broker; on Kafka, stop the group's consumers "
                         "to reset its offsets")


def _change(
    call: Call, schema_key: int, wire_key: int, group: str, partitions: Iterable[TopicPartition]
) -> Step[Outcomes[TopicPartition, None]]:
    partitions = list(dict.fromkeys(partitions))
    cls = request_class(schema_key)
    name = cls.__name__.removesuffix("Request")

    def build(version: int) -> Any:
        topic_cls = getattr(cls, f"{name}RequestTopic")
        partition_cls = getattr(cls, f"{name}RequestPartition")
        return cls(group_id=group, topics=[
            topic_cls(name=t, partitions=[partition_cls(partition_index=p) for p in ps])
            for t, ps in by_topic(partitions).items()])

    def attempt(node: Node) -> Step[Outcomes[TopicPartition, None]]:
        _require((yield call.served(node)), wire_key)
        reply = yield call.send(node, schema_key, build, (0, 0), wire_key=wire_key)
        if reply.body.error_code:
            raise AdminError(reply.body.error_code, reply.body.error_message)
        return partition_outcomes(reply.body.responses, partitions)

    if not partitions:
        return Outcomes({})
    return (yield from for_one_group(call, group, attempt))


def pause_partitions(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[Outcomes[TopicPartition, None]]:
    return (yield from _change(call, PAUSE_PARTITIONS_KEY, call.state.pause_keys.pause,
                               group, partitions))


def resume_partitions(
    call: Call, group: str, partitions: Iterable[TopicPartition]
) -> Step[Outcomes[TopicPartition, None]]:
    return (yield from _change(call, RESUME_PARTITIONS_KEY, call.state.pause_keys.resume,
                               group, partitions))


def list_paused_partitions(call: Call, group: str) -> Step[dict[TopicPartition, int | None]]:
    """The group's paused partitions, each with the offset the broker reports for it (None: -1)."""
    wire_key = call.state.pause_keys.list
    cls = request_class(LIST_PAUSED_PARTITIONS_KEY)

    def attempt(node: Node) -> Step[dict[TopicPartition, int | None]]:
        _require((yield call.served(node)), wire_key)
        reply = yield call.send(node, LIST_PAUSED_PARTITIONS_KEY, lambda v: cls(group_id=group),
                                (0, 0), wire_key=wire_key)
        body = reply.body
        if body.error_code:
            raise AdminError(body.error_code, body.error_message)
        return dict(sorted(
            (TopicPartition(t.name, p.partition_index), p.offset if p.offset >= 0 else None)
            for t in body.topics for p in t.partitions))

    return (yield from for_one_group(call, group, attempt))
