"""docs/kafka-differences.md is the published form of the oracle's allowlist."""

from __future__ import annotations

from .differences import ALLOWED, document
from .kafka import REPO

DOC = REPO / "docs" / "kafka-differences.md"


def test_document_lists_exactly_the_allowlist() -> None:
    """Regenerate with `python -m tests.oracle.differences > docs/kafka-differences.md`."""
    assert DOC.read_text() == document(), (
        "docs/kafka-differences.md is out of date: run "
        "`.venv/bin/python -m tests.oracle.differences > docs/kafka-differences.md`")


def test_every_entry_has_a_reason_and_a_status() -> None:
    keys = [e.key for e in ALLOWED]
    assert len(keys) == len(set(keys)), "allowlist keys must be unique"
    for entry in ALLOWED:
        assert entry.reason.strip() and entry.status.strip(), entry.key
