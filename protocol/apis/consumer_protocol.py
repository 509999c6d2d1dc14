"""Consumer protocol: the bytes classic consumers put in JoinGroup metadata and SyncGroup assignments.

These structures are version-prefixed (int16) and not flexible; newer clients
may append fields we do not know, so decoding reads the highest version we
declare that is not newer than the prefix and ignores whatever follows.
"""

from __future__ import annotations

import struct as _struct
from typing import Any

from ..primitives import DecodeError
from ..schema import array, data, f, struct

TopicPartition = struct(
    "TopicPartition",
    f("topic", "string"),
    f("partitions", array("int32")),
)

ConsumerProtocolSubscription = data(
    "ConsumerProtocolSubscription", "0-3", "none",
    f("topics", array("string")),
    f("user_data", "bytes", nullable="0+", default=None),
    f("owned_partitions", array(struct(
        "TopicPartition",
        f("topic", "string", "1+"),
        f("partitions", array("int32"), "1+"),
    )), "1+"),
    f("generation_id", "int32", "2+", default=-1),
    f("rack_id", "string", "3+", nullable="3+", default=None),
)

ConsumerProtocolAssignment = data(
    "ConsumerProtocolAssignment", "0-3", "none",
    f("assigned_partitions", array(TopicPartition)),
    f("user_data", "bytes", nullable="0+", default=None),
)

DATA = (ConsumerProtocolSubscription, ConsumerProtocolAssignment)

_VERSION = _struct.Struct(">h")


def _decode(name: str, raw: bytes) -> Any:
    from ..codecs import data_codec

    mc = data_codec(name)
    valid = mc.message.valid
    try:
        (version,) = _VERSION.unpack_from(raw, 0)
    except _struct.error:
        raise DecodeError(f"{name}: missing version prefix") from None
    if version < valid.lo:
        raise DecodeError(f"{name}: unsupported version {version}")
    version = version if valid.hi is None else min(version, valid.hi)
    try:
        obj, _ = mc.decoder(version)(raw, _VERSION.size)
    except (_struct.error, IndexError, ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"{name} v{version}: {exc}") from None
    return obj


def _encode(name: str, obj: Any, version: int) -> bytes:
    from ..codecs import data_codec

    mc = data_codec(name)
    valid = mc.message.valid
    if version < valid.lo:
        raise ValueError(f"{name}: unsupported version {version}")
    version = version if valid.hi is None else min(version, valid.hi)
    return _VERSION.pack(version) + mc.encode(obj, version)


def decode_assignment(raw: bytes) -> Any:
    """A SyncGroup assignment as a ConsumerProtocolAssignment (empty bytes: nothing assigned)."""
    if not raw:
        from ..codecs import data_codec

        return data_codec("ConsumerProtocolAssignment").cls()
    return _decode("ConsumerProtocolAssignment", raw)


def encode_subscription(obj: Any, version: int) -> bytes:
    return _encode("ConsumerProtocolSubscription", obj, version)


def encode_assignment(obj: Any, version: int) -> bytes:
    """Version-prefixed assignment bytes; versions newer than we declare are written as our newest."""
    return _encode("ConsumerProtocolAssignment", obj, version)
