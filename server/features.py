"""The feature levels kcsim reports in ApiVersions (KIP-584), and the pins that lower them.

Kafka finalizes a level of each feature cluster-wide, and clients choose protocols by
them: a Java 4.x producer uses transactions v2 only where transaction.version >= 2 is
finalized. kcsim reports the features it implements and no others, so a client never
picks a protocol kcsim does not speak. `SUPPORTED` is the one table: raising what kcsim
implements is one line here. A fresh kcsim finalizes the highest level of each, as a
fresh Kafka does; `--feature NAME=LEVEL` pins a lower one. A level of 0 means "off", and
Kafka then leaves the feature out of the finalized list; kcsim does the same.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

# name -> (lowest, highest) level kcsim implements.
SUPPORTED: dict[str, tuple[int, int]] = {
    "metadata.version": (7, 33),  # 33 is Kafka 4.4's; 7 the oldest Kafka 4.x accepts
    "group.version": (0, 1),  # 1: KIP-848 consumer groups (ConsumerGroupHeartbeat)
    # 1: flexible transaction records; 2: transactions v2 (KIP-890 part 2), which the
    # transaction coordinator follows (TxnConfig.transaction_version)
    "transaction.version": (0, 2),
    "streams.version": (0, 1),  # 1: KIP-1071 streams groups (StreamsGroupHeartbeat)
    "share.version": (0, 2),  # 1: KIP-932 share groups; 2: Kafka 4.2's GA (RENEW, v2 calls)
}

# finalized_features_epoch: Kafka's is the offset of its last metadata record; kcsim's
# levels never change while it runs, so one epoch (>= 0: "known") serves.
FINALIZED_EPOCH = 0


def parse_pins(entries: Iterable[str]) -> dict[str, int]:
    """`NAME=LEVEL` entries as levels by name; ValueError says which entry is wrong."""
    pins: dict[str, int] = {}
    for entry in entries:
        name, sep, text = (part.strip() for part in entry.partition("="))
        if not sep or not name:
            raise ValueError(f"{entry!r} is not NAME=LEVEL")
        if name not in SUPPORTED:
            close = difflib.get_close_matches(name, SUPPORTED, n=1, cutoff=0.85)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ValueError(f"unknown feature {name!r} ({hint}kcsim implements "
                             + ", ".join(SUPPORTED) + ")")
        lo, hi = SUPPORTED[name]
        try:
            level = int(text)
        except ValueError:
            raise ValueError(f"{entry!r}: the level must be an integer") from None
        if level > hi:
            raise ValueError(f"{name}={level}: kcsim implements {name} up to level {hi}")
        if level < lo:
            raise ValueError(f"{name}={level}: the lowest level of {name} is {lo}")
        if pins.get(name, level) != level:
            raise ValueError(f"{name} is pinned twice, to {pins[name]} and {level}")
        pins[name] = level
    return pins


def finalized(pins: Mapping[str, int]) -> dict[str, int]:
    """The finalized level of each feature, pinned or the highest; level 0 is left out."""
    levels = {name: pins.get(name, hi) for name, (_, hi) in SUPPORTED.items()}
    return {name: level for name, level in levels.items() if level > 0}
