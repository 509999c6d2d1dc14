"""Request and response headers, and which header version an API version uses."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from msgspec import Struct

from .primitives import DecodeError, read_uvarint, uvarint_bytes

if TYPE_CHECKING:
    from .schema import Api

_HEAD = struct.Struct(">hhi")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")

API_VERSIONS_KEY = 18


class RequestHeader(Struct, gc=False):
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None


def request_header_version(api: Api, version: int) -> int:
    return 2 if version in api.request.flexible else 1


def response_header_version(api: Api, version: int) -> int:
    # ApiVersions responses always use header v0 so that a client that sent a
    # version we do not understand can still parse the answer.
    if api.key == API_VERSIONS_KEY:
        return 0
    return 1 if version in api.response.flexible else 0


def peek_request_header(buf: bytes | memoryview) -> tuple[int, int, int]:
    """api_key, api_version, correlation_id: readable from every header version."""
    if len(buf) < 8:
        raise DecodeError(f"request of {len(buf)} bytes is shorter than a header")
    api_key, api_version, correlation_id = _HEAD.unpack_from(buf, 0)
    return api_key, api_version, correlation_id


def decode_request_header(buf: bytes | memoryview, header_version: int) -> tuple[RequestHeader, int]:
    """Parse a request header; returns it and the offset where the body starts."""
    api_key, api_version, correlation_id = peek_request_header(buf)
    client_id, pos = read_client_id(buf, header_version)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def read_client_id(buf: bytes | memoryview, header_version: int) -> tuple[str | None, int]:
    """The client id after the 8 bytes `peek_request_header` reads, and where the body starts.

    Read as Kafka reads it: a negative length is a null id, malformed UTF-8 is
    replaced; a length or tagged field running past the frame is a DecodeError.
    """
    pos = 8
    client_id = None
    end = len(buf)
    if header_version >= 1:
        if end < 10:
            raise DecodeError("request header: the frame ends inside client_id")
        (n,) = _I16.unpack_from(buf, pos)
        pos += 2
        if n >= 0:
            if pos + n > end:
                raise DecodeError(f"request header: client_id length {n} runs past the end"
                                  f" of the frame ({end - pos} bytes left)")
            client_id = str(buf[pos : pos + n], "utf-8", "replace")
            pos += n
    if header_version >= 2:
        if pos < end and buf[pos] == 0:  # no tagged fields, the usual case
            return client_id, pos + 1
        try:
            ntags, pos = read_uvarint(buf, pos)
            for _ in range(ntags):
                _tag, pos = read_uvarint(buf, pos)
                size, pos = read_uvarint(buf, pos)
                if size > end - pos:
                    raise DecodeError(f"request header: tagged field of {size} bytes runs past"
                                      " the end of the frame")
                pos += size
        except IndexError:
            raise DecodeError("request header: the frame ends inside its tagged fields") from None
        except DecodeError as exc:
            if str(exc).startswith("request header"):
                raise
            raise DecodeError(f"request header: {exc}") from None
    return client_id, pos


def encode_request_header(header: RequestHeader, header_version: int) -> bytes:
    out = bytearray(_HEAD.pack(header.api_key, header.api_version, header.correlation_id))
    if header_version >= 1:
        if header.client_id is None:
            out += b"\xff\xff"
        else:
            raw = header.client_id.encode()
            out += _I16.pack(len(raw)) + raw
    if header_version >= 2:
        out += b"\x00"
    return bytes(out)


def response_header_bytes(correlation_id: int, header_version: int) -> bytes:
    return _I32.pack(correlation_id) + (b"\x00" if header_version >= 1 else b"")


def decode_response_header(buf: bytes, header_version: int) -> tuple[int, int]:
    (correlation_id,) = _I32.unpack_from(buf, 0)
    pos = 4
    if header_version >= 1:
        ntags, pos = read_uvarint(buf, pos)
        for _ in range(ntags):
            _tag, pos = read_uvarint(buf, pos)
            size, pos = read_uvarint(buf, pos)
            pos += size
    return correlation_id, pos


__all__ = [
    "RequestHeader",
    "decode_request_header",
    "decode_response_header",
    "encode_request_header",
    "peek_request_header",
    "read_client_id",
    "request_header_version",
    "response_header_bytes",
    "response_header_version",
    "uvarint_bytes",
]
