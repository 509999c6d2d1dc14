"""Kafka-shaped answers for a request that fails as a whole, for every API kcsim serves.

As Kafka's `AbstractRequest.getErrorResponse`: the error goes where the API
and version carry one (top level, per topic, per partition, per key). One table,
`ERROR_ANSWERS`, by API key: the broker's own APIs are built here; the group APIs'
builders are the group coordinator's (`coordinator/failures.py`, which answers its own
contained failures with them), entered into the same table. An API with nowhere to
put an error raises NoErrorAnswer, and the caller closes the connection instead.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from kcsim.coordinator import SUPPORTED_VERSIONS
from kcsim.coordinator.failures import error_response as group_error_response
from kcsim.protocol.codecs import response_class

if TYPE_CHECKING:
    from collections.abc import Callable


class NoErrorAnswer(Exception):
    """The API has no field an error could be reported in."""


def error_answer(api_key: int, version: int, request: Any, error: int) -> Any:
    """The response that reports `error` for every part of `request`."""
    build = ERROR_ANSWERS.get(api_key)
    if build is None:
        raise NoErrorAnswer(f"API key {api_key} has no error answer")
    return build(version, request, error)


def _produce(version: int, request: Any, error: int) -> Any:
    R = response_class(0)
    return R(responses=[
        R.TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=[
            R.PartitionProduceResponse(index=p.index, error_code=error, base_offset=-1)
            for p in t.partition_data])
        for t in request.topic_data])


def _fetch(version: int, request: Any, error: int) -> Any:
    R = response_class(1)
    return R(error_code=error, responses=[
        R.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
            R.PartitionData(partition_index=p.partition, error_code=error, high_watermark=-1)
            for p in t.partitions])
        for t in request.topics])


def _list_offsets(version: int, request: Any, error: int) -> Any:
    R = response_class(2)
    return R(topics=[
        R.ListOffsetsTopicResponse(name=t.name, partitions=[
            R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=error)
            for p in t.partitions])
        for t in request.topics])


def _metadata(version: int, request: Any, error: int) -> Any:
    R = response_class(3)
    topics = [R.MetadataResponseTopic(error_code=error, name=t.name, topic_id=t.topic_id,
                                      partitions=[])
              for t in request.topics or ()]
    return R(brokers=[], topics=topics, error_code=error)


def _find_coordinator(version: int, request: Any, error: int) -> Any:
    R = response_class(10)
    if version < 4:
        return R(error_code=error, node_id=-1, host="", port=-1)
    return R(coordinators=[R.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error)
                           for k in request.coordinator_keys])


def _create_topics(version: int, request: Any, error: int) -> Any:
    R = response_class(19)
    return R(topics=[R.CreatableTopicResult(name=t.name, error_code=error, num_partitions=-1,
                                            replication_factor=-1)
                     for t in request.topics])


def _delete_topics(version: int, request: Any, error: int) -> Any:
    R = response_class(20)
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


def _describe_configs(version: int, request: Any, error: int) -> Any:
    R = response_class(32)
    return R(results=[R.DescribeConfigsResult(error_code=error, resource_type=r.resource_type,
                                              resource_name=r.resource_name, configs=[])
                      for r in request.resources])


def _alter_configs(api_key: int) -> Callable[[int, Any, int], Any]:
    def build(version: int, request: Any, error: int) -> Any:
        R = response_class(api_key)
        return R(responses=[R.AlterConfigsResourceResponse(
            error_code=error, resource_type=r.resource_type, resource_name=r.resource_name)
            for r in request.resources])
    return build


def _create_partitions(version: int, request: Any, error: int) -> Any:
    R = response_class(37)
    return R(results=[R.CreatePartitionsTopicResult(name=t.name, error_code=error)
                      for t in request.topics])


def _add_partitions_to_txn(version: int, request: Any, error: int) -> Any:
    R = response_class(24)

    def topics(wanted: list[Any]) -> list[Any]:
        return [R.AddPartitionsToTxnTopicResult(name=t.name, results_by_partition=[
            R.AddPartitionsToTxnPartitionResult(partition_index=p, partition_error_code=error)
            for p in t.partitions]) for t in wanted]

    if version >= 4:
        return R(error_code=error, results_by_transaction=[])
    return R(results_by_topic_v3_and_below=topics(request.v3_and_below_topics))


def _describe_producers(version: int, request: Any, error: int) -> Any:
    R = response_class(61)
    return R(topics=[R.TopicResponse(name=t.name, partitions=[
        R.PartitionResponse(partition_index=p, error_code=error, active_producers=[])
        for p in t.partition_indexes]) for t in request.topics])


def _describe_transactions(version: int, request: Any, error: int) -> Any:
    R = response_class(65)
    return R(transaction_states=[
        R.TransactionState(error_code=error, transactional_id=t, transaction_state="",
                           transaction_timeout_ms=0, transaction_start_time_ms=0,
                           producer_id=0, producer_epoch=0, topics=[])
        for t in request.transactional_ids])


def _list_transactions(version: int, request: Any, error: int) -> Any:
    return response_class(66)(error_code=error, unknown_state_filters=[], transaction_states=[])


def _top_level(api_key: int) -> Callable[[int, Any, int], Any]:
    def build(version: int, request: Any, error: int) -> Any:
        return response_class(api_key)(error_code=error)
    return build


def _group(api_key: int) -> Callable[[int, Any, int], Any]:
    return functools.partial(group_error_response, api_key)


ERROR_ANSWERS: dict[int, Callable[[int, Any, int], Any]] = {
    **{key: _group(key) for key in SUPPORTED_VERSIONS},
    0: _produce,
    1: _fetch,
    2: _list_offsets,
    3: _metadata,
    10: _find_coordinator,
    18: _top_level(18),
    19: _create_topics,
    20: _delete_topics,
    22: _top_level(22),
    24: _add_partitions_to_txn,
    25: _top_level(25),
    26: _top_level(26),
    32: _describe_configs,
    33: _alter_configs(33),
    37: _create_partitions,
    44: _alter_configs(44),
    60: _top_level(60),
    61: _describe_producers,
    65: _describe_transactions,
    66: _list_transactions,
}
