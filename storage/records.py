"""Records and the registry of record types a log holds.

A record is a key and a value; a value of ``None`` is a tombstone (the key was
deleted). Storage gives records no meaning: whoever owns a kind of state
declares each of its records as a :class:`RecordType` (a stable numeric id,
never reused; key and value classes; a value version, so logs written by an
older kcsim stay readable), and whoever opens a log passes the full set as one
:class:`RecordTypes`. Keys and values are msgspec structs encoded as msgpack
(``array_like=True`` keeps them small).
"""

from __future__ import annotations

from types import GenericAlias
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec
from msgspec import Struct

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    RecordCodec: TypeAlias = tuple[
        Callable[[Any], Any],  # decode a key
        Callable[[Any], Any],  # decode a value
        int,  # the newest value version this kcsim reads
        Callable[[Any], list[tuple[Any, Any]]],  # decode a batch frame's [key, value] pairs
    ]
    """The decoders of one record type: a plain tuple, which the replay loop
    indexes faster than any object with named fields."""

TYPE_ID_SPACE = 1 << 16  # type ids and versions are u16 in a frame header


class Record(Struct, frozen=True, array_like=True, gc=False):
    """One change: a typed key and its new value (None deletes the key).

    Encoded as a ``[key, value]`` pair, the shape of a record in a batch frame."""

    key: Any
    value: Any | None


class RecordType(Struct, frozen=True):
    """One kind of record: its frame type id, a name for messages, its classes and
    the value version written (and the newest one read)."""

    id: int
    name: str
    key: type[Any]
    value: type[Any]
    version: int = 0


class RecordTypes:
    """The record types of one log: checked for clashes once, indexed for the hot paths.

    Appends find a record's type by its key class (:attr:`by_key`); scans and
    replay find the decoders by type id (:attr:`codecs`, a list indexed by id,
    None for an id not declared).
    """

    __slots__ = ("_types", "by_key", "codecs")

    def __init__(self, types: Iterable[RecordType]) -> None:
        self._types = tuple(types)
        by_id: dict[int, RecordType] = {}
        by_name: dict[str, RecordType] = {}
        self.by_key: dict[type[Any], RecordType] = {}
        for t in self._types:
            if not 0 <= t.id < TYPE_ID_SPACE:
                raise ValueError(f"record type {t.name}: id {t.id} is not a u16")
            if not 0 <= t.version < TYPE_ID_SPACE:
                raise ValueError(f"record type {t.name}: version {t.version} is not a u16")
            _claim(by_id, t.id, t, "id")
            _claim(by_name, t.name, t, "name")
            _claim(self.by_key, t.key, t, "key class")
        self.codecs: list[RecordCodec | None] = [None] * TYPE_ID_SPACE
        for t in self._types:
            self.codecs[t.id] = (
                msgspec.msgpack.Decoder(t.key).decode,
                msgspec.msgpack.Decoder(t.value).decode,
                t.version,
                msgspec.msgpack.Decoder(_pairs_of(t)).decode,
            )

    def __iter__(self) -> Iterator[RecordType]:
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)

    def __repr__(self) -> str:
        return f"RecordTypes({', '.join(f'{t.id}:{t.name}' for t in self._types)})"

    def of(self, record: Record) -> RecordType:
        """The type of ``record``; KeyError if its key class is not declared here."""
        return self.by_key[type(record.key)]


def _claim(index: dict[Any, RecordType], value: Any, t: RecordType, what: str) -> None:
    clash = index.get(value)
    if clash is not None:
        shown = value.__name__ if isinstance(value, type) else repr(value)
        raise ValueError(f"record types {clash.name} and {t.name} share the {what} {shown}")
    index[value] = t


def _pairs_of(t: RecordType) -> Any:
    """The msgspec type of a batch frame's payload: [key, value or nil] pairs."""
    return GenericAlias(list, (GenericAlias(tuple, (t.key, t.value | None)),))
