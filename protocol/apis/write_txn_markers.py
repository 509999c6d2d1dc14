"""WriteTxnMarkers (27): the transaction coordinator's order to end a producer's
transaction in named partitions; admins send it too (`Admin.abortTransaction`)."""

from ..schema import Api, array, f, request, response, struct

WriteTxnMarkersRequest = request(
    "WriteTxnMarkersRequest", 27, "1-2", "1+",
    f("markers", array(struct(
        "WritableTxnMarker",
        f("producer_id", "int64"),
        f("producer_epoch", "int16"),
        f("transaction_result", "bool"),  # True: commit, False: abort
        f("topics", array(struct(
            "WritableTxnMarkerTopic",
            f("name", "string"),
            f("partition_indexes", array("int32")),
        ))),
        f("coordinator_epoch", "int32"),
        f("transaction_version", "int8", "2+", default=0),
    ))),
)

WriteTxnMarkersResponse = response(
    "WriteTxnMarkersResponse", 27, "1-2", "1+",
    f("markers", array(struct(
        "WritableTxnMarkerResult",
        f("producer_id", "int64"),
        f("topics", array(struct(
            "WritableTxnMarkerTopicResult",
            f("name", "string"),
            f("partitions", array(struct(
                "WritableTxnMarkerPartitionResult",
                f("partition_index", "int32"),
                f("error_code", "int16"),
            ))),
        ))),
    ))),
)

API = Api(27, "WriteTxnMarkers", WriteTxnMarkersRequest, WriteTxnMarkersResponse)
