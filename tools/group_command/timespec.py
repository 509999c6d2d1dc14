"""The time arguments of --to-datetime and --by-duration, read as Kafka's tool reads them."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_DURATION = re.compile(
    r"(?P<sign>[-+]?)P"
    r"(?:(?P<days>[-+]?\d+)D)?"
    r"(?:T(?:(?P<hours>[-+]?\d+)H)?(?:(?P<minutes>[-+]?\d+)M)?"
    r"(?:(?P<seconds>[-+]?\d+)(?:[.,](?P<fraction>\d{0,9}))?S)?)?",
    re.IGNORECASE,
)


def parse_datetime_ms(text: str) -> int:
    """'YYYY-MM-DDTHH:mm:SS.sss' with an optional zone (Z, +hh, +hhmm, +hh:mm) as epoch ms.

    Without a zone the time is UTC, as in Kafka's Utils.getDateTime.
    """
    date, sep, time_part = text.partition("T")
    if not sep or not date or not time_part:
        raise ValueError(f"'{text}' is not 'YYYY-MM-DDTHH:mm:SS.sss' (ISO 8601 needs a 'T')")
    has_zone = any(c in time_part for c in "+-Zz")
    try:
        parsed = datetime.fromisoformat(text if has_zone else text + "+00:00")
    except ValueError:
        raise ValueError(f"'{text}' is not 'YYYY-MM-DDTHH:mm:SS.sss[zone]'") from None
    return int(parsed.timestamp() * 1000)


def parse_duration(text: str) -> timedelta:
    """An ISO 8601 duration as java.time.Duration.parse reads it: 'PnDTnHnMn.nS'."""
    match = _DURATION.fullmatch(text.strip())
    parts = match.groupdict() if match else {}
    if not match or not any(parts[k] for k in ("days", "hours", "minutes", "seconds")):
        raise ValueError(f"'{text}' is not a duration like 'PnDTnHnMnS' (e.g. PT30M, P1DT2H)")
    if text.upper().endswith("T"):
        raise ValueError(f"'{text}' has a 'T' with no time after it")
    seconds = int(parts["seconds"] or 0)
    fraction = parts["fraction"] or ""
    micros = int((fraction + "000000")[:6]) if fraction else 0
    if seconds < 0 or (parts["seconds"] or "").startswith("-"):
        micros = -micros
    delta = timedelta(days=int(parts["days"] or 0), hours=int(parts["hours"] or 0),
                      minutes=int(parts["minutes"] or 0), seconds=seconds, microseconds=micros)
    return -delta if parts["sign"] == "-" else delta


def now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
