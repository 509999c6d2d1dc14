"""The error table must agree with Kafka on the codes the group coordinator returns."""

import pytest

from kcsim.protocol.errors import ERRORS, ErrorCode, ErrorInfo, error_name

WELL_KNOWN = [
    (-1, "UNKNOWN_SERVER_ERROR", False),
    (0, "NONE", False),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", True),
    (15, "COORDINATOR_NOT_AVAILABLE", True),
    (16, "NOT_COORDINATOR", True),
    (22, "ILLEGAL_GENERATION", False),
    (25, "UNKNOWN_MEMBER_ID", False),
    (27, "REBALANCE_IN_PROGRESS", False),
    (68, "NON_EMPTY_GROUP", False),
    (69, "GROUP_ID_NOT_FOUND", False),
    (79, "MEMBER_ID_REQUIRED", False),
    (82, "FENCED_INSTANCE_ID", False),
    (110, "FENCED_MEMBER_EPOCH", False),
    (113, "STALE_MEMBER_EPOCH", False),
]


@pytest.mark.parametrize(("code", "name", "retriable"), WELL_KNOWN)
def test_well_known_codes(code: int, name: str, retriable: bool) -> None:
    member = ErrorCode[name]
    assert member == code
    assert member.retriable is retriable
    assert ERRORS[code] == ErrorInfo(code, name, retriable, member.message)
    assert error_name(code) == name


def test_default_messages_are_kafkas() -> None:
    assert ErrorCode.NOT_COORDINATOR.message == "This is not the correct coordinator."
    assert ErrorCode.NONE.message == ""
    assert all(info.message for code, info in ERRORS.items() if code != 0)


def test_codes_and_names_are_unique_and_contiguous() -> None:
    codes = [e.value for e in ErrorCode]
    assert len(codes) == len(set(codes)) == len(ERRORS)
    assert len({e.name for e in ErrorCode}) == len(codes)
    assert sorted(codes) == list(range(-1, max(codes) + 1))


def test_unknown_code_has_a_readable_name() -> None:
    assert error_name(32000) == "UNKNOWN(32000)"
