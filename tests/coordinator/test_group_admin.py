"""ListGroups (KIP-40), DescribeGroups and DeleteGroups (KIP-229)."""

from __future__ import annotations

from kcsim.coordinator.records import GroupMetadataKey, OffsetCommitKey
from kcsim.protocol.errors import ErrorCode as E

from .group_harness import Harness, assignment, subscription

INT32_MIN = -(2**31)
READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS = 3, 6, 8, 10, 11


def _three_groups(h: Harness) -> None:
    h.stable_group("stable", 1)
    h.commit("simple", {("t", 0): 1})
    h.join("rebalancing", version=3)


# -- ListGroups -------------------------------------------------------------------


def test_list_groups_shows_every_classic_group():
    h = Harness()
    _three_groups(h)
    r = h.list_groups(version=5)
    assert r.error_code == E.NONE
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in r.groups] == [
        ("stable", "consumer", "Stable", "classic"),
        ("simple", "", "Empty", "classic"),
        ("rebalancing", "consumer", "PreparingRebalance", "classic"),
    ]


def test_list_groups_states_filter_is_case_insensitive():
    h = Harness()
    _three_groups(h)
    assert [g.group_id for g in h.list_groups(version=4, states=["STABLE", " empty "]).groups] == [
        "stable",
        "simple",
    ]
    assert h.list_groups(version=4, states=["nonsense"]).groups == []
    # Before v4 the filter does not exist: everything is listed.
    assert len(h.list_groups(version=3, states=["Stable"]).groups) == 3


def test_list_groups_types_filter():
    h = Harness()
    _three_groups(h)
    assert len(h.list_groups(types=["classic"]).groups) == 3
    assert len(h.list_groups(types=["Classic", "consumer"]).groups) == 3
    assert h.list_groups(types=["consumer"]).groups == []
    assert len(h.list_groups(version=4, types=["consumer"]).groups) == 3


# -- DescribeGroups ----------------------------------------------------------------


def test_describe_stable_group_shows_metadata_and_assignments():
    h = Harness()
    a, b = h.stable_group("g", 2)
    (d,) = h.describe("g", version=4).groups
    assert (d.error_code, d.group_state, d.protocol_type, d.protocol_data) == (
        E.NONE,
        "Stable",
        "consumer",
        "range",
    )
    assert [(m.member_id, m.client_id, m.client_host) for m in d.members] == [
        (a, "c0", "/127.0.0.1"),
        (b, "c1", "/127.0.0.1"),
    ]
    assert d.members[0].member_metadata == subscription("t")
    assert d.members[0].member_assignment == assignment({"t": [0, 2, 4]})
    assert d.authorized_operations == INT32_MIN


def test_describe_outside_stable_omits_metadata_and_protocol():
    h = Harness()
    a, _b = h.stable_group("g", 2)
    h.join("g", a)
    (d,) = h.describe("g").groups
    assert d.group_state == "PreparingRebalance"
    assert d.protocol_data == "" and d.protocol_type == "consumer"
    assert [m.member_metadata for m in d.members] == [b"", b""]
    # The last assignment is still shown, as Kafka does.
    assert d.members[1].member_assignment == assignment({"t": [1, 3, 5]})


def test_describe_empty_group():
    h = Harness()
    h.commit("g", {("t", 0): 1})
    (d,) = h.describe("g").groups
    assert (d.group_state, d.protocol_type, d.protocol_data, d.members) == ("Empty", "", "", [])


def test_describe_unknown_group_by_version():
    h = Harness()
    (old,) = h.describe("nope", version=5).groups
    assert (old.error_code, old.group_state) == (E.NONE, "Dead")
    (new,) = h.describe("nope", version=6).groups
    assert (new.error_code, new.group_state) == (E.GROUP_ID_NOT_FOUND, "Dead")
    assert new.error_message == "Group nope not found."


def test_describe_authorized_operations():
    h = Harness()
    h.stable_group("g", 1)
    expected = sum(1 << op for op in (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS))
    assert h.describe("g", version=3, operations=True).groups[0].authorized_operations == expected
    assert h.describe("g", version=3, operations=False).groups[0].authorized_operations == INT32_MIN
    # Only successfully described groups carry operations.
    (missing,) = h.describe("nope", version=6, operations=True).groups
    assert missing.authorized_operations == INT32_MIN


def test_describe_static_member_instance_ids():
    h = Harness()
    _a, _b = h.stable_group("g", 2, static=True)
    (d,) = h.describe("g", version=4).groups
    assert [m.group_instance_id for m in d.members] == ["inst-0", "inst-1"]


# -- DeleteGroups ------------------------------------------------------------------


def test_delete_groups_reports_each_group():
    h = Harness()
    h.stable_group("busy", 1)
    h.commit("idle", {("t", 0): 1, ("u", 1): 2})
    before = len(h.records)
    r = h.delete_groups("idle", "busy", "nope", "idle")
    assert [(x.group_id, x.error_code) for x in r.results] == [
        ("idle", E.NONE),
        ("busy", E.NON_EMPTY_GROUP),
        ("nope", E.GROUP_ID_NOT_FOUND),
    ]
    written = [(type(rec.key), rec.value) for rec in h.records[before:]]
    assert written == [(OffsetCommitKey, None), (OffsetCommitKey, None), (GroupMetadataKey, None)]
    assert h.gc.groups() == ["busy"]
    assert h.gc.committed_offsets("idle") == {}
    assert h.fetch("idle", None).topics == []


def test_deleted_group_can_be_recreated():
    h = Harness()
    h.commit("g", {("t", 0): 1})
    h.delete_groups("g")
    h.commit("g", {("t", 1): 2})
    assert list(h.gc.committed_offsets("g")) == [("t", 1)]


def test_group_emptied_by_leaving_can_be_deleted():
    h = Harness()
    (a,) = h.stable_group("g", 1)
    h.commit("g", {("t", 0): 1}, generation=1, member_id=a)
    h.leave("g", (a, None))
    assert h.delete_groups("g").results[0].error_code == E.NONE
    assert h.gc.groups() == []
