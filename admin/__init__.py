"""A small Kafka admin client for consumer groups, over kcsim's own wire codec.

`AdminClient` (blocking) and `TrioAdminClient` (trio) offer the same calls; see
`kcsim.admin.client` for what each does. Works against kcsim and against
any Kafka cluster; the KIP-1249 pause calls need kcsim.
"""

from .aio import TrioAdminClient
from .calls import PauseApiKeys
from .client import AdminClient
from .errors import AdminError
from .results import (
    ClusterInfo,
    GroupDescription,
    GroupListing,
    ListOffsetsResultInfo,
    MemberDescription,
    Node,
    OffsetAndMetadata,
    OffsetSpec,
    Outcomes,
    PartitionInfo,
    ShareGroupDescription,
    ShareMemberDescription,
    SharePartitionOffset,
    StreamsGroupDescription,
    StreamsMemberDescription,
    Subtopology,
    TaskAssignment,
    TaskIds,
    TopicDescription,
    TopicPartition,
)

__all__ = [
    "AdminClient",
    "AdminError",
    "ClusterInfo",
    "GroupDescription",
    "GroupListing",
    "ListOffsetsResultInfo",
    "MemberDescription",
    "Node",
    "OffsetAndMetadata",
    "OffsetSpec",
    "Outcomes",
    "PartitionInfo",
    "PauseApiKeys",
    "ShareGroupDescription",
    "ShareMemberDescription",
    "SharePartitionOffset",
    "StreamsGroupDescription",
    "StreamsMemberDescription",
    "Subtopology",
    "TaskAssignment",
    "TaskIds",
    "TopicDescription",
    "TopicPartition",
    "TrioAdminClient",
]
