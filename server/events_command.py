"""`kcsim events`: the group events of a running broker, as they happen, or of a data dir.

With `--control URL` it tails the broker's `/events/stream` (the HTTP control API,
server-sent events: kcsim.tools.sse reads them) until the broker ends the stream; the
broker filters. With `--data-dir D` it reads the record log as start-up does (the same
reader, records and fold: `RecordLog.replay` into an `EventHistory`) and prints the
events it holds (the newest `EVENT_SLOTS`), filtered by the history's own query; a
server may be running on D meanwhile, nothing is changed. One line per event, readable
by default, or `--json`: the `event_fields` object, as the event-log file has it.

Bad filters (a kind or group type kcsim does not have, a negative `--since`) exit 2
naming the option; a broker or data dir that cannot be read exits 1.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

URL_ENV = "KCSIM_CONTROL_URL"
FAILED = 1
STREAM_TIMEOUT_S = 60.0  # the broker sends a keep-alive every 15 s

DESCRIPTION = (
    "Print the group events of a running broker as they happen (--control URL: its HTTP "
    f"control API, or ${URL_ENV}), or those a data directory holds (--data-dir D), one "
    "line each: time, seq, group and type, kind, cause, member and detail; --json prints "
    "each event's JSON object instead. Filters: --group, --kind, --type, --since.")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("events", help="tail a broker's group events, or read a data dir's",
                       description=DESCRIPTION)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--control", metavar="URL",
                        help=f"the broker's HTTP control API (default: ${URL_ENV})")
    source.add_argument("--data-dir", metavar="D", help="read the events of this data directory")
    p.add_argument("--group", help="only events of this group (or transactional id)")
    p.add_argument("--kind", help="only events of this kind (member-joined, member-left, ...)")
    p.add_argument("--type", dest="group_type", metavar="TYPE",
                   help="only events of groups of this type (classic, consumer, ...)")
    p.add_argument("--since", type=int, default=0, metavar="SEQ",
                   help="only events numbered SEQ or later")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(run=run, parser=p)


def run(args: argparse.Namespace) -> int:
    from kcsim.coordinator.shared.events import GROUP_TYPES, KINDS

    parser: argparse.ArgumentParser = args.parser
    for option, value, words in (("--kind", args.kind, KINDS),
                                 ("--type", args.group_type, GROUP_TYPES)):
        if value is not None and value not in words:
            parser.error(f"argument {option}: unknown {option[2:]} {value!r} "
                         f"(one of: {', '.join(words)})")
    if args.since < 0:
        parser.error(f"argument --since: {args.since} is not an event's number")
    url = args.control or (None if args.data_dir else os.environ.get(URL_ENV))
    if url is None and args.data_dir is None:
        parser.error(f"give --control URL (or ${URL_ENV}) or --data-dir D")
    show = _as_json if args.json else describe
    try:
        events = (logged_events(args) if args.data_dir is not None
                  else streamed_events(url or "", args))
        for event in events:
            print(show(event), flush=True)
    except _Refused as exc:
        parser.error(str(exc))
    except (OSError, ValueError) as exc:
        print(f"kcsim events: {exc}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:
        pass
    return 0


def logged_events(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The matching events of a data dir's record log, oldest first."""
    from kcsim.coordinator.records import GroupEventKey
    from kcsim.coordinator.shared.events import EventHistory, event_fields
    from kcsim.storage import RecordLog, StorageError

    from .durability import RECORD_TYPES

    directory = os.path.join(args.data_dir, "meta")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{args.data_dir} holds no kcsim record log (no meta/)")
    history = EventHistory()
    try:
        with RecordLog.open(directory, types=RECORD_TYPES, read_only=True) as log:
            for record in log.replay():
                if type(record.key) is GroupEventKey:
                    history.apply(record)
    except StorageError as exc:
        raise OSError(str(exc)) from exc
    found = history.query(group=args.group, kind=args.kind, group_type=args.group_type,
                          since=args.since)
    return (event_fields(event) for event in found)


class _Refused(Exception):
    """The broker refused a filter (400): said as argparse says a bad option."""


def streamed_events(url: str, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The broker's matching events as it streams them, until it ends the stream."""
    from kcsim.tools.sse import read_stream

    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"expected a URL like http://127.0.0.1:9644, got {url!r}")
    query = {"group": args.group, "kind": args.kind, "type": args.group_type,
             "since": args.since or None}
    given = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
    request = urllib.request.Request(
        url.rstrip("/") + "/events/stream" + ("?" + given if given else ""),
        headers={"accept": "text/event-stream"})
    try:
        response = urllib.request.urlopen(request, timeout=STREAM_TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        raise _refusal(exc) from None
    except urllib.error.URLError as exc:
        raise OSError(f"cannot reach the control API at {url}: {exc.reason}") from None
    with response:
        for message in read_stream(response):
            yield json.loads(message.data)


def _refusal(exc: urllib.error.HTTPError) -> Exception:
    try:
        body = json.loads(exc.read())
    except ValueError:
        body = {}
    error = body.get("error", exc.reason) if isinstance(body, dict) else exc.reason
    field = body.get("field") if isinstance(body, dict) else None
    if exc.code == 400 and field:
        return _Refused(f"argument --{field}: {error}")
    return OSError(f"the control API answered HTTP {exc.code}: {error}")


def _as_json(event: dict[str, Any]) -> str:
    import msgspec

    return msgspec.json.encode(event).decode()


def describe(event: dict[str, Any]) -> str:
    """`2026-11-27 13:31:05.123  #7  billing (classic)  member-left  session-timeout
    member m-1  generation=3`: what a person reads in a terminal."""
    when = datetime.fromtimestamp(event["time_ms"] / 1000, UTC)
    parts = [when.strftime("%Y-%m-%d %H:%M:%S.") + f"{event['time_ms'] % 1000:03d}",
             f"#{event['seq']}", f"{event['group']} ({event['group_type']})", event["kind"]]
    if event["cause"]:
        parts.append(event["cause"])
    if event["member"]:
        parts.append(f"member {event['member']}")
    detail = " ".join(f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}"
                      for k, v in event["detail"].items())
    if detail:
        parts.append(detail)
    return "  ".join(parts)
