"""The checked-in message classes are what the generator writes from the declarations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcsim.protocol import typegen
from kcsim.protocol.codecs import codec

if TYPE_CHECKING:
    from pathlib import Path


def test_checked_in_classes_match_the_declarations() -> None:
    assert typegen.stale_files() == [], "regenerate with `make messages`"


def test_check_names_an_edited_file_and_write_restores_it(tmp_path: Path) -> None:
    typegen.write(tmp_path)
    edited = tmp_path / "heartbeat.py"
    edited.write_text(edited.read_text().replace("generation_id: int = 0", "generation_id: int = 1"))
    (tmp_path / "gone.py").write_text("")
    assert typegen.stale_files(tmp_path) == ["gone.py", "heartbeat.py"]
    assert sorted(typegen.write(tmp_path)) == ["gone.py", "heartbeat.py"]
    assert typegen.stale_files(tmp_path) == []


def test_the_codec_decodes_into_the_generated_classes() -> None:
    from kcsim.protocol.messages.offset_commit import OffsetCommitResponse

    c = codec(8, "response")
    msg = OffsetCommitResponse(topics=[OffsetCommitResponse.OffsetCommitResponseTopic(
        name="t", partitions=[OffsetCommitResponse.OffsetCommitResponsePartition(error_code=3)])])
    decoded = c.decode(c.encode(msg, 9), 9)
    assert type(decoded) is OffsetCommitResponse
    assert type(decoded.topics[0].partitions[0]) is OffsetCommitResponse.OffsetCommitResponsePartition
    assert decoded == msg
