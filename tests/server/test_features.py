"""ApiVersions' features, KIP-1242's cluster check and DeleteGroups v3, over real sockets.

A fresh kcsim finalizes the highest level of each feature it implements (and reports no
other), `--feature NAME=LEVEL` pins a lower one, and level 0 leaves a feature out of the
finalized list, as Kafka 4.4 does (tests/oracle compares the answers with Kafka's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode
from kcsim.server import config
from tests.server.durability.wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable

API_VERSIONS, DELETE_GROUPS, CONSUMER_GROUP_HEARTBEAT = 18, 42, 68
E = ErrorCode


def connect(server: Any) -> Wire:
    """A raw connection to an in-process or subprocess broker."""
    host, port = server.bootstrap.rsplit(":", 1)
    return Wire(host, int(port))


def api_versions(server: Any, version: int, **target: Any) -> Any:
    with connect(server) as wire:
        return wire.call(API_VERSIONS, version, request_class(API_VERSIONS)(
            client_software_name="kcsim-tests", client_software_version="1", **target))


def supported(answer: Any) -> dict[str, tuple[int, int]]:
    return {f.name: (f.min_version, f.max_version) for f in answer.supported_features}


def finalized(answer: Any) -> dict[str, tuple[int, int]]:
    return {f.name: (f.min_version_level, f.max_version_level) for f in answer.finalized_features}


# -- the features answer --------------------------------------------------------------


@pytest.mark.parametrize("version", [4, 5])
def test_a_fresh_broker_finalizes_what_it_implements(kcsim: Any, version: int) -> None:
    answer = api_versions(kcsim, version)
    assert answer.error_code == 0
    assert supported(answer) == {"metadata.version": (7, 33), "group.version": (0, 1),
                                 "transaction.version": (0, 2), "streams.version": (0, 1),
                                 "share.version": (0, 2)}
    assert finalized(answer) == {"metadata.version": (33, 33), "group.version": (1, 1),
                                 "transaction.version": (2, 2), "streams.version": (1, 1),
                                 "share.version": (2, 2)}
    assert answer.finalized_features_epoch >= 0  # clients ignore features of epoch -1
    assert not answer.zk_migration_ready


def test_v3_leaves_out_supported_features_whose_lowest_level_is_0(kcsim: Any) -> None:
    """KAFKA-17011: a v3 client cannot read a lowest level of 0; Kafka leaves them out."""
    answer = api_versions(kcsim, 3)
    assert supported(answer) == {"metadata.version": (7, 33)}
    assert set(finalized(answer)) == {"metadata.version", "group.version",
                                      "transaction.version", "streams.version",
                                      "share.version"}


def test_before_v3_there_are_no_features(kcsim: Any) -> None:
    answer = api_versions(kcsim, 2)
    assert answer.error_code == 0 and answer.api_keys
    assert answer.supported_features == [] and answer.finalized_features == []


@pytest.mark.kcsim(feature=["transaction.version=0", "group.version=0", "streams.version=0",
                            "share.version=0"])
def test_a_feature_pinned_to_0_is_not_finalized_but_still_supported(kcsim: Any) -> None:
    answer = api_versions(kcsim, 4)
    assert finalized(answer) == {"metadata.version": (33, 33)}
    assert supported(answer)["transaction.version"] == (0, 2)


@pytest.mark.kcsim(feature=["group.version=0"])
def test_without_group_version_1_consumer_groups_are_unsupported(kcsim: Any) -> None:
    """Kafka with group.version=0 answers ConsumerGroupHeartbeat UNSUPPORTED_VERSION."""
    cls = request_class(CONSUMER_GROUP_HEARTBEAT)
    with connect(kcsim) as wire:
        answer = wire.call(CONSUMER_GROUP_HEARTBEAT, 0, cls(
            group_id="g-off", member_id="m" * 22, member_epoch=0, rebalance_timeout_ms=30000,
            subscribed_topic_names=["t"], topic_partitions=[]))
    assert answer.error_code == E.UNSUPPORTED_VERSION
    assert answer.member_id is None and answer.assignment is None


def test_serve_pins_features_given_by_flag(kcsim_factory: Callable[..., Any]) -> None:
    server = kcsim_factory(feature=["transaction.version=0", "metadata.version=30"])
    assert finalized(api_versions(server, 4)) == {"metadata.version": (30, 30),
                                                  "group.version": (1, 1),
                                                  "streams.version": (1, 1),
                                                  "share.version": (2, 2)}


# -- pins kcsim refuses ---------------------------------------------------------------


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`kcsim serve` that must refuse to start (a server that starts hits the timeout)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    return subprocess.run([sys.executable, "-m", "kcsim", "serve", "--in-memory", *args],
                          capture_output=True, text=True, env={**clean, **(env or {})},
                          timeout=30)


@pytest.mark.parametrize(("args", "message"), [
    (["--feature", "transaction.version=3"],
     "--feature transaction.version=3: transaction.version=3: kcsim implements "
     "transaction.version up to level 2"),
    (["--feature", "group.version=1", "--feature", "queue.version=1"],
     "--feature group.version=1 --feature queue.version=1: unknown feature 'queue.version' "
     "(kcsim implements metadata.version, group.version, transaction.version, "
     "streams.version, share.version)"),
    (["--feature", "transactions.version=1"],
     "--feature transactions.version=1: unknown feature 'transactions.version' (did you mean "
     "'transaction.version'? kcsim implements metadata.version, group.version, "
     "transaction.version, streams.version, share.version)"),
    (["--feature", "group.version"], "--feature group.version: 'group.version' is not NAME=LEVEL"),
    (["--feature", "group.version=on"],
     "--feature group.version=on: 'group.version=on': the level must be an integer"),
    (["--feature", "metadata.version=6"],
     "--feature metadata.version=6: metadata.version=6: the lowest level of metadata.version "
     "is 7"),
])
def test_serve_refuses_a_pin_it_cannot_honour(args: list[str], message: str) -> None:
    proc = _serve(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"kcsim: {message}"


def test_the_environment_pins_features_comma_separated() -> None:
    cfg = config.load(env={"KCSIM_FEATURE": "group.version=0, transaction.version=0"})
    assert cfg.feature_levels == {"metadata.version": 33, "streams.version": 1,
                                  "share.version": 2}
    with pytest.raises(config.ConfigError) as refused:
        config.load(env={"KCSIM_FEATURE": "group.version=2"})
    assert str(refused.value).startswith("KCSIM_FEATURE=group.version=2: ")


def test_a_toml_file_pins_features_as_a_list(tmp_path: Any) -> None:
    path = tmp_path / "kcsim.toml"
    path.write_text('feature = ["transaction.version=0"]\n')
    assert config.load(str(path), env={}).feature_levels == {"metadata.version": 33,
                                                             "group.version": 1,
                                                             "streams.version": 1,
                                                             "share.version": 2}


def test_embedded_settings_refuse_a_level_above_what_kcsim_implements() -> None:
    with pytest.raises(config.ConfigError) as refused:
        config.load(env={}, feature=["transaction.version=3"])
    assert str(refused.value) == ("feature=['transaction.version=3']: transaction.version=3: "
                                  "kcsim implements transaction.version up to level 2")


# -- KIP-1242: the client names the cluster and node it expects -----------------------


def test_v5_naming_this_cluster_and_node_is_answered(kcsim: Any) -> None:
    answer = api_versions(kcsim, 5, cluster_id=kcsim.config.cluster_id,
                          node_id=kcsim.config.node_id)
    assert answer.error_code == 0 and answer.api_keys and answer.finalized_features


@pytest.mark.parametrize(("cluster", "node"), [("another-cluster", 1), (None, 2), ("", 1)])
def test_v5_naming_another_cluster_or_node_is_told_to_rebootstrap(
        kcsim: Any, cluster: str | None, node: int) -> None:
    cluster_id = kcsim.config.cluster_id if cluster is None else cluster
    with connect(kcsim) as wire:
        cls = request_class(API_VERSIONS)
        answer = wire.call(API_VERSIONS, 5, cls(client_software_name="kcsim-tests",
                                                client_software_version="1",
                                                cluster_id=cluster_id, node_id=node))
        assert answer.error_code == E.REBOOTSTRAP_REQUIRED
        assert answer.api_keys == [] and answer.finalized_features == []
        assert answer.finalized_features_epoch == -1
        again = wire.call(API_VERSIONS, 4, cls(client_software_name="kcsim-tests",
                                               client_software_version="1"))
        assert again.error_code == 0 and again.api_keys  # the connection stays usable


@pytest.mark.parametrize("target", [{"cluster_id": "kcsim-cluster-000000000"}, {"node_id": 1},
                                    {"cluster_id": ""}])
def test_v5_naming_only_one_of_cluster_and_node_is_invalid(kcsim: Any,
                                                           target: dict[str, Any]) -> None:
    answer = api_versions(kcsim, 5, **target)
    assert answer.error_code == E.INVALID_REQUEST and answer.api_keys == []


def test_v4_ignores_the_v5_fields(kcsim: Any) -> None:
    answer = api_versions(kcsim, 4, cluster_id="another-cluster", node_id=9)
    assert answer.error_code == 0 and answer.api_keys


# -- DeleteGroups v3 ------------------------------------------------------------------


def test_delete_groups_v3_answers_each_group_with_a_null_message(kcsim: Any) -> None:
    """Kafka 4.4 fills the message only for streams groups' topology clean-up, which kcsim
    does not have: every other result, failed or not, carries a null message."""
    commit = request_class(8)
    heartbeat = request_class(CONSUMER_GROUP_HEARTBEAT)
    metadata = request_class(3)
    with connect(kcsim) as wire:
        wire.call(3, 12, metadata(topics=[metadata.MetadataRequestTopic(name="t-delete")],
                                  allow_auto_topic_creation=True))
        committed = wire.call(8, 8, commit(
            group_id="g-empty", generation_id_or_member_epoch=-1, member_id="",
            group_instance_id=None, retention_time_ms=-1, topics=[
                commit.OffsetCommitRequestTopic(name="t-delete", partitions=[
                    commit.OffsetCommitRequestPartition(partition_index=0, committed_offset=3,
                                                        committed_metadata="")])]))
        assert committed.topics[0].partitions[0].error_code == 0
        joined = wire.call(CONSUMER_GROUP_HEARTBEAT, 0, heartbeat(
            group_id="g-active", member_id="a" * 22, member_epoch=0, rebalance_timeout_ms=30000,
            subscribed_topic_names=["t-delete"], topic_partitions=[]))
        assert joined.error_code == 0
        answer = wire.call(DELETE_GROUPS, 3, request_class(DELETE_GROUPS)(
            groups_names=["g-empty", "g-active", "g-unknown"]))
    results = {r.group_id: (r.error_code, r.error_message) for r in answer.results}
    assert results == {"g-empty": (E.NONE, None), "g-active": (E.NON_EMPTY_GROUP, None),
                       "g-unknown": (E.GROUP_ID_NOT_FOUND, None)}
