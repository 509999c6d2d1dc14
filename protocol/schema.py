"""Declarative message schemas: the single source every codec is derived from.

A message is declared once as data (fields, the versions each field lives in,
nullable and tagged versions, flexible versions); `protocol.compiler` turns a
declaration into straight-line encode/decode functions per version.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

PRIMITIVES = frozenset(
    {
        "bool", "int8", "int16", "int32", "int64", "uint16", "uint32",
        "float64", "string", "bytes", "records", "uuid",
    }
)

_MISSING: Any = object()


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; `hi is None` means open-ended ("3+")."""

    lo: int
    hi: int | None

    @staticmethod
    def parse(text: str | None) -> Versions:
        if text is None or text == "none":
            return NONE
        text = text.strip()
        if text.endswith("+"):
            return Versions(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-")
            return Versions(int(lo), int(hi))
        n = int(text)
        return Versions(n, n)

    def __contains__(self, version: int) -> bool:
        if self.lo < 0:
            return False
        return version >= self.lo and (self.hi is None or version <= self.hi)

    def __str__(self) -> str:
        if self.lo < 0:
            return "none"
        if self.hi is None:
            return f"{self.lo}+"
        return f"{self.lo}" if self.lo == self.hi else f"{self.lo}-{self.hi}"


NONE = Versions(-1, -1)


@dataclass(frozen=True)
class StructType:
    """A named group of fields (an element of a struct array, or a message body)."""

    name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ArrayType:
    """An array of a primitive type or of a struct."""

    item: str | StructType


FieldType = str | ArrayType | StructType


@dataclass(frozen=True)
class Field:
    name: str  # snake_case Python attribute name
    type: FieldType
    versions: Versions
    nullable: Versions = NONE
    tag: int | None = None
    tagged: Versions = NONE
    default: Any = _MISSING

    def default_value(self) -> Any:
        """The value a field takes when a version does not carry it (Kafka's rules)."""
        if self.default is not _MISSING:
            return self.default
        t = self.type
        if isinstance(t, ArrayType):
            return []
        if isinstance(t, StructType):
            return None
        if t == "bool":
            return False
        if t in ("string",):
            return ""
        if t == "bytes":
            return b""
        if t == "records":
            return None
        if t == "uuid":
            from uuid import UUID

            return UUID(int=0)
        if t == "float64":
            return 0.0
        return 0


@dataclass(frozen=True)
class Message:
    name: str
    api_key: int | None
    kind: str  # "request" | "response" | "data"
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    structs: dict[str, StructType] = dc_field(default_factory=dict, compare=False)

    @property
    def body(self) -> StructType:
        return StructType(self.name, self.fields)


# ---------------------------------------------------------------------------
# The small DSL the declarations in protocol/apis/ are written in.


def f(
    name: str,
    type: FieldType,
    versions: str = "0+",
    *,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str = "none",
    default: Any = _MISSING,
) -> Field:
    """Declare a field. `type` is a primitive name, `array(...)` or `struct(...)`."""
    return Field(
        name=name,
        type=type,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tag=tag,
        tagged=Versions.parse(tagged),
        default=default,
    )


def struct(name: str, *fields: Field) -> StructType:
    return StructType(name, tuple(fields))


def array(item: str | StructType) -> ArrayType:
    if isinstance(item, str) and item not in PRIMITIVES:
        raise ValueError(f"unknown primitive {item!r}")
    return ArrayType(item)


def message(
    name: str,
    *fields: Field,
    api_key: int | None,
    kind: str,
    valid: str,
    flexible: str,
) -> Message:
    return Message(
        name=name,
        api_key=api_key,
        kind=kind,
        valid=Versions.parse(valid),
        flexible=Versions.parse(flexible),
        fields=tuple(fields),
    )


def request(name: str, api_key: int, valid: str, flexible: str, *fields: Field) -> Message:
    return message(name, *fields, api_key=api_key, kind="request", valid=valid, flexible=flexible)


def response(name: str, api_key: int, valid: str, flexible: str, *fields: Field) -> Message:
    return message(name, *fields, api_key=api_key, kind="response", valid=valid, flexible=flexible)


def data(name: str, valid: str, flexible: str, *fields: Field) -> Message:
    """A versioned structure that is not a request or response (e.g. consumer protocol)."""
    return message(name, *fields, api_key=None, kind="data", valid=valid, flexible=flexible)


@dataclass(frozen=True)
class Api:
    """A request/response pair under one API key, with the versions kcsim accepts."""

    key: int
    name: str
    request: Message
    response: Message

    @property
    def min_version(self) -> int:
        return self.request.valid.lo

    @property
    def max_version(self) -> int:
        hi = self.request.valid.hi
        assert hi is not None
        return hi
