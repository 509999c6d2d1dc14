"""The event-stream parser on canned bytes: what the HTML standard says a reader sees."""

from __future__ import annotations

import io

import pytest

from kcsim.tools.sse import SseMessage, SseParser, read_stream

STREAM = (b": keep-alive\n\n"
          b"id: 7\ndata: {\"seq\": 7}\n\n"
          b"event: note\r\ndata: line one\r\ndata:line two\r\n\r\n"
          b"retry: 3000\nunknown: x\ndata\n\n"
          b"id: 9\rdata: \xc3\xa9t\xc3\xa9\r\r")
MESSAGES = [SseMessage('{"seq": 7}', "message", "7"),
            SseMessage("line one\nline two", "note", "7"),
            SseMessage("", "message", "7"),
            SseMessage("été", "message", "9")]


def test_messages_of_a_stream_read_at_once() -> None:
    parser = SseParser()
    assert parser.feed(STREAM) == MESSAGES
    assert parser.last_id == "9"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
def test_the_same_messages_whatever_pieces_the_bytes_come_in(size: int) -> None:
    parser = SseParser()
    found = []
    for i in range(0, len(STREAM), size):
        found += parser.feed(STREAM[i:i + size])
    assert found == MESSAGES


def test_a_message_is_complete_only_at_its_blank_line() -> None:
    parser = SseParser()
    assert parser.feed(b"data: a\n") == []
    assert parser.feed(b"data: b\r") == []  # CR LF may be split between reads
    assert parser.feed(b"\n") == []
    assert parser.feed(b"\n") == [SseMessage("a\nb")]


def test_comments_and_blank_messages_dispatch_nothing() -> None:
    assert SseParser().feed(b": keep-alive\n\n\n: another\n\nevent: x\n\n") == []


def test_read_stream_yields_messages_until_the_body_ends() -> None:
    assert list(read_stream(io.BytesIO(STREAM))) == MESSAGES
