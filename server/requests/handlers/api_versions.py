"""ApiVersions (18): the table of served APIs, straight from the route table, and the
feature levels kcsim implements (features.py).

v3+ report features: those supported (the range kcsim implements) and those finalized
(the levels in force, pinned by --feature); before v4 Kafka leaves out a supported
feature whose lowest level is 0 (KAFKA-17011), and so does kcsim. v5 (KIP-1242) lets a
client name the cluster and node it means to reach: one named without the other is
INVALID_REQUEST, another cluster or node REBOOTSTRAP_REQUIRED, both with nothing else in
the answer, as Kafka 4.4 answers.
"""

from __future__ import annotations

from typing import Any

from kcsim.protocol.codecs import response_class
from kcsim.protocol.errors import ErrorCode

from ...features import FINALIZED_EPOCH, SUPPORTED
from ..routes import served, serves

ApiVersionsResponse = response_class(18)
_KEEPS_MIN_0 = 4  # from v4, supported features with lowest level 0 are reported
_NAMES_TARGET = 5  # from v5, the client may name the cluster and node it expects


def _constant(broker: Any) -> int:
    return 0


@serves(18, cache_state=_constant)
def api_versions(broker: Any, ctx: Any, request: Any) -> Any:
    """The answer never changes while a server runs, so answers are cached."""
    config = broker.config
    version = ctx.api_version
    if version >= _NAMES_TARGET:
        node = ctx.listener.node  # its own node's, with several brokers
        error = _target_error(request, config.cluster_id, config.node_id if node < 0 else node)
        if error:
            return ApiVersionsResponse(error_code=error, api_keys=[], throttle_time_ms=0)
    table = served(config).advertised(ApiVersionsResponse)
    answer = ApiVersionsResponse(error_code=0, api_keys=table, throttle_time_ms=0)
    if version >= 3:
        answer.supported_features = [
            ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=lo, max_version=hi)
            for name, (lo, hi) in SUPPORTED.items() if lo > 0 or version >= _KEEPS_MIN_0]
        answer.finalized_features_epoch = FINALIZED_EPOCH
        answer.finalized_features = [
            ApiVersionsResponse.FinalizedFeatureKey(
                name=name, max_version_level=level, min_version_level=level)
            for name, level in config.feature_levels.items()]
    return answer


def _target_error(request: Any, cluster_id: str, node_id: int) -> int:
    """KIP-1242: the error for a client that expects another cluster or node (0: none)."""
    names_cluster, names_node = request.cluster_id is not None, request.node_id != -1
    if names_cluster != names_node:
        return int(ErrorCode.INVALID_REQUEST)
    if names_cluster and (request.cluster_id != cluster_id or request.node_id != node_id):
        return int(ErrorCode.REBOOTSTRAP_REQUIRED)
    return 0
