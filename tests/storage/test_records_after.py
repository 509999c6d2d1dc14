"""A point in the log (`segment_mark`) and the records appended after it (`records_after`):
what a reader derived from the log needs to catch up after a crash."""

from __future__ import annotations

from kcsim.storage import compact

from .helpers import entry, open_record_log


def test_the_records_after_a_mark_are_those_appended_since(tmp_path):
    with open_record_log(tmp_path, segment_bytes=300) as log:
        log.append([entry("a", i, i) for i in range(3)])  # one batch frame
        log.append([entry("b", 0, 0)])
        mark = log.segment_mark()
        later = [entry("c", i, i) for i in range(4)] + [entry("d", i, i) for i in range(9)]
        for record in later:
            log.append([record])  # rolls into new segments on the way
        assert len(log.segments) > 1
        assert log.records_after(mark) == later
        assert log.records_after(log.segment_mark()) == []


def test_a_mark_in_a_segment_compacted_since_leads_nowhere(tmp_path):
    with open_record_log(tmp_path, segment_bytes=200) as log:
        for i in range(3):
            log.append([entry("a", 0, i)])
        mark = log.segment_mark()
        for i in range(10):
            log.append([entry("a", 0, i)])
        assert not compact(log, tombstone_retention_ms=0).skipped
        assert log.records_after(mark) is None
