"""InitProducerId (22): how idempotent producers obtain a producer id and epoch."""

from ..schema import Api, f, request, response

InitProducerIdRequest = request(
    "InitProducerIdRequest", 22, "0-6", "2+",
    f("transactional_id", "string", "0+", nullable="0+"),
    f("transaction_timeout_ms", "int32", "0+"),
    f("producer_id", "int64", "3+", default=-1),
    f("producer_epoch", "int16", "3+", default=-1),
    f("enable2_pc", "bool", "6+", default=False),
    f("keep_prepared_txn", "bool", "6+", default=False),
)

InitProducerIdResponse = response(
    "InitProducerIdResponse", 22, "0-6", "2+",
    f("throttle_time_ms", "int32", "0+"),
    f("error_code", "int16", "0+"),
    f("producer_id", "int64", "0+", default=-1),
    f("producer_epoch", "int16", "0+"),
    f("ongoing_txn_producer_id", "int64", "6+", default=-1),
    f("ongoing_txn_producer_epoch", "int16", "6+", default=-1),
)

API = Api(22, "InitProducerId", InitProducerIdRequest, InitProducerIdResponse)
