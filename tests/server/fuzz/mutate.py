"""Mutations of valid request frames: what a broken or hostile client might send.

A `Mutator` turns seed frames into new frames, one to three mutations stacked:
bit flips, interesting bytes and integers written over (lying lengths and array
counts as int16, int32 or varint), truncation, splices of two frames, repeated
and dropped runs of bytes, a header pointing at another API or version, and a
size prefix that lies. Most mutations keep the size prefix true to the bytes that
follow, so the frame reaches the decoder; a few lie on purpose.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from kcsim.protocol.primitives import uvarint_bytes

if TYPE_CHECKING:
    import random
    from collections.abc import Callable, Sequence

    from .frames import Seed

SIZE = struct.Struct(">i")
HEADER = 4 + 8  # size prefix, api key, version, correlation id

INTERESTING_INTS = (-(2**31), -(2**15), -129, -2, -1, 0, 1, 2, 127, 128, 255, 0x7FFF, 0xFFFF,
                    0x7FFFFFFF, 2**20, 2**24)
INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)
HUGE_VARINTS = (uvarint_bytes(2**31), uvarint_bytes(2**35), uvarint_bytes(2**63 + 5),
                b"\xff" * 11)


def resized(payload: bytes | bytearray) -> bytes:
    """`payload` (header onward) with a size prefix that tells the truth."""
    return SIZE.pack(len(payload)) + bytes(payload)


class Mutator:
    """Seeded mutations of seed frames; the same seed gives the same frames."""

    def __init__(self, rng: random.Random, seeds: Sequence[Seed],
                 served: dict[int, tuple[int, int]]) -> None:
        self.rng = rng
        self.seeds = seeds
        self.served = sorted(served.items())
        self.ops: tuple[Callable[[bytearray], bytearray], ...] = (
            self.flip_bits, self.flip_bits, self.write_byte, self.write_int, self.write_int,
            self.write_varint, self.truncate, self.splice, self.repeat, self.drop,
            self.other_api, self.other_version,
        )

    def frame(self) -> tuple[bytes, str]:
        """A frame to send and a short description of how it was made."""
        rng = self.rng
        seed = rng.choice(self.seeds)
        roll = rng.random()
        if roll < 0.15:
            return seed.frame, f"{seed.label} as is"
        if roll < 0.18:
            return self.lying_size(seed.frame), f"{seed.label} lying size"
        payload = bytearray(seed.frame[4:])
        names = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            op = rng.choice(self.ops)
            payload = op(payload)
            names.append(op.__name__)
        return resized(payload), f"{seed.label} {'+'.join(names)}"

    # -- the mutations (each takes and returns the frame from its header on) -----

    def _at(self, payload: bytearray, body_only: bool = False) -> int:
        """A random position, in the body past the fixed header fields when asked."""
        lo = HEADER - 4 if body_only and len(payload) > HEADER - 4 else 0
        return self.rng.randrange(lo, max(lo + 1, len(payload)))

    def flip_bits(self, payload: bytearray) -> bytearray:
        for _ in range(self.rng.choice((1, 1, 2, 4, 8))):
            if payload:
                at = self._at(payload, body_only=True)
                payload[at] ^= 1 << self.rng.randrange(8)
        return payload

    def write_byte(self, payload: bytearray) -> bytearray:
        if payload:
            payload[self._at(payload, body_only=True)] = self.rng.choice(INTERESTING_BYTES)
        return payload

    def write_int(self, payload: bytearray) -> bytearray:
        """A lying length or count: an interesting int16 or int32 over the bytes at a spot."""
        value = self.rng.choice(INTERESTING_INTS)
        code = self.rng.choice(("h", "i"))
        lo, hi = (-(2**15), 2**15 - 1) if code == "h" else (-(2**31), 2**31 - 1)
        raw = struct.pack(">" + code, max(lo, min(hi, value)))
        at = self._at(payload, body_only=True)
        payload[at:at + len(raw)] = raw
        return payload

    def write_varint(self, payload: bytearray) -> bytearray:
        """A lying compact length or count: a small or huge unsigned varint."""
        raw = self.rng.choice((*HUGE_VARINTS, b"\x00", b"\x01", uvarint_bytes(200),
                               uvarint_bytes(0x8000)))
        at = self._at(payload, body_only=True)
        width = self.rng.choice((1, len(raw)))
        payload[at:at + width] = raw
        return payload

    def truncate(self, payload: bytearray) -> bytearray:
        return payload[:self._at(payload)]

    def splice(self, payload: bytearray) -> bytearray:
        other = self.rng.choice(self.seeds).frame[4:]
        return payload[:self._at(payload)] + other[self.rng.randrange(len(other)):]

    def repeat(self, payload: bytearray) -> bytearray:
        at = self._at(payload)
        run = payload[at:at + self.rng.choice((1, 2, 4, 16, 64))]
        return payload[:at] + run * self.rng.choice((2, 3, 50)) + payload[at:]

    def drop(self, payload: bytearray) -> bytearray:
        at = self._at(payload, body_only=True)
        return payload[:at] + payload[at + self.rng.choice((1, 2, 4, 8, 32)):]

    def other_api(self, payload: bytearray) -> bytearray:
        """The body of one API under the header of another (at a version it serves)."""
        if len(payload) >= 4:
            key, (lo, hi) = self.rng.choice(self.served)
            payload[0:4] = struct.pack(">hh", key, self.rng.randint(lo, hi))
        return payload

    def other_version(self, payload: bytearray) -> bytearray:
        """The same API at another version, served or not."""
        if len(payload) >= 4:
            (key,) = struct.unpack_from(">h", payload, 0)
            lo, hi = dict(self.served).get(key, (0, 0))
            version = self.rng.choice((lo - 1, hi + 1, self.rng.randint(lo, hi), -1, 0x7FFF))
            payload[2:4] = struct.pack(">h", max(-(2**15), min(2**15 - 1, version)))
        return payload

    def lying_size(self, frame: bytes) -> bytes:
        """A size prefix that is not the frame's: bigger (the server waits for more),
        smaller (the rest reads as the next frame), negative or huge."""
        actual = len(frame) - 4
        size = self.rng.choice((actual + 1, actual + 1000, max(0, actual - 3), 0, -1,
                                2**31 - 1, 64 * 1024 * 1024))
        return SIZE.pack(size) + frame[4:]
