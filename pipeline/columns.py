"""The columns of the ``records`` view, derived from the record types themselves.

Every field of every record type's key and value becomes a typed column, named
after the field; record types that share a field name and type share its
column (``group`` of an offset commit and of a group's metadata), and a field
whose name another type already uses with a different type is named
``<record type>_<field>``. Deriving the columns from the registry keeps the
view complete when a record type is added: there is no list to forget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import msgspec.inspect as mi
import pyarrow as pa

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kcsim.storage import RecordType

# Spark's timestamps are microseconds; kcsim's are milliseconds (see ``timestamps``).
TIMESTAMP = pa.timestamp("us", tz="UTC")

# Columns every record has, before the fields of its key and value.
LEADING = (
    pa.field("segment", pa.int64(), nullable=False),  # base position of its segment file
    pa.field("position", pa.int64(), nullable=False),  # its position in the log
    pa.field("timestamp", TIMESTAMP, nullable=False),  # its frame's write time
    pa.field("record_type", pa.string(), nullable=False),
    pa.field("tombstone", pa.bool_(), nullable=False),
)


@dataclass(frozen=True)
class FieldColumn:
    """Where one field of a record type's key or value goes."""

    index: int  # column index in the view
    part: int  # 0: the key, 1: the value
    attr: str
    convert: Callable[[Any], Any] | None  # to what pyarrow takes; None: as it is
    plain_int: bool = False  # an int that is never None: gathered into an int64 array directly


@dataclass(frozen=True)
class RecordColumns:
    """The view's Arrow schema and, per record type id, how its fields fill the columns."""

    schema: pa.Schema
    plans: dict[type, tuple[str, tuple[FieldColumn, ...]]]  # key class -> (name, field columns)

    @property
    def by_column(self) -> list[dict[type, tuple[int, str, Callable[[Any], Any] | None]]]:
        """Per column: key class -> (part, attribute, conversion) of the field that fills it."""
        cached: list[dict[type, tuple[int, str, Callable[[Any], Any] | None]]] | None
        cached = self.__dict__.get("_by_column")
        if cached is None:
            cached = [{} for _ in self.schema]
            for key_type, (_name, fields) in self.plans.items():
                for f in fields:
                    cached[f.index][key_type] = (f.part, f.attr, f.convert)
            object.__setattr__(self, "_by_column", cached)
        return cached


def record_columns(types: Iterable[RecordType]) -> RecordColumns:
    fields: list[pa.Field] = list(LEADING)
    by_name: dict[str, int] = {f.name: i for i, f in enumerate(fields)}
    plans: dict[type, tuple[str, tuple[FieldColumn, ...]]] = {}
    for t in types:
        placed: list[FieldColumn] = []
        for part, cls in enumerate((t.key, t.value)):
            for field in _struct_fields(cls):
                arrow, convert = arrow_type(field.type)
                name = field.name
                index = by_name.get(name)
                if index is not None and (index < len(LEADING) or fields[index].type != arrow):
                    name = f"{t.name}_{field.name}"
                    index = by_name.get(name)
                    if index is not None and fields[index].type != arrow:
                        raise TypeError(
                            f"record type {t.name!r}: column {name!r} is taken by a field of "
                            f"another type ({fields[index].type}, not {arrow}); rename the field")
                if index is None:
                    index = len(fields)
                    fields.append(pa.field(name, arrow))
                    by_name[name] = index
                placed.append(FieldColumn(index, part, field.name, convert,
                                          isinstance(field.type, mi.IntType)))
        plans[t.key] = (t.name, tuple(placed))
    return RecordColumns(pa.schema(fields), plans)


def _struct_fields(cls: type) -> tuple[mi.Field, ...]:
    info = mi.type_info(cls)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{cls.__name__} is not a msgspec Struct")
    return info.fields


def arrow_type(info: mi.Type) -> tuple[pa.DataType, Callable[[Any], Any] | None]:
    """The Arrow type of a msgspec field type and the conversion its values need."""
    if isinstance(info, mi.UnionType):
        others = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(others) == 1:
            inner, convert = arrow_type(others[0])
            if convert is None:
                return inner, None
            return inner, lambda v, c=convert: None if v is None else c(v)
        return pa.binary(), _msgpack
    simple = _SIMPLE.get(type(info))
    if simple is not None:
        return simple, None
    if isinstance(info, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        item, convert = arrow_type(info.item_type)
        if convert is None:
            return pa.list_(item), (list if not isinstance(info, mi.ListType) else None)
        return pa.list_(item), lambda v, c=convert: [c(x) for x in v]
    if isinstance(info, mi.TupleType):
        parts = [arrow_type(t) for t in info.item_types]
        arrow = pa.struct([pa.field(f"_{i + 1}", a) for i, (a, _) in enumerate(parts)])
        converts = [c for _, c in parts]
        if all(c is None for c in converts):
            return arrow, None
        return arrow, lambda v, cs=converts: tuple(
            x if c is None else c(x) for x, c in zip(v, cs))
    if isinstance(info, mi.DictType):
        key, key_convert = arrow_type(info.key_type)
        value, value_convert = arrow_type(info.value_type)
        if key_convert is None and value_convert is None:
            return pa.map_(key, value), lambda v: list(v.items())
        return pa.map_(key, value), lambda v, k=key_convert, c=value_convert: [
            (x if k is None else k(x), y if c is None else c(y)) for x, y in v.items()]
    if isinstance(info, mi.StructType):
        named = [(f.name, *arrow_type(f.type)) for f in info.fields]
        arrow = pa.struct([pa.field(name, a) for name, a, _ in named])
        getters = [(name, c) for name, _, c in named]
        return arrow, lambda v, gs=getters: tuple(
            getattr(v, name) if c is None else c(getattr(v, name)) for name, c in gs)
    return pa.binary(), _msgpack


_SIMPLE: dict[type, pa.DataType] = {
    mi.StrType: pa.string(),
    mi.IntType: pa.int64(),
    mi.BoolType: pa.bool_(),
    mi.FloatType: pa.float64(),
    mi.BytesType: pa.binary(),
    mi.ByteArrayType: pa.binary(),
}

_msgpack = msgspec.msgpack.Encoder().encode


def timestamps(millis: Sequence[int | None]) -> pa.Array:
    """Millisecond timestamps as the microsecond timestamps Spark's Arrow reader expects."""
    import pyarrow.compute as pc

    return pc.multiply(pa.array(millis, pa.int64()), 1000).cast(TIMESTAMP)
