"""Kafka wire primitives that are not plain fixed-width `struct` formats.

Varints (zig-zag, as in record batches) and unsigned varints (compact lengths
and tagged fields) plus a precomputed table for the common one-byte case.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class DecodeError(ValueError):
    """Bytes that do not form a valid message of the declared version."""


UVARINT_TABLE: tuple[bytes, ...] = tuple(bytes([i]) for i in range(128))


def uvarint_bytes(value: int) -> bytes:
    """Unsigned varint. Two bytes (values below 16 KiB: the lengths of most member
    metadata and assignments) are built without the loop."""
    if value < 0x4000:
        if value < 0:
            raise ValueError("unsigned varint cannot be negative")
        if value < 0x80:
            return UVARINT_TABLE[value]
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Unsigned varint. Up to three bytes (values below 2 MiB: the lengths of record
    batches and of most arrays) are read without the loop."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    b = buf[pos + 1]
    if b < 0x80:
        return result | b << 7, pos + 2
    result |= (b & 0x7F) << 7
    b = buf[pos + 2]
    if b < 0x80:
        return result | b << 14, pos + 3
    result |= (b & 0x7F) << 14
    pos += 3
    shift = 21
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("unsigned varint longer than 10 bytes")


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def varint_bytes(value: int) -> bytes:
    """Signed (zig-zag) varint/varlong, as record fields use."""
    return uvarint_bytes(zigzag_encode(value) & 0xFFFFFFFFFFFFFFFF)


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Signed (zig-zag) varint. One and two bytes (values to ±8191, which is most record
    lengths and deltas) are read inline: Produce reads one for every record it checks."""
    first = buf[pos]
    if first < 0x80:
        return (first >> 1) ^ -(first & 1), pos + 1
    second = buf[pos + 1]
    if second < 0x80:
        raw = (first & 0x7F) | (second << 7)
        return (raw >> 1) ^ -(raw & 1), pos + 2
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def array_packer(code: str) -> Callable[[Sequence[Any]], bytes]:
    """Pack an array of one fixed-width type, reusing a compiled Struct per length."""
    cache: dict[int, Callable[..., bytes]] = {}

    def pack(values: Sequence[Any]) -> bytes:
        n = len(values)
        fn = cache.get(n)
        if fn is None:
            fn = struct.Struct(f">{n}{code}").pack
            if n <= 64:
                cache[n] = fn
        return fn(*values)

    return pack


def array_unpacker(code: str) -> Callable[[int, Any, int], list[Any]]:
    """Unpack `n` items of one fixed-width type at `pos` as a list."""
    cache: dict[int, Callable[..., tuple[Any, ...]]] = {}

    def unpack(n: int, buf: Any, pos: int) -> list[Any]:
        fn = cache.get(n)
        if fn is None:
            fn = struct.Struct(f">{n}{code}").unpack_from
            if n <= 64:
                cache[n] = fn
        return list(fn(buf, pos))

    return unpack
