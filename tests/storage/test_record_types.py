"""RecordTypes: the registry a log is opened with refuses clashing declarations."""

from __future__ import annotations

import pytest
from msgspec import Struct
from msgspec.structs import replace

from kcsim.storage import Record, RecordType, RecordTypes

from .helpers import COUNTER, DOCUMENT, ENTRY, PAIR, TYPES, CounterKey, CounterValue, NameKey


class OtherKey(Struct, frozen=True, array_like=True):
    name: str


def test_types_are_found_by_record_and_listed_in_declaration_order():
    assert TYPES.of(Record(NameKey("d"), None)) is DOCUMENT
    assert TYPES.of(Record(CounterKey("d"), None)) is COUNTER
    assert list(TYPES) == [ENTRY, DOCUMENT, COUNTER, PAIR] and len(TYPES) == 4
    with pytest.raises(KeyError):
        TYPES.of(Record(OtherKey("d"), None))


@pytest.mark.parametrize(("clash", "message"), [
    (RecordType(3, "other", OtherKey, CounterValue), "counter and other share the id 3"),
    (RecordType(4, "counter", OtherKey, CounterValue), "counter and counter share the name 'counter'"),
    (RecordType(5, "other", CounterKey, CounterValue),
     "counter and other share the key class CounterKey"),
])
def test_a_clash_with_a_declared_type_is_refused(clash, message):
    with pytest.raises(ValueError, match=f"record types {message}$"):
        RecordTypes([ENTRY, COUNTER, clash])


@pytest.mark.parametrize("field", ["id", "version"])
@pytest.mark.parametrize("value", [-1, 1 << 16])
def test_ids_and_versions_must_fit_their_frame_fields(field, value):
    with pytest.raises(ValueError, match=f"{field} {value} is not a u16"):
        RecordTypes([replace(ENTRY, **{field: value})])
