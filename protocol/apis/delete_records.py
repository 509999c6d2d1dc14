"""DeleteRecords (21): how admins move a partition's log start offset forward."""

from ..schema import Api, array, f, request, response, struct

DeleteRecordsRequest = request(
    "DeleteRecordsRequest", 21, "0-2", "2+",
    f("topics", array(struct(
        "DeleteRecordsTopic",
        f("name", "string"),
        f("partitions", array(struct(
            "DeleteRecordsPartition",
            f("partition_index", "int32"),
            f("offset", "int64"),  # -1: the high watermark
        ))),
    ))),
    f("timeout_ms", "int32"),
)

DeleteRecordsResponse = response(
    "DeleteRecordsResponse", 21, "0-2", "2+",
    f("throttle_time_ms", "int32"),
    f("topics", array(struct(
        "DeleteRecordsTopicResult",
        f("name", "string"),
        f("partitions", array(struct(
            "DeleteRecordsPartitionResult",
            f("partition_index", "int32"),
            f("low_watermark", "int64"),
            f("error_code", "int16"),
        ))),
    ))),
)

API = Api(21, "DeleteRecords", DeleteRecordsRequest, DeleteRecordsResponse)
