"""The counting encoder of every response: the bytes of the plain encoder, and the error
codes it writes counted as Kafka's `errorCounts` counts them (each occurrence, NONE in
the total), checked against a count taken from the schema itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kcsim.protocol.apis import APIS
from kcsim.protocol.codecs import codec
from kcsim.protocol.schema import ArrayType, StructType

from .test_roundtrip import FEW, messages

if TYPE_CHECKING:
    from kcsim.protocol.compiler import MessageCodec


def _responses() -> list[Any]:
    out = []
    for api in sorted(APIS.values(), key=lambda a: a.key):
        c = codec(api.key, "response")
        for v in range(c.message.valid.lo, (c.message.valid.hi or 0) + 1):
            out.append(pytest.param(c, v, id=f"{api.name}-v{v}"))
    return out


def written_error_codes(s: StructType, obj: Any, version: int) -> list[int]:
    """The error codes a `version` frame of `obj` carries, in the order they are written."""
    codes: list[int] = []
    for f in s.fields:
        if version not in f.versions or version in f.tagged:
            continue
        value = getattr(obj, f.name)
        if f.name == "error_code":
            codes.append(value)
        elif isinstance(f.type, StructType) and value is not None:
            codes += written_error_codes(f.type, value, version)
        elif isinstance(f.type, ArrayType) and isinstance(f.type.item, StructType):
            for item in value or ():
                codes += written_error_codes(f.type.item, item, version)
    return codes


@pytest.mark.parametrize(("c", "version"), _responses())
@FEW
@given(data=st.data())
def test_counts_what_it_writes(c: MessageCodec, version: int, data: st.DataObject) -> None:
    msg = data.draw(messages(c, version))
    out, errors = bytearray(), {1: 3}  # counts add to what is there
    total = c.counting_encoder(version)(msg, out, errors)
    assert bytes(out) == c.encode(msg, version)
    codes = written_error_codes(c.message.body, msg, version)
    assert total == len(codes)
    expected = {1: 3}
    for code in codes:
        if code:
            expected[code] = expected.get(code, 0) + 1
    assert errors == expected
