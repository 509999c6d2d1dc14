"""The transaction APIs: how transactional producers add partitions and consumed offsets to
a transaction and end it (24-26, 28), and how admins look at transactions and producers
(61, 65, 66)."""

from ..schema import Api, StructType, array, f, request, response, struct


def _txn_topic(name: str) -> StructType:
    return struct(name, f("name", "string"), f("partitions", array("int32")))


_AddTopic = _txn_topic("AddPartitionsToTxnTopic")

AddPartitionsToTxnRequest = request(
    "AddPartitionsToTxnRequest", 24, "0-5", "3+",
    f("transactions", array(struct(
        "AddPartitionsToTxnTransaction",
        f("transactional_id", "string", "4+"),
        f("producer_id", "int64", "4+"),
        f("producer_epoch", "int16", "4+"),
        f("verify_only", "bool", "4+", default=False),
        f("topics", array(_AddTopic), "4+"),
    )), "4+"),
    f("v3_and_below_transactional_id", "string", "0-3"),
    f("v3_and_below_producer_id", "int64", "0-3"),
    f("v3_and_below_producer_epoch", "int16", "0-3"),
    f("v3_and_below_topics", array(_AddTopic), "0-3"),
)

_PartitionResult = struct(
    "AddPartitionsToTxnPartitionResult",
    f("partition_index", "int32"),
    f("partition_error_code", "int16"),
)
_TopicResult = struct(
    "AddPartitionsToTxnTopicResult",
    f("name", "string"),
    f("results_by_partition", array(_PartitionResult)),
)

AddPartitionsToTxnResponse = response(
    "AddPartitionsToTxnResponse", 24, "0-5", "3+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16", "4+", default=0),
    f("results_by_transaction", array(struct(
        "AddPartitionsToTxnResult",
        f("transactional_id", "string", "4+"),
        f("topic_results", array(_TopicResult), "4+"),
    )), "4+"),
    f("results_by_topic_v3_and_below", array(_TopicResult), "0-3"),
)

AddOffsetsToTxnRequest = request(
    "AddOffsetsToTxnRequest", 25, "0-4", "3+",
    f("transactional_id", "string"),
    f("producer_id", "int64"),
    f("producer_epoch", "int16"),
    f("group_id", "string"),
)

AddOffsetsToTxnResponse = response(
    "AddOffsetsToTxnResponse", 25, "0-4", "3+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
)

EndTxnRequest = request(
    "EndTxnRequest", 26, "0-5", "3+",
    f("transactional_id", "string"),
    f("producer_id", "int64"),
    f("producer_epoch", "int16"),
    f("committed", "bool"),
)

EndTxnResponse = response(
    "EndTxnResponse", 26, "0-5", "3+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("producer_id", "int64", "5+", default=-1),
    f("producer_epoch", "int16", "5+", default=-1),
)

TxnOffsetCommitRequest = request(
    "TxnOffsetCommitRequest", 28, "0-6", "3+",
    f("transactional_id", "string"),
    f("group_id", "string"),
    f("producer_id", "int64"),
    f("producer_epoch", "int16"),
    f("generation_id_or_member_epoch", "int32", "3+", default=-1),
    f("member_id", "string", "3+", default=""),
    f("group_instance_id", "string", "3+", nullable="3+", default=None),
    f("topics", array(struct(
        "TxnOffsetCommitRequestTopic",
        f("name", "string", "0-5"),
        f("topic_id", "uuid", "6+"),  # KIP-1319: by id only
        f("partitions", array(struct(
            "TxnOffsetCommitRequestPartition",
            f("partition_index", "int32"),
            f("committed_offset", "int64"),
            f("committed_leader_epoch", "int32", "2+", default=-1),
            f("committed_metadata", "string", nullable="0+"),
        ))),
    ))),
)

TxnOffsetCommitResponse = response(
    "TxnOffsetCommitResponse", 28, "0-6", "3+",
    f("throttle_time_ms", "int32"),
    f("topics", array(struct(
        "TxnOffsetCommitResponseTopic",
        f("name", "string", "0-5"),
        f("topic_id", "uuid", "6+"),
        f("partitions", array(struct(
            "TxnOffsetCommitResponsePartition",
            f("partition_index", "int32"),
            f("error_code", "int16"),
        ))),
    ))),
)

DescribeProducersRequest = request(
    "DescribeProducersRequest", 61, "0", "0+",
    f("topics", array(struct(
        "TopicRequest",
        f("name", "string"),
        f("partition_indexes", array("int32")),
    ))),
)

DescribeProducersResponse = response(
    "DescribeProducersResponse", 61, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("topics", array(struct(
        "TopicResponse",
        f("name", "string"),
        f("partitions", array(struct(
            "PartitionResponse",
            f("partition_index", "int32"),
            f("error_code", "int16"),
            f("error_message", "string", nullable="0+", default=None),
            f("active_producers", array(struct(
                "ProducerState",
                f("producer_id", "int64"),
                f("producer_epoch", "int32"),
                f("last_sequence", "int32", default=-1),
                f("last_timestamp", "int64", default=-1),
                f("coordinator_epoch", "int32"),
                f("current_txn_start_offset", "int64", default=-1),
            ))),
        ))),
    ))),
)

DescribeTransactionsRequest = request(
    "DescribeTransactionsRequest", 65, "0", "0+",
    f("transactional_ids", array("string")),
)

DescribeTransactionsResponse = response(
    "DescribeTransactionsResponse", 65, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("transaction_states", array(struct(
        "TransactionState",
        f("error_code", "int16"),
        f("transactional_id", "string"),
        f("transaction_state", "string"),
        f("transaction_timeout_ms", "int32"),
        f("transaction_start_time_ms", "int64"),
        f("producer_id", "int64"),
        f("producer_epoch", "int16"),
        f("topics", array(struct("TopicData", f("topic", "string"),
                                 f("partitions", array("int32"))))),
    ))),
)

ListTransactionsRequest = request(
    "ListTransactionsRequest", 66, "0-2", "0+",
    f("state_filters", array("string")),
    f("producer_id_filters", array("int64")),
    f("duration_filter", "int64", "1+", default=-1),
    f("transactional_id_pattern", "string", "2+", nullable="2+", default=None),
)

ListTransactionsResponse = response(
    "ListTransactionsResponse", 66, "0-2", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("unknown_state_filters", array("string")),
    f("transaction_states", array(struct(
        "TransactionState",
        f("transactional_id", "string"),
        f("producer_id", "int64"),
        f("transaction_state", "string"),
    ))),
)

APIS = (
    Api(24, "AddPartitionsToTxn", AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    Api(25, "AddOffsetsToTxn", AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    Api(26, "EndTxn", EndTxnRequest, EndTxnResponse),
    Api(28, "TxnOffsetCommit", TxnOffsetCommitRequest, TxnOffsetCommitResponse),
    Api(61, "DescribeProducers", DescribeProducersRequest, DescribeProducersResponse),
    Api(65, "DescribeTransactions", DescribeTransactionsRequest, DescribeTransactionsResponse),
    Api(66, "ListTransactions", ListTransactionsRequest, ListTransactionsResponse),
)
