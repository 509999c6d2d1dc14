"""Property tests of every compiled codec: round trips and hostile input.

For each declared message and version, random valid messages must survive
encode -> decode unchanged (and their bytes must survive decode -> encode),
and no input, however malformed or truncated, may make a decoder raise
anything but DecodeError: the server turns that into a clean disconnect,
while any other exception would be a crash.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kcsim.protocol.apis import APIS, DATA
from kcsim.protocol.codecs import codec, data_codec
from kcsim.protocol.primitives import DecodeError, uvarint_bytes
from kcsim.protocol.schema import ArrayType, Field, StructType

if TYPE_CHECKING:
    from kcsim.protocol.compiler import MessageCodec

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}
MAX_ITEMS = 3  # per array: keeps nested messages small and examples fast

# Hundreds of (message, version) cases: few examples each keeps the module near 30 s.
SETTINGS = settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(SETTINGS, max_examples=8)


def _cases() -> list[Any]:
    """One case per (message, version), named so a failure says which."""
    out = []
    for api in sorted(APIS.values(), key=lambda a: a.key):
        for kind in ("request", "response"):
            c = codec(api.key, kind)
            for v in range(c.message.valid.lo, (c.message.valid.hi or 0) + 1):
                out.append(pytest.param(c, v, id=f"{api.name}-{kind}-v{v}"))
    for name in sorted(DATA):
        c = data_codec(name)
        for v in range(c.message.valid.lo, (c.message.valid.hi or 0) + 1):
            out.append(pytest.param(c, v, id=f"{name}-v{v}"))
    return out


CASES = _cases()


# -- random valid messages -----------------------------------------------------


def _primitive(t: str) -> st.SearchStrategy[Any]:
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        return st.integers(lo, hi)
    if t == "bool":
        return st.booleans()
    if t == "float64":
        return st.floats(allow_nan=False)
    if t == "string":
        return st.text(max_size=12)
    if t in ("bytes", "records"):
        return st.binary(max_size=24)
    if t == "uuid":
        return st.builds(uuid.UUID, int=st.integers(0, 2**128 - 1))
    raise AssertionError(f"no strategy for type {t!r}")


def _value(c: MessageCodec, fld: Field, version: int) -> st.SearchStrategy[Any]:
    t = fld.type
    if isinstance(t, ArrayType):
        item = _struct(c, t.item, version) if isinstance(t.item, StructType) else _primitive(t.item)
        strategy: st.SearchStrategy[Any] = st.lists(item, max_size=MAX_ITEMS)
    elif isinstance(t, StructType):
        strategy = _struct(c, t, version)
    else:
        strategy = _primitive(t)
    # records are written as null whenever None (ShareFetch's are not nullable from v1);
    # a tagged struct equal to its (empty) default is omitted and decodes back to that default.
    may_be_none = version in fld.nullable
    return st.none() | strategy if may_be_none else strategy


def _struct(
    c: MessageCodec, s: StructType, version: int, cls: type | None = None
) -> st.SearchStrategy[Any]:
    present = {f.name: _value(c, f, version) for f in s.fields if version in f.versions}
    return st.builds(cls or c.structs[s.name], **present)


def messages(c: MessageCodec, version: int) -> st.SearchStrategy[Any]:
    """Instances carrying only the fields `version` has; the rest keep defaults."""
    return _struct(c, c.message.body, version, c.cls)


def hostile_bytes(max_chunks: int = 12) -> st.SearchStrategy[bytes]:
    """Random bytes, with length-like varints (tiny to 10-byte huge) mixed in."""
    chunk = st.one_of(
        st.binary(max_size=16),
        st.integers(0, 2**70 - 1).map(uvarint_bytes),
        st.integers(0, 300).map(uvarint_bytes),
        st.sampled_from([b"\xff\xff", b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff"]),
    )
    return st.lists(chunk, min_size=1, max_size=max_chunks).map(b"".join)


OVERLONG = (uvarint_bytes(2**63 + 1), uvarint_bytes(2**20), b"\x7f\xff\xff\xff")
SAMPLE = {
    "bool": True, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "uint16": 1, "uint32": 1,
    "float64": 1.5, "string": "x", "bytes": b"x", "records": b"x", "uuid": uuid.UUID(int=1),
}


def filled(c: MessageCodec, s: StructType, version: int, cls: type | None = None, *,
           sample: dict[str, Any] = SAMPLE, items: int = 1, scalar_items: int = 1) -> Any:
    """A message with every field of `version` set from `sample`: arrays of structs hold
    `items` items at this level (one below it), arrays of scalars `scalar_items`."""
    values: dict[str, Any] = {}
    for fld in s.fields:
        if version not in fld.versions:
            continue
        t = fld.type
        if isinstance(t, ArrayType):
            item = t.item
            if isinstance(item, StructType):
                values[fld.name] = [filled(c, item, version, sample=sample,
                                           scalar_items=scalar_items) for _ in range(items)]
            else:
                values[fld.name] = [sample[item]] * scalar_items
        elif isinstance(t, StructType):
            values[fld.name] = filled(c, t, version, sample=sample, items=items,
                                      scalar_items=scalar_items)
        else:
            values[fld.name] = sample[t]
    return (cls or c.structs[s.name])(**values)


# -- properties ------------------------------------------------------------------


@pytest.mark.parametrize(("c", "version"), CASES)
@SETTINGS
@given(data=st.data())
def test_roundtrip(c: MessageCodec, version: int, data: st.DataObject) -> None:
    msg = data.draw(messages(c, version), label="message")
    wire = c.encode(msg, version)
    back = c.decode(wire, version)
    assert back == msg
    assert c.encode(back, version) == wire


@pytest.mark.parametrize(("c", "version"), CASES)
@SETTINGS
@given(junk=hostile_bytes())
def test_garbage_raises_only_decode_error(c: MessageCodec, version: int, junk: bytes) -> None:
    _decode_or_decode_error(c, junk, version)


@pytest.mark.parametrize(("c", "version"), CASES)
@FEW
@given(data=st.data())
def test_mangled_encoding_raises_only_decode_error(
    c: MessageCodec, version: int, data: st.DataObject
) -> None:
    wire = c.encode(data.draw(messages(c, version), label="message"), version)
    for cut in range(0, len(wire), max(1, len(wire) // 16)):
        try:
            c.decode(wire[:cut], version)
        except DecodeError:
            continue
        pytest.fail(f"a {cut}-byte prefix of a {len(wire)}-byte encoding decoded cleanly")
    at = data.draw(st.integers(0, len(wire)), label="splice offset")
    cut = data.draw(st.integers(0, 10), label="bytes replaced")
    patch = data.draw(hostile_bytes(max_chunks=1), label="patch")
    _decode_or_decode_error(c, wire[:at] + patch + wire[at + cut:], version)


@pytest.mark.parametrize(("c", "version"), CASES)
def test_every_overlong_length_raises_decode_error(c: MessageCodec, version: int) -> None:
    """Deterministic sweep: a huge varint or int32 written over each byte of a full message."""
    wire = c.encode(filled(c, c.message.body, version, c.cls), version)
    assert c.encode(c.decode(wire, version), version) == wire
    for at in range(len(wire)):
        for patch in OVERLONG:
            _decode_or_decode_error(c, wire[:at] + patch + wire[at + 1:], version)


def _decode_or_decode_error(c: MessageCodec, buf: bytes, version: int) -> None:
    """Anything but DecodeError propagates and fails the test."""
    try:
        c.decode(buf, version)
    except DecodeError:
        pass
