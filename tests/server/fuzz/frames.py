"""Valid request frames of every served API at every served version: the fuzzer's seeds.

Requests are filled from their declarations, field by field, with values a real
client would send: names from a small vocabulary (so requests meet the groups
and topics earlier requests made), real consumer-protocol metadata in JoinGroup
and SyncGroup, a real record batch in Produce, the ids of existing topics where
a version names topics by id. Each request is encoded with kcsim's own codec.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kcsim.protocol.codecs import codec, data_codec
from kcsim.protocol.consumer_protocol import encode_assignment, encode_subscription
from kcsim.protocol.schema import ArrayType, Field, StructType

from .batches import batch
from .wire import body, frame

if TYPE_CHECKING:
    import random

TOPICS = ("fuzz-t0", "fuzz-t1", "fuzz-t2")
FETCH = 1
GROUPS = ("fuzz-g0", "fuzz-g1", "fuzz-g2", "fuzz-g3")
ASSIGNORS = ("range", "roundrobin", "cooperative-sticky", "uniform")


@dataclass(frozen=True)
class Seed:
    """One valid request: its API, version and frame (size prefix included)."""

    api_key: int
    version: int
    frame: bytes

    @property
    def label(self) -> str:
        return f"{self.api_key}v{self.version}"


class RequestFiller:
    """Builds plausible requests of any declared message from its fields' names and types."""

    def __init__(self, rng: random.Random, topic_ids: dict[str, uuid.UUID]) -> None:
        self.rng = rng
        self.topic_ids = topic_ids

    def request(self, api_key: int, version: int) -> Any:
        c = codec(api_key, "request")
        return self._struct(c.message.body, c.cls, c.structs, version)

    def _struct(self, st: StructType, cls: Any, classes: dict[str, Any], version: int) -> Any:
        values: dict[str, Any] = {}
        for fld in st.fields:
            if version in fld.versions and version not in fld.tagged:
                values[fld.name] = self._field(st.name, fld, classes, version)
        return cls(**values)

    def _field(self, owner: str, fld: Field, classes: dict[str, Any], version: int) -> Any:
        rng = self.rng
        if version in fld.nullable and rng.random() < 0.25:
            return None
        t = fld.type
        if isinstance(t, ArrayType):
            n = rng.choice((1, 1, 2, 3))
            item = t.item
            if isinstance(item, StructType):
                return [self._struct(item, classes[item.name], classes, version) for _ in range(n)]
            scalar = Field(name=fld.name, type=item, versions=fld.versions)
            return [self._field(owner, scalar, classes, version) for _ in range(n)]
        if isinstance(t, StructType):
            return self._struct(t, classes[t.name], classes, version)
        return self._scalar(owner, fld.name, t)

    def _scalar(self, owner: str, name: str, t: str) -> Any:
        rng = self.rng
        if t == "records":
            return batch([b"v%d" % i for i in range(rng.choice((1, 2, 3)))])
        if t == "bytes":
            if name == "metadata":
                sub = data_codec("ConsumerProtocolSubscription").cls(
                    topics=list(rng.sample(TOPICS, 2)), owned_partitions=[])
                return encode_subscription(sub, rng.choice((0, 1, 2, 3)))
            if name == "assignment":
                cls = data_codec("ConsumerProtocolAssignment").cls
                assignment = cls(assigned_partitions=[cls.TopicPartition(
                    topic=rng.choice(TOPICS), partitions=[0, 1])])
                return encode_assignment(assignment, rng.choice((0, 1, 3)))
            return b"x"
        if t == "uuid":
            return self.topic_ids.get(rng.choice(TOPICS), uuid.UUID(int=0))
        if t == "string":
            return self._string(owner, name)
        if t == "bool":
            return rng.random() < 0.5
        if t == "float64":
            return 0.0
        return self._int(name)

    def _string(self, owner: str, name: str) -> str:
        rng = self.rng
        lowered = owner.lower()
        if name in ("protocol_name", "server_assignor") or (name == "name" and "protocol" in lowered):
            return rng.choice(ASSIGNORS)
        if name in ("topic", "topic_name", "resource_name") or (
                name == "name" and ("topic" in lowered or "resource" in lowered)):
            return rng.choice(TOPICS)
        if name in ("group_id", "key") or (name == "name" and "group" in lowered):
            return rng.choice(GROUPS)
        if name == "protocol_type":
            return "consumer"
        if name == "member_id":
            return rng.choice(("", "", "fuzz-member"))
        if name in ("group_instance_id", "instance_id"):
            return "fuzz-instance"
        if name == "subscribed_topic_regex":
            return "fuzz-.*"
        return rng.choice(("fuzz", "x", ""))

    def _int(self, name: str) -> int:
        rng = self.rng
        if name in ("session_timeout_ms",):
            return rng.choice((6000, 10000))
        if "timeout" in name:
            return rng.choice((0, 10, 100))
        if name == "max_wait_ms":
            return rng.choice((0, 5))
        if name in ("num_partitions", "count"):
            return rng.choice((1, 2, 3, -1))
        if name == "replication_factor":
            return rng.choice((1, -1))
        if name == "acks":
            return rng.choice((-1, 1, 0))
        if name in ("max_bytes", "partition_max_bytes"):
            return 1 << 16
        if name == "timestamp":
            return rng.choice((-1, -2, -3, 1_700_000_000_000))
        if "epoch" in name or "generation" in name or name in ("producer_id", "replica_id"):
            return rng.choice((-1, 0, 1))
        if "offset" in name:
            return rng.choice((0, 1, 5))
        return rng.choice((0, 1, 2))


def seeds(served: dict[int, tuple[int, int]], topic_ids: dict[str, uuid.UUID],
          rng: random.Random, per_version: int = 2) -> list[Seed]:
    """`per_version` valid frames of each served API at each version it serves."""
    filler = RequestFiller(rng, topic_ids)
    out = []
    for api_key, (lo, hi) in sorted(served.items()):
        for version in range(lo, hi + 1):
            for _ in range(per_version):
                payload = body(api_key, version, filler.request(api_key, version))
                out.append(Seed(api_key, version, frame(api_key, version, 0, payload)))
    return out


def session_seeds(sessions: list[tuple[int, int]], topic_ids: dict[str, uuid.UUID],
                  rng: random.Random) -> list[Seed]:
    """Incremental Fetch frames in fetch sessions the broker opened, (id, version) each, at
    the epoch due and the next two, so that mutations reach the session rules (updates,
    forgotten partitions, stale epochs), not only FETCH_SESSION_ID_NOT_FOUND."""
    filler = RequestFiller(rng, topic_ids)
    out = []
    for session_id, version in sessions:
        for epoch in (1, 2, 3):
            request = filler.request(FETCH, version)
            request.session_id, request.session_epoch = session_id, epoch
            out.append(Seed(FETCH, version, frame(FETCH, version, 0, body(FETCH, version, request))))
    return out
