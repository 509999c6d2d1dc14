"""A group's own configs (IncrementalAlterConfigs on a GROUP resource) rule its members:
the heartbeat interval they are given and the session after which they are fenced; a
streams group's also its initial delay and standby replicas."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.coordinator import GroupConfig
from kcsim.coordinator.records import GroupConfigKey, GroupConfigValue
from kcsim.coordinator.streams.internal_topics import Status
from kcsim.server.state.config_defs import ConfigProblem
from kcsim.server.state.group_configs import check_group_configs
from kcsim.storage.records import Record

from .consumer_harness import Client, Harness, config
from .streams_harness import StreamsHarness, streams_config, tasks_of

WORD_COUNT_TASKS = {(s, p) for s in ("0", "1") for p in range(4)}


def configure(h: Harness, group: str, **configs: str) -> None:
    """Fold a group_config record as the broker writes it (None: its configs deleted)."""
    record = Record(GroupConfigKey(group), GroupConfigValue(configs) if configs else None)
    h.gc.apply(record)
    h.records.append(record)


def test_a_group_config_sets_the_heartbeat_interval_and_session_of_that_group_only() -> None:
    h = Harness(config(consumer_group_heartbeat_interval_ms=700,
                       consumer_group_session_timeout_ms=3000))
    configure(h, "g", **{"consumer.heartbeat.interval.ms": "900",
                         "consumer.session.timeout.ms": "8000"})
    mine, other = Client(h, "g"), Client(h, "other")
    assert mine.join().heartbeat_interval_ms == 900
    assert other.join().heartbeat_interval_ms == 700
    h.advance(3000)
    assert not h.gc.consumer_group("other").members
    assert mine.member_id in h.gc.consumer_group("g").members
    h.advance(5000)
    assert not h.gc.consumer_group("g").members


def test_a_change_applies_from_each_members_next_heartbeat() -> None:
    h = Harness(config(consumer_group_session_timeout_ms=3000))
    a = Client(h, "g")
    a.join()
    configure(h, "g", **{"consumer.session.timeout.ms": "10000"})
    h.advance(2000)
    assert a.beat().heartbeat_interval_ms == 5000  # the broker's, not set on the group
    h.advance(9000)
    assert a.member_id in h.gc.consumer_group("g").members
    configure(h, "g")  # deleted: the broker's session again, from the next heartbeat
    assert a.beat().error_code == 0
    h.advance(3000)
    assert not h.gc.consumer_group("g").members


def test_group_configs_survive_a_restart() -> None:
    h = Harness()
    configure(h, "g", **{"consumer.heartbeat.interval.ms": "6000"})
    h.restart()
    assert h.gc.group_configs("g") == {"consumer.heartbeat.interval.ms": "6000"}
    assert Client(h, "g").join().heartbeat_interval_ms == 6000


# -- streams groups (KIP-1071) -------------------------------------------------------


def streams_ready(h: StreamsHarness, member: str) -> Any:
    joined = h.join(member)
    return h.beat(member, joined.member_epoch, tasks_of(joined.active_tasks))


def test_a_streams_groups_session_heartbeat_and_lag_are_its_own() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_session_timeout_ms=3000))
    configure(h, "app", **{"streams.heartbeat.interval.ms": "900",
                           "streams.session.timeout.ms": "8000",
                           "streams.acceptable.recovery.lag": "77",
                           "streams.task.offset.interval.ms": "20000"})
    joined = h.join("m1")
    assert (joined.heartbeat_interval_ms, joined.acceptable_recovery_lag,
            joined.task_offset_interval_ms) == (900, 77, 20000)
    other = h.join("m2", group_id="other")
    assert (other.heartbeat_interval_ms, other.acceptable_recovery_lag,
            other.task_offset_interval_ms) == (5000, 10000, 60000)  # the broker's
    h.advance(3000)
    assert not h.gc.streams_group("other").members
    assert "m1" in h.gc.streams_group("app").members
    h.advance(5000)
    assert not h.gc.streams_group("app").members


def test_a_new_streams_group_waits_its_own_initial_delay() -> None:
    h = StreamsHarness(cfg=streams_config(streams_group_initial_rebalance_delay_ms=3000))
    configure(h, "app", **{"streams.initial.rebalance.delay.ms": "0"})
    assert tasks_of(streams_ready(h, "m1").active_tasks) == WORD_COUNT_TASKS
    delayed = h.join("m2", group_id="other")
    assert Status.ASSIGNMENT_DELAYED in {s.status_code for s in delayed.status}


def test_standby_replicas_set_on_the_group_bump_its_epoch_and_apply_at_once() -> None:
    """As Kafka 4.4: the next heartbeat finds the group's assignment configs changed from
    those of its last epoch, bumps the epoch and computes a target with the new count."""
    h = StreamsHarness()
    a, b = streams_ready(h, "a"), streams_ready(h, "b")
    epochs = {"a": a.member_epoch, "b": b.member_epoch}
    owned = {"a": tasks_of(a.active_tasks), "b": tasks_of(b.active_tasks)}
    for _ in range(3):
        for m in epochs:
            r = h.beat(m, epochs[m], owned[m])
            epochs[m] = r.member_epoch
            owned[m] = tasks_of(r.active_tasks) if r.active_tasks is not None else owned[m]
    before = h.describe()
    assert before.group_state == "Stable"
    assert not any(m.target_assignment.standby_tasks for m in before.members)

    configure(h, "app", **{"streams.num.standby.replicas": "1"})
    assert h.describe().group_epoch == before.group_epoch  # nothing until a heartbeat
    r = h.beat("a", epochs["a"])
    after = h.describe()
    assert after.group_epoch == before.group_epoch + 1 and r.member_epoch == after.group_epoch
    standby = {t for m in after.members for t in tasks_of(m.target_assignment.standby_tasks)}
    assert standby == {("1", p) for p in range(4)}  # each stateful task once, elsewhere
    assert tasks_of(r.standby_tasks) == {t for t in standby if t not in owned["a"]}

    # Unchanged: no further bump. A restart replays the configs with the epoch.
    h.beat("b", epochs["b"])
    epoch = h.describe().group_epoch
    h.restart()
    h.beat("a", r.member_epoch)
    assert h.describe().group_epoch == epoch
    configure(h, "app")  # deleted: the broker's 0 again, at a new epoch
    assert h.beat("a", r.member_epoch).standby_tasks == []
    assert h.describe().group_epoch == epoch + 1


@pytest.mark.parametrize(("configs", "message"), [
    ({"streams.session.timeout.ms": "1000"},
     "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive."),
    ({"streams.heartbeat.interval.ms": "20000"},
     "streams.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive."),
    ({"streams.num.standby.replicas": "3"},
     "streams.num.standby.replicas must be less than or equal to 2"),
    ({"streams.num.standby.replicas": "-1"}, "Invalid value -1 for configuration "
     "streams.num.standby.replicas: Value must be at least 0"),
    ({"streams.initial.rebalance.delay.ms": "-1"}, "Invalid value -1 for configuration "
     "streams.initial.rebalance.delay.ms: Value must be at least 0"),
    ({"streams.assignment.interval.ms": "20000"},
     "streams.assignment.interval.ms must be in the range 0 to 15000 inclusive."),
    ({"streams.num.warmup.replicas": "21"},
     "streams.num.warmup.replicas must be less than or equal to 20"),
    ({"streams.acceptable.recovery.lag": "-1"}, "Invalid value -1 for configuration "
     "streams.acceptable.recovery.lag: Value must be at least 0"),
    ({"streams.task.offset.interval.ms": "1000"},
     "streams.task.offset.interval.ms must be greater than or equal to 15000"),
    ({"streams.session.timeout.ms": "46000", "streams.heartbeat.interval.ms": "15000"}, None),
    ({"streams.initial.rebalance.delay.ms": "99999999"}, None),
    ({"streams.assignor.name": "sticky"}, "Unknown group config name: streams.assignor.name"),
])
def test_streams_group_configs_are_checked_as_kafka_4_4_checks_them(
        configs: dict[str, str], message: str | None) -> None:
    """Kafka 4.4's answers, against its default broker limits (from the oracle broker)."""
    if message is None:
        check_group_configs(configs, GroupConfig())
        return
    with pytest.raises(ConfigProblem) as refused:
        check_group_configs(configs, GroupConfig())
    assert str(refused.value) == message


def test_a_streams_session_must_outlast_its_heartbeat_interval() -> None:
    cfg = GroupConfig(streams_group_min_session_timeout_ms=1000,
                      streams_group_min_heartbeat_interval_ms=1000)
    with pytest.raises(ConfigProblem) as refused:
        check_group_configs({"streams.session.timeout.ms": "5000"}, cfg)
    assert str(refused.value) == ("streams.session.timeout.ms must be greater than "
                                  "streams.heartbeat.interval.ms")
