"""Reading and writing the consumer protocol (JoinGroup metadata, SyncGroup assignments).

These structures are version-prefixed (int16) and not flexible; newer clients
may append fields we do not know, so decoding reads the highest version we
declare that is not newer than the prefix and ignores whatever follows.
"""

from __future__ import annotations

import struct
from typing import Any

from .codecs import data_codec
from .messages.consumer_protocol import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from .primitives import DecodeError

_VERSION = struct.Struct(">h")


def _decode(name: str, raw: bytes) -> Any:
    mc = data_codec(name)
    valid = mc.message.valid
    if len(raw) < _VERSION.size:
        raise DecodeError(f"{name}: missing version prefix")
    (version,) = _VERSION.unpack_from(raw, 0)
    if version < valid.lo:
        raise DecodeError(f"{name}: unsupported version {version}")
    version = version if valid.hi is None else min(version, valid.hi)
    obj, _ = mc.decoder(version)(raw, _VERSION.size)
    return obj


def _encode(name: str, obj: Any, version: int) -> bytes:
    mc = data_codec(name)
    valid = mc.message.valid
    if version < valid.lo:
        raise ValueError(f"{name}: unsupported version {version}")
    version = version if valid.hi is None else min(version, valid.hi)
    return _VERSION.pack(version) + mc.encode(obj, version)


def decode_subscription(raw: bytes) -> ConsumerProtocolSubscription:
    """A JoinGroup protocol's metadata as a ConsumerProtocolSubscription."""
    subscription: ConsumerProtocolSubscription = _decode("ConsumerProtocolSubscription", raw)
    return subscription


def decode_assignment(raw: bytes) -> ConsumerProtocolAssignment:
    """A SyncGroup assignment as a ConsumerProtocolAssignment (empty bytes: nothing assigned)."""
    if not raw:
        return ConsumerProtocolAssignment()
    assignment: ConsumerProtocolAssignment = _decode("ConsumerProtocolAssignment", raw)
    return assignment


def encode_subscription(obj: ConsumerProtocolSubscription, version: int) -> bytes:
    return _encode("ConsumerProtocolSubscription", obj, version)


def encode_assignment(obj: ConsumerProtocolAssignment, version: int) -> bytes:
    """Version-prefixed assignment bytes; versions newer than we declare are written as our newest."""
    return _encode("ConsumerProtocolAssignment", obj, version)
