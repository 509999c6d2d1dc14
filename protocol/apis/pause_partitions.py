"""KIP-1249 PausePartitions / ResumePartitions / ListPausedPartitions (kcsim extension keys).

Declared cleanly from the proposal's drafts: flexible from v0 like every recent
group RPC; every field exists in v0 (the drafts gate ThrottleTimeMs and Offset on
versions a v0-only message never has); ThrottleTimeMs first and a top-level
ErrorCode/ErrorMessage in all three responses (ListPausedPartitions needs one for
GROUP_ID_NOT_FOUND); topic ids beside names in every response; struct names that
do not collide with message names. The wire keys default to 1000-1002 and are
configurable in the server.
"""

from ..schema import Api, Message, array, f, request, response, struct

PAUSE_PARTITIONS_KEY = 1000
RESUME_PARTITIONS_KEY = 1001
LIST_PAUSED_PARTITIONS_KEY = 1002


def _change_request(name: str, key: int) -> Message:
    return request(
        f"{name}Request", key, "0", "0+",
        f("group_id", "string"),
        f("topics", array(struct(
            f"{name}RequestTopic",
            f("name", "string"),
            f("partitions", array(struct(
                f"{name}RequestPartition",
                f("partition_index", "int32"),
            ))),
        ))),
    )


def _change_response(name: str, key: int) -> Message:
    return response(
        f"{name}Response", key, "0", "0+",
        f("throttle_time_ms", "int32"),
        f("error_code", "int16"),
        f("error_message", "string", nullable="0+", default=None),
        f("responses", array(struct(
            f"{name}ResponseTopic",
            f("topic_name", "string"),
            f("topic_id", "uuid"),
            f("partitions", array(struct(
                f"{name}ResponsePartition",
                f("partition_index", "int32"),
                f("error_code", "int16"),
                f("error_message", "string", nullable="0+", default=None),
            ))),
        ))),
    )


PausePartitionsRequest = _change_request("PausePartitions", PAUSE_PARTITIONS_KEY)
PausePartitionsResponse = _change_response("PausePartitions", PAUSE_PARTITIONS_KEY)
ResumePartitionsRequest = _change_request("ResumePartitions", RESUME_PARTITIONS_KEY)
ResumePartitionsResponse = _change_response("ResumePartitions", RESUME_PARTITIONS_KEY)

ListPausedPartitionsRequest = request(
    "ListPausedPartitionsRequest", LIST_PAUSED_PARTITIONS_KEY, "0", "0+",
    f("group_id", "string"),
)

ListPausedPartitionsResponse = response(
    "ListPausedPartitionsResponse", LIST_PAUSED_PARTITIONS_KEY, "0", "0+",
    f("throttle_time_ms", "int32"),
    f("error_code", "int16"),
    f("error_message", "string", nullable="0+", default=None),
    f("topics", array(struct(
        "ListPausedPartitionsTopic",
        f("name", "string"),
        f("topic_id", "uuid"),
        f("partitions", array(struct(
            "ListPausedPartitionsPartition",
            f("partition_index", "int32"),
            f("offset", "int64", default=-1),
        ))),
    ))),
)

APIS = (
    Api(PAUSE_PARTITIONS_KEY, "PausePartitions", PausePartitionsRequest, PausePartitionsResponse),
    Api(RESUME_PARTITIONS_KEY, "ResumePartitions", ResumePartitionsRequest, ResumePartitionsResponse),
    Api(LIST_PAUSED_PARTITIONS_KEY, "ListPausedPartitions", ListPausedPartitionsRequest,
        ListPausedPartitionsResponse),
)
