"""The request log: every request a broker answered, newest last, in a bounded ring.

Recording costs one append of a tuple per request (the decoded request and its
response are kept as they are); what tests ask about (group ids, topics, error
names) is derived from them only when they query. Entries are answered
requests: one still waiting for its answer (a long poll, a held request)
appears once it is answered.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING, Any

import msgspec

from .inspect import error_codes_of, groups_of, topics_of
from .names import error_code, error_name

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable

    from .names import ApiNames

# An entry: (seq, plan, correlation id, client id, connection, received ms, answered ms,
#            request, response, fault rule id or 0)
Entry = tuple[int, Any, int, "str | None", int, int, int, Any, Any, int]


class RequestRecord(msgspec.Struct, kw_only=True):
    """One answered request, as plain data."""

    seq: int  # increases by one per request, from 1; never reused
    api: str
    api_key: int  # as on the wire
    version: int
    correlation_id: int
    client_id: str | None
    connection: int  # the connection's number, from 1 in accept order
    received_ms: int  # the broker's clock when it was read
    answered_ms: int  # ... and when its answer was ready
    groups: list[str]
    topics: list[str]
    errors: list[str]  # Kafka error names in the answer, each once, in order
    fault: int | None  # the fault rule that fired on it
    answered: bool  # False: no answer was sent (acks=0, a closed or never-answered request)


class RequestLog:
    """Owned by the broker; appended on its trio thread, queried there too."""

    def __init__(self, size: int, names: ApiNames,
                 topic_name: Callable[[uuid.UUID], str | None]) -> None:
        self.entries: deque[Entry] = deque(maxlen=size)
        self.append = self.entries.append
        self.next_seq = itertools.count(1).__next__
        self._names = names
        self._topic_name = topic_name

    def clear(self) -> None:
        self.entries.clear()

    @property
    def last_seq(self) -> int:
        """The seq of the newest entry (0 when empty)."""
        return self.entries[-1][0] if self.entries else 0

    def query(self, api: Any = None, *, group: str | None = None, client_id: str | None = None,
              version: int | None = None, error: Any = None, connection: int | None = None,
              since: int = 0) -> list[RequestRecord]:
        """Entries after seq `since` that match every filter given, oldest first."""
        keys = None if api is None else set(self._names.keys(api))
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise ValueError(f"version: expected a version number, got {version!r}")
        if isinstance(since, bool) or not isinstance(since, int):
            raise ValueError(f"since: expected a request seq number, got {since!r}")
        wanted_error = None if error is None else error_name(error_code(error))
        out = []
        for entry in list(self.entries):
            seq, plan, _, _, conn, *_ = entry
            if seq <= since:
                continue
            if keys is not None and plan.wire_key not in keys:
                continue
            if version is not None and plan.version != version:
                continue
            if connection is not None and conn != connection:
                continue
            record = self._record(entry)
            if group is not None and group not in record.groups:
                continue
            if client_id is not None and record.client_id != client_id:
                continue
            if wanted_error is not None and wanted_error not in record.errors:
                continue
            out.append(record)
        return out

    def _record(self, entry: Entry) -> RequestRecord:
        seq, plan, correlation_id, client_id, connection, received, answered, request, response, \
            fault = entry
        if isinstance(request, bytes):  # answered from the response cache: decode now
            client_id, request, response = plan.decode_cached(request, response)
        topics = dict.fromkeys(t for t, _ in topics_of(request, self._topic_name) if t)
        return RequestRecord(
            seq=seq, api=plan.name, api_key=plan.wire_key, version=plan.version,
            correlation_id=correlation_id, client_id=client_id, connection=connection,
            received_ms=received, answered_ms=answered, groups=list(groups_of(request)),
            topics=list(topics), errors=[error_name(c) for c in error_codes_of(response)],
            fault=fault or None, answered=response is not None)
