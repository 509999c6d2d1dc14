"""Inflating the records section of a compressed Kafka batch, for every codec clients use.

gzip comes with Python; snappy (raw, and the xerial framing the Java client
writes), lz4 (the frame format) and zstd come from the ``[spark]`` extra's
libraries, imported when a batch needs them: the pipeline's workers read
partition data with it, and the broker's log cleaner when it filters a
compressed batch.
"""

from __future__ import annotations

import struct
import zlib

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16  # magic, version i32, compatible version i32
_BLOCK = struct.Struct(">i")


class CompressionError(ValueError):
    """A records section that its codec cannot inflate."""


def decompress(codec: int, data: bytes) -> bytes:
    """The records section of a batch compressed with ``codec`` (1 gzip .. 4 zstd)."""
    try:
        if codec == 1:
            return zlib.decompress(data, wbits=16 + zlib.MAX_WBITS)
        if codec == 2:
            return _snappy(data)
        if codec == 3:
            import lz4.frame

            return bytes(lz4.frame.decompress(data))
        if codec == 4:
            return _zstd(data)
    except CompressionError:
        raise
    except Exception as exc:  # each library raises its own kind
        raise CompressionError(f"cannot inflate a batch compressed with codec {codec}: "
                               f"{exc}") from exc
    raise CompressionError(f"unknown compression codec {codec}")


def _snappy(data: bytes) -> bytes:
    import cramjam

    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    out = bytearray()
    pos = _XERIAL_HEADER
    while pos < len(data):
        (size,) = _BLOCK.unpack_from(data, pos)
        pos += _BLOCK.size
        if size < 0 or pos + size > len(data):
            raise CompressionError("xerial snappy block runs past the end of the batch")
        out += bytes(cramjam.snappy.decompress_raw(data[pos:pos + size]))
        pos += size
    return bytes(out)


def _zstd(data: bytes) -> bytes:
    import zstandard

    # Producers stream their frames, so the content size is often absent from the header.
    reader = zstandard.ZstdDecompressor().decompressobj()
    return reader.decompress(data)
