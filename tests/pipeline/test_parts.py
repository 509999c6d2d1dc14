"""The pipeline's parts that need no Spark: columns, codecs, the group fold, the command line."""

from __future__ import annotations

import gzip
import struct
import subprocess
import sys

import msgspec
import pytest

from kcsim.pipeline.columns import record_columns
from kcsim.pipeline.group_history import fold
from kcsim.protocol.compression import CompressionError, decompress
from kcsim.server.state.record_types import RECORD_TYPES

DATA = b"kafka records section " * 500


def test_every_field_of_every_record_type_has_a_typed_column() -> None:
    columns = record_columns(RECORD_TYPES)
    names = set(columns.schema.names)
    for t in RECORD_TYPES:
        for part in (t.key, t.value):
            for field in msgspec.structs.fields(part):
                assert field.name in names or f"{t.name}_{field.name}" in names, (t.name, field)
    assert columns.schema.field("members").type.value_type.get_field_index("member_id") >= 0
    assert str(columns.schema.field("offset").type) == "int64"


def test_every_kafka_codec_inflates() -> None:
    import cramjam
    import lz4.frame
    import zstandard

    assert decompress(1, gzip.compress(DATA)) == DATA
    assert decompress(2, bytes(cramjam.snappy.compress_raw(DATA))) == DATA
    assert decompress(3, lz4.frame.compress(DATA)) == DATA
    streamed = zstandard.ZstdCompressor(write_content_size=False).compress(DATA)
    assert decompress(4, streamed) == DATA
    with pytest.raises(CompressionError):
        decompress(3, b"not lz4")


def test_snappy_in_the_java_clients_xerial_framing_inflates() -> None:
    """snappy-java's stream: magic, version, compatible version, then sized raw blocks."""
    import cramjam

    blocks = [DATA[:4000], DATA[4000:]]
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"".join(
        struct.pack(">i", len(c)) + c
        for c in (bytes(cramjam.snappy.compress_raw(b)) for b in blocks))
    assert decompress(2, framed) == DATA


def row(position: int, record_type: str, **fields: object) -> dict[str, object]:
    return {"position": position, "timestamp": position * 1000, "record_type": record_type,
            "tombstone": False, "group": "g", **fields}


def test_a_consumer_groups_epochs_show_who_joined_and_left_and_its_assignment() -> None:
    topic_id = bytes(16)
    history = fold([
        row(0, "topic", group=None, name="orders", topic_id=topic_id),
        row(1, "consumer_group_member", member_id="a"),
        row(2, "consumer_group_metadata", epoch=1),
        row(3, "consumer_group_target_assignment_member", member_id="a",
            topic_partitions=[{"topic_id": topic_id, "partitions": [1, 0]}]),
        row(4, "consumer_group_member", member_id="b"),
        row(5, "consumer_group_metadata", epoch=2),
        row(6, "consumer_group_member", member_id="a", tombstone=True),
        row(7, "consumer_group_metadata", epoch=3),
        row(8, "paused_topic_partitions",
            topics=[{"topic_name": "orders", "partitions": [0, 1]}]),
        row(9, "paused_topic_partitions", topics=[{"topic_name": "orders", "partitions": [1]}]),
        row(10, "consumer_group_member", member_id="b", tombstone=True),
    ], end_ms=20_000)
    epochs = [(g.generation, g.members, g.joined, g.left, g.state) for g in history.generations]
    assert epochs == [(1, ["a"], ["a"], [], "Stable"), (2, ["a", "b"], ["b"], [], "Stable"),
                      (3, ["b"], [], ["a"], "Stable")]
    assert history.generations[0].assignment == [
        {"member": "a", "topic": "orders", "partitions": [0, 1]}]
    assert [g.end_ms for g in history.generations] == [5000, 7000, 20_000]
    assert [(e["event"], e["partition"]) for e in history.pauses] == [
        ("pause", 0), ("pause", 1), ("resume", 0)]
    assert [(a["position"], a["active"]) for a in history.activity] == [(1, True), (10, False)]


def test_a_deleted_classic_group_ends_dead() -> None:
    history = fold([
        row(0, "group_metadata", protocol_type="consumer", generation=1, protocol="range",
            leader="m", members=[{"member_id": "m", "assignment": b""}]),
        row(1, "group_metadata", protocol_type="consumer", generation=2, protocol=None,
            leader=None, members=[]),
        row(2, "group_metadata", tombstone=True),
    ], end_ms=9_000)
    assert [(g.generation, g.state) for g in history.generations] == [
        (1, "Stable"), (2, "Empty"), (2, "Dead")]
    assert history.generations[1].left == ["m"]


def test_serve_does_not_load_spark_but_offers_the_pipeline_command() -> None:
    probe = ("import sys; from kcsim.server.cli import parser; p = parser(); "
             "p.parse_args(['serve']); "
             "print('pyspark' in sys.modules, "
             "'pipeline' in p._subparsers._group_actions[0].choices)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["False", "True"]
