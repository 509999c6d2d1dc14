"""Kafka's names for APIs and error codes, as tests write them in fault rules and queries.

A name the controls cannot use is refused with ValueError naming the field it
was given in, so a typo in a test fails at the line that made it.
"""

from __future__ import annotations

import difflib
from typing import Any

from kcsim.protocol.errors import ErrorCode

# Every Kafka API, so that a rule on one kcsim does not serve is told apart from a typo.
KAFKA_APIS = ["Produce", "Fetch", "ListOffsets", "Metadata", "LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown", "OffsetCommit", "OffsetFetch", "FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups", "ListGroups", "SaslHandshake", "ApiVersions", "CreateTopics", "DeleteTopics", "DeleteRecords", "InitProducerId", "OffsetForLeaderEpoch", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers", "TxnOffsetCommit", "DescribeAcls", "CreateAcls", "DeleteAcls", "DescribeConfigs", "AlterConfigs", "AlterReplicaLogDirs", "DescribeLogDirs", "SaslAuthenticate", "CreatePartitions", "CreateDelegationToken", "RenewDelegationToken", "ExpireDelegationToken", "DescribeDelegationToken", "DeleteGroups", "ElectLeaders", "IncrementalAlterConfigs", "AlterPartitionReassignments", "ListPartitionReassignments", "OffsetDelete", "DescribeClientQuotas", "AlterClientQuotas", "DescribeUserScramCredentials", "AlterUserScramCredentials", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "AlterPartition", "UpdateFeatures", "Envelope", "FetchSnapshot", "DescribeCluster", "DescribeProducers", "BrokerRegistration", "BrokerHeartbeat", "UnregisterBroker", "DescribeTransactions", "ListTransactions", "AllocateProducerIds", "ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "ControllerRegistration", "GetTelemetrySubscriptions", "PushTelemetry", "AssignReplicasToDirs", "ListClientMetricsResources", "DescribeTopicPartitions", "ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge", "AddRaftVoter", "RemoveRaftVoter", "UpdateRaftVoter", "InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState", "DeleteShareGroupState", "ReadShareGroupStateSummary", "StreamsGroupHeartbeat", "StreamsGroupDescribe", "DescribeShareGroupOffsets", "AlterShareGroupOffsets", "DeleteShareGroupOffsets"]


class ApiNames:
    """The APIs one broker serves, by the names and wire keys clients use."""

    def __init__(self, served: dict[int, str]) -> None:
        self.by_key = dict(served)  # wire key -> name
        self.by_name = {name.lower(): key for key, name in served.items()}

    def name(self, key: int) -> str:
        return self.by_key.get(key, str(key))

    def key(self, api: Any, field: str = "api") -> int:
        """The wire key of a served API given by name or key; ValueError naming `field`."""
        if isinstance(api, bool) or not isinstance(api, (int, str)):
            raise ValueError(f"{field}: expected an API name or key, got {api!r}")
        if isinstance(api, int):
            if api in self.by_key:
                return api
            known = KAFKA_APIS[api] if 0 <= api < len(KAFKA_APIS) else None
            what = f"{known} ({api})" if known else f"API key {api}"
            raise ValueError(f"{field}: {what} is not served by kcsim")
        key = self.by_name.get(api.lower())
        if key is not None:
            return key
        if api.lower() in {n.lower() for n in KAFKA_APIS}:
            raise ValueError(f"{field}: the {api} API is not served by kcsim")
        close = difflib.get_close_matches(api, list(self.by_key.values()), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"{field}: unknown API {api!r}{hint}")

    def keys(self, api: Any, field: str = "api") -> tuple[int, ...]:
        """One API or a list of them, as wire keys."""
        if isinstance(api, (list, tuple)):
            if not api:
                raise ValueError(f"{field}: expected at least one API")
            return tuple(dict.fromkeys(self.key(a, field) for a in api))
        return (self.key(api, field),)


def error_code(error: Any, field: str = "error") -> int:
    """Kafka's error code for a name (NOT_COORDINATOR) or a code; ValueError naming `field`."""
    if isinstance(error, bool) or not isinstance(error, (int, str)):
        raise ValueError(f"{field}: expected a Kafka error name or code, got {error!r}")
    if isinstance(error, int):
        try:
            return int(ErrorCode(error))
        except ValueError:
            raise ValueError(f"{field}: {error} is not a Kafka error code") from None
    try:
        return int(ErrorCode[error.upper()])
    except KeyError:
        close = difflib.get_close_matches(error.upper(), ErrorCode.__members__, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"{field}: unknown Kafka error {error!r}{hint}") from None


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)
