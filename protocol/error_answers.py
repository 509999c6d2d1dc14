"""Kafka's answer to a request that fails as a whole, for every API kcsim serves.

As Kafka's `AbstractRequest.getErrorResponse`, a protocol matter: given the API key,
version, decoded request and an error code, the response carries the error at every
level the version has room for it (top level, per topic, per partition, per group,
per key). One table, `ERROR_ANSWERS`, by API key, used by both its callers: the group
coordinator answers a handler that raised (UNKNOWN_SERVER_ERROR) or a failed group
(COORDINATOR_NOT_AVAILABLE) with it, and the server's request layer a handler that
raised or a fault rule's error. An API with nowhere to put an error raises
NoErrorAnswer, and the server closes the connection instead.

Where the error goes is the version's business: OffsetFetch puts it in every partition
before v2, at the top level from v2 and per group from v8; OffsetCommit,
TxnOffsetCommit, Produce and ListOffsets repeat it per partition; DeleteGroups,
DescribeGroups and ConsumerGroupDescribe per group (DeleteGroups each once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from .messages.acls import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsResponse,
)
from .messages.alter_configs import AlterConfigsResponse, IncrementalAlterConfigsResponse
from .messages.api_versions import ApiVersionsResponse
from .messages.cluster import DescribeClusterResponse, DescribeConfigsResponse
from .messages.consumer_group import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)
from .messages.delete_groups import DeleteGroupsResponse
from .messages.delete_records import DeleteRecordsResponse
from .messages.describe_groups import DescribeGroupsResponse
from .messages.describe_log_dirs import DescribeLogDirsResponse
from .messages.fetch import FetchResponse
from .messages.find_coordinator import FindCoordinatorResponse
from .messages.heartbeat import HeartbeatResponse
from .messages.init_producer_id import InitProducerIdResponse
from .messages.join_group import JoinGroupResponse
from .messages.leave_group import LeaveGroupResponse
from .messages.list_groups import ListGroupsResponse
from .messages.list_offsets import ListOffsetsResponse
from .messages.metadata import MetadataResponse
from .messages.offset_commit import OffsetCommitResponse
from .messages.offset_delete import OffsetDeleteResponse
from .messages.offset_fetch import OffsetFetchResponse
from .messages.offset_for_leader_epoch import OffsetForLeaderEpochResponse
from .messages.pause_partitions import (
    ListPausedPartitionsResponse,
    PausePartitionsResponse,
    ResumePartitionsResponse,
)
from .messages.produce import ProduceResponse
from .messages.sasl import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from .messages.share_group import (
    ShareAcknowledgeResponse,
    ShareFetchResponse,
    ShareGroupDescribeResponse,
    ShareGroupHeartbeatResponse,
)
from .messages.share_group_offsets import (
    AlterShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsResponse,
)
from .messages.streams_group import (
    StreamsGroupDescribeResponse,
    StreamsGroupHeartbeatResponse,
)
from .messages.sync_group import SyncGroupResponse
from .messages.topics_admin import (
    CreatePartitionsResponse,
    CreateTopicsResponse,
    DeleteTopicsResponse,
)
from .messages.transactions import (
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnResponse,
    DescribeProducersResponse,
    DescribeTransactionsResponse,
    EndTxnResponse,
    ListTransactionsResponse,
    TxnOffsetCommitResponse,
)
from .messages.write_txn_markers import WriteTxnMarkersResponse

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable, Iterable, Sequence

    from msgspec import Struct

    from .messages.alter_configs import AlterConfigsRequest, IncrementalAlterConfigsRequest
    from .messages.cluster import DescribeConfigsRequest
    from .messages.consumer_group import ConsumerGroupDescribeRequest
    from .messages.delete_groups import DeleteGroupsRequest
    from .messages.delete_records import DeleteRecordsRequest
    from .messages.describe_groups import DescribeGroupsRequest
    from .messages.fetch import FetchRequest
    from .messages.find_coordinator import FindCoordinatorRequest
    from .messages.join_group import JoinGroupRequest
    from .messages.list_offsets import ListOffsetsRequest
    from .messages.metadata import MetadataRequest
    from .messages.offset_commit import OffsetCommitRequest
    from .messages.offset_fetch import OffsetFetchRequest
    from .messages.offset_for_leader_epoch import OffsetForLeaderEpochRequest
    from .messages.produce import ProduceRequest
    from .messages.share_group import ShareGroupDescribeRequest
    from .messages.share_group_offsets import DescribeShareGroupOffsetsRequest
    from .messages.streams_group import StreamsGroupDescribeRequest
    from .messages.topics_admin import (
        CreatePartitionsRequest,
        CreateTopicsRequest,
        DeleteTopicsRequest,
    )
    from .messages.transactions import (
        AddPartitionsToTxnRequest,
        DescribeProducersRequest,
        DescribeTransactionsRequest,
        TxnOffsetCommitRequest,
    )
    from .messages.write_txn_markers import WriteTxnMarkersRequest

    Builder = Callable[[int, Struct, int], Struct]

_Request = TypeVar("_Request")
_Answer = TypeVar("_Answer")


class NoErrorAnswer(Exception):
    """The API has no field an error could be reported in."""


def error_answer(api_key: int, version: int, request: Struct, error: int) -> Struct:
    """The response that reports `error` for every part of `request`."""
    build = ERROR_ANSWERS.get(api_key)
    if build is None:
        raise NoErrorAnswer(f"API key {api_key} has no error answer")
    return build(version, request, int(error))


def _init_producer_id(version: int, request: object, error: int) -> Struct:
    """No producer id and no epoch (-1 both), as Kafka answers every refused InitProducerId."""
    return InitProducerIdResponse(error_code=error, producer_id=-1, producer_epoch=-1)


def _entry(build: Callable[[int, _Request, int], Struct]) -> Builder:
    """A builder as the table holds it, taking any request: the one promise mypy cannot
    check is that the entry of an API key is only given requests of that API's class."""
    return cast("Builder", build)


def _top_level(response: Callable[..., Struct]) -> Builder:
    """The error at the top level, the only place the API has for it."""
    def build(version: int, request: object, error: int) -> Struct:
        return response(error_code=error)
    return build


class _Partition(Protocol):
    @property
    def partition_index(self) -> int: ...


class _Topic(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> Sequence[_Partition]: ...


def _each_partition(
    topics: Iterable[_Topic], topic: Callable[..., _Answer], partition: Callable[..., Struct],
    error: int,
) -> list[_Answer]:
    """Every partition of every topic answered `error`, the topics named as the request
    names them (ListOffsets, TxnOffsetCommit)."""
    return [topic(name=t.name, partitions=[
        partition(partition_index=p.partition_index, error_code=error) for p in t.partitions])
        for t in topics]


# -- the broker's APIs -----------------------------------------------------------------


def _produce(version: int, request: ProduceRequest, error: int) -> ProduceResponse:
    R = ProduceResponse
    return R(responses=[
        R.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
            R.PartitionProduceResponse(index=p.index, error_code=error, base_offset=-1)
            for p in t.partition_data])
        for t in request.topic_data])


def _fetch(version: int, request: FetchRequest, error: int) -> FetchResponse:
    R = FetchResponse
    return R(error_code=error, responses=[
        R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
            R.PartitionData(partition_index=p.partition, error_code=error, high_watermark=-1)
            for p in t.partitions])
        for t in request.topics])


def _list_offsets(version: int, request: ListOffsetsRequest, error: int) -> ListOffsetsResponse:
    R = ListOffsetsResponse
    return R(topics=_each_partition(request.topics, R.ListOffsetsTopicResponse,
                                    R.ListOffsetsPartitionResponse, error))


def _metadata(version: int, request: MetadataRequest, error: int) -> MetadataResponse:
    R = MetadataResponse
    topics = [R.MetadataResponseTopic(error_code=error, name=t.name, topic_id=t.topic_id,
                                      partitions=[])
              for t in request.topics or ()]
    return R(brokers=[], topics=topics, error_code=error)


def _find_coordinator(
    version: int, request: FindCoordinatorRequest, error: int
) -> FindCoordinatorResponse:
    R = FindCoordinatorResponse
    if version < 4:
        return R(error_code=error, node_id=-1, host="", port=-1)
    return R(coordinators=[R.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error)
                           for k in request.coordinator_keys])


def _create_topics(version: int, request: CreateTopicsRequest, error: int) -> CreateTopicsResponse:
    R = CreateTopicsResponse
    return R(topics=[R.CreatableTopicResult(name=t.name, error_code=error, num_partitions=-1,
                                            replication_factor=-1)
                     for t in request.topics])


def _delete_topics(version: int, request: DeleteTopicsRequest, error: int) -> DeleteTopicsResponse:
    R = DeleteTopicsResponse
    wanted: list[tuple[str | None, uuid.UUID | None]]
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = []
    for name, topic_id in wanted:
        result = R.DeletableTopicResult(name=name, error_code=error)
        if topic_id is not None:
            result.topic_id = topic_id
        results.append(result)
    return R(responses=results)


def _add_partitions_to_txn(
    version: int, request: AddPartitionsToTxnRequest, error: int
) -> AddPartitionsToTxnResponse:
    R = AddPartitionsToTxnResponse
    if version >= 4:
        return R(error_code=error, results_by_transaction=[])
    return R(results_by_topic_v3_and_below=[
        R.AddPartitionsToTxnTopicResult(name=t.name, results_by_partition=[
            R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=error)
            for p in t.partitions])
        for t in request.v3_and_below_topics])


def _describe_configs(
    version: int, request: DescribeConfigsRequest, error: int
) -> DescribeConfigsResponse:
    R = DescribeConfigsResponse
    return R(results=[R.DescribeConfigsResult(error_code=error, resource_type=r.resource_type,
                                              resource_name=r.resource_name, configs=[])
                      for r in request.resources])


def _create_partitions(
    version: int, request: CreatePartitionsRequest, error: int
) -> CreatePartitionsResponse:
    R = CreatePartitionsResponse
    return R(results=[R.CreatePartitionsTopicResult(name=t.name, error_code=error)
                      for t in request.topics])


def _describe_producers(
    version: int, request: DescribeProducersRequest, error: int
) -> DescribeProducersResponse:
    R = DescribeProducersResponse
    return R(topics=[R.TopicResponse(name=t.name, partitions=[
        R.PartitionResponse(partition_index=p, error_code=error, active_producers=[])
        for p in t.partition_indexes]) for t in request.topics])


def _describe_transactions(
    version: int, request: DescribeTransactionsRequest, error: int
) -> DescribeTransactionsResponse:
    R = DescribeTransactionsResponse
    return R(transaction_states=[
        R.TransactionState(error_code=error, transactional_id=t, transaction_state="",
                           transaction_timeout_ms=0, transaction_start_time_ms=0,
                           producer_id=0, producer_epoch=0, topics=[])
        for t in request.transactional_ids])


def _list_transactions(version: int, request: object, error: int) -> ListTransactionsResponse:
    return ListTransactionsResponse(error_code=error, unknown_state_filters=[],
                                    transaction_states=[])


# -- the group coordinator's APIs ------------------------------------------------------


def _offset_commit(version: int, request: OffsetCommitRequest, error: int) -> OffsetCommitResponse:
    R = OffsetCommitResponse
    topics = []
    for t in request.topics:
        parts = [
            R.OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=error)
            for p in t.partitions
        ]
        if version >= 10:
            topics.append(R.OffsetCommitResponseTopic(topic_id=t.topic_id, partitions=parts))
        else:
            topics.append(R.OffsetCommitResponseTopic(name=t.name, partitions=parts))
    return R(topics=topics)


def _offset_fetch(version: int, request: OffsetFetchRequest, error: int) -> OffsetFetchResponse:
    R = OffsetFetchResponse
    if version >= 8:
        return R(groups=[R.OffsetFetchResponseGroup(group_id=g.group_id, topics=[],
                                                    error_code=error)
                         for g in request.groups])
    if version >= 2:
        return R(topics=[], error_code=error)
    # Before v2 there is no top-level error: every requested partition carries it.
    return R(topics=[
        R.OffsetFetchResponseTopic(name=t.name, partitions=[
            R.OffsetFetchResponsePartition(partition_index=p, committed_offset=-1,
                                           committed_leader_epoch=-1, metadata="",
                                           error_code=error)
            for p in t.partition_indexes])
        for t in request.topics or []])


def _join_group(version: int, request: JoinGroupRequest, error: int) -> JoinGroupResponse:
    # No member, no generation; the protocol name is "" before v7 and null from v7.
    return JoinGroupResponse(error_code=error, protocol_name="" if version < 7 else None)


def _leave_group(version: int, request: object, error: int) -> LeaveGroupResponse:
    return LeaveGroupResponse(error_code=error)


def _sync_group(version: int, request: object, error: int) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=error, protocol_type=None, protocol_name=None,
                             assignment=b"")


def _describe_groups(
    version: int, request: DescribeGroupsRequest, error: int
) -> DescribeGroupsResponse:
    R = DescribeGroupsResponse
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error) for g in request.groups])


def _list_groups(version: int, request: object, error: int) -> ListGroupsResponse:
    return ListGroupsResponse(error_code=error, groups=[])


def _txn_offset_commit(
    version: int, request: TxnOffsetCommitRequest, error: int
) -> TxnOffsetCommitResponse:
    R = TxnOffsetCommitResponse
    topics = _each_partition(request.topics, R.TxnOffsetCommitResponseTopic,
                             R.TxnOffsetCommitResponsePartition, error)
    for topic, asked in zip(topics, request.topics, strict=True):
        topic.topic_id = asked.topic_id  # v6 names topics by id (KIP-1319)
    return R(topics=topics)


def _delete_groups(version: int, request: DeleteGroupsRequest, error: int) -> DeleteGroupsResponse:
    R = DeleteGroupsResponse
    return R(results=[R.DeletableGroupResult(group_id=g, error_code=error)
                      for g in dict.fromkeys(request.groups_names)])


def _offset_delete(version: int, request: object, error: int) -> OffsetDeleteResponse:
    return OffsetDeleteResponse(error_code=error, topics=[])


def _consumer_group_describe(
    version: int, request: ConsumerGroupDescribeRequest, error: int
) -> ConsumerGroupDescribeResponse:
    R = ConsumerGroupDescribeResponse
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error, group_state="",
                                      assignor_name="")
                     for g in request.group_ids])


def _describe_share_group_offsets(
    version: int, request: DescribeShareGroupOffsetsRequest, error: int
) -> DescribeShareGroupOffsetsResponse:
    R = DescribeShareGroupOffsetsResponse
    return R(groups=[R.DescribeShareGroupOffsetsResponseGroup(group_id=g.group_id, topics=[],
                                                              error_code=error)
                     for g in request.groups])


def _streams_group_describe(
    version: int, request: StreamsGroupDescribeRequest, error: int
) -> StreamsGroupDescribeResponse:
    R = StreamsGroupDescribeResponse
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error, group_state="")
                     for g in request.group_ids])


def _share_group_describe(
    version: int, request: ShareGroupDescribeRequest, error: int
) -> ShareGroupDescribeResponse:
    R = ShareGroupDescribeResponse
    return R(groups=[R.DescribedGroup(group_id=g, error_code=error, group_state="",
                                      assignor_name="")
                     for g in request.group_ids])


def _pause(version: int, request: object, error: int) -> PausePartitionsResponse:
    return PausePartitionsResponse(error_code=error, responses=[])


def _resume(version: int, request: object, error: int) -> ResumePartitionsResponse:
    return ResumePartitionsResponse(error_code=error, responses=[])


def _list_paused(version: int, request: object, error: int) -> ListPausedPartitionsResponse:
    return ListPausedPartitionsResponse(error_code=error, topics=[])


def _alter_configs(
    version: int, request: AlterConfigsRequest, error: int
) -> AlterConfigsResponse:
    R = AlterConfigsResponse
    return R(responses=[R.AlterConfigsResourceResponse(
        error_code=error, resource_type=r.resource_type, resource_name=r.resource_name)
        for r in request.resources])


def _incremental_alter_configs(
    version: int, request: IncrementalAlterConfigsRequest, error: int
) -> IncrementalAlterConfigsResponse:
    R = IncrementalAlterConfigsResponse
    return R(responses=[R.AlterConfigsResourceResponse(
        error_code=error, resource_type=r.resource_type, resource_name=r.resource_name)
        for r in request.resources])


def _delete_records(
    version: int, request: DeleteRecordsRequest, error: int
) -> DeleteRecordsResponse:
    R = DeleteRecordsResponse
    return R(topics=[R.DeleteRecordsTopicResult(name=t.name, partitions=[
        R.DeleteRecordsPartitionResult(partition_index=p.partition_index, low_watermark=-1,
                                       error_code=error) for p in t.partitions])
        for t in request.topics])


def _offset_for_leader_epoch(
    version: int, request: OffsetForLeaderEpochRequest, error: int
) -> OffsetForLeaderEpochResponse:
    R = OffsetForLeaderEpochResponse
    return R(topics=[R.OffsetForLeaderTopicResult(topic=t.topic, partitions=[
        R.EpochEndOffset(error_code=error, partition=p.partition) for p in t.partitions])
        for t in request.topics])


def _write_txn_markers(
    version: int, request: WriteTxnMarkersRequest, error: int
) -> WriteTxnMarkersResponse:
    R = WriteTxnMarkersResponse
    return R(markers=[R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
        R.WritableTxnMarkerTopicResult(name=t.name, partitions=[
            R.WritableTxnMarkerPartitionResult(partition_index=i, error_code=error)
            for i in t.partition_indexes]) for t in m.topics])
        for m in request.markers])


def _describe_log_dirs(version: int, request: object, error: int) -> DescribeLogDirsResponse:
    # Where the version has no top-level error code (before v3), the answer is empty.
    return DescribeLogDirsResponse(error_code=error, results=[])


def _describe_scram(
    version: int, request: DescribeUserScramCredentialsRequest, error: int
) -> DescribeUserScramCredentialsResponse:
    # As Kafka's: one result per user named, without its name.
    R = DescribeUserScramCredentialsResponse
    return R(error_code=error, results=[R.DescribeUserScramCredentialsResult(error_code=error)
                                        for _ in request.users or ()])


def _alter_scram(
    version: int, request: AlterUserScramCredentialsRequest, error: int
) -> AlterUserScramCredentialsResponse:
    R = AlterUserScramCredentialsResponse
    users = {c.name for c in request.deletions} | {c.name for c in request.upsertions}
    return R(results=[R.AlterUserScramCredentialsResult(user=u, error_code=error)
                      for u in sorted(users)])


def _describe_acls(version: int, request: object, error: int) -> DescribeAclsResponse:
    return DescribeAclsResponse(error_code=error, error_message=None, resources=[])


def _create_acls(version: int, request: CreateAclsRequest, error: int) -> CreateAclsResponse:
    R = CreateAclsResponse
    return R(results=[R.AclCreationResult(error_code=error, error_message=None)
                      for _ in request.creations])


def _delete_acls(version: int, request: DeleteAclsRequest, error: int) -> DeleteAclsResponse:
    R = DeleteAclsResponse
    return R(filter_results=[R.DeleteAclsFilterResult(error_code=error, error_message=None,
                                                      matching_acls=[])
                             for _ in request.filters])


ERROR_ANSWERS: dict[int, Builder] = {
    0: _entry(_produce),
    1: _entry(_fetch),
    2: _entry(_list_offsets),
    3: _entry(_metadata),
    8: _entry(_offset_commit),
    9: _entry(_offset_fetch),
    10: _entry(_find_coordinator),
    11: _entry(_join_group),
    12: _top_level(HeartbeatResponse),
    13: _entry(_leave_group),
    14: _entry(_sync_group),
    15: _entry(_describe_groups),
    16: _entry(_list_groups),
    17: _top_level(SaslHandshakeResponse),
    18: _top_level(ApiVersionsResponse),
    19: _entry(_create_topics),
    20: _entry(_delete_topics),
    21: _entry(_delete_records),
    22: _entry(_init_producer_id),
    23: _entry(_offset_for_leader_epoch),
    24: _entry(_add_partitions_to_txn),
    25: _top_level(AddOffsetsToTxnResponse),
    26: _top_level(EndTxnResponse),
    27: _entry(_write_txn_markers),
    28: _entry(_txn_offset_commit),
    29: _entry(_describe_acls),
    30: _entry(_create_acls),
    31: _entry(_delete_acls),
    32: _entry(_describe_configs),
    33: _entry(_alter_configs),
    35: _entry(_describe_log_dirs),
    36: _top_level(SaslAuthenticateResponse),
    37: _entry(_create_partitions),
    42: _entry(_delete_groups),
    44: _entry(_incremental_alter_configs),
    47: _entry(_offset_delete),
    50: _entry(_describe_scram),
    51: _entry(_alter_scram),
    60: _top_level(DescribeClusterResponse),
    61: _entry(_describe_producers),
    65: _entry(_describe_transactions),
    66: _entry(_list_transactions),
    68: _top_level(ConsumerGroupHeartbeatResponse),
    69: _entry(_consumer_group_describe),
    76: _top_level(ShareGroupHeartbeatResponse),
    77: _entry(_share_group_describe),
    78: _top_level(ShareFetchResponse),
    79: _top_level(ShareAcknowledgeResponse),
    88: _top_level(StreamsGroupHeartbeatResponse),
    89: _entry(_streams_group_describe),
    90: _entry(_describe_share_group_offsets),
    91: _top_level(AlterShareGroupOffsetsResponse),
    92: _top_level(DeleteShareGroupOffsetsResponse),
    1000: _entry(_pause),
    1001: _entry(_resume),
    1002: _entry(_list_paused),
}
