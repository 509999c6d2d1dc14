"""The request log: every request a broker answered, newest last, in a bounded ring.

Recording a request costs one append of a small tuple: its frame and its
answer's frame, as bytes (a copy of the request; the answer is the frame being
sent). Nothing is decoded then: what tests ask about (client id, groups,
topics, error names) is decoded when they query, once per entry. A frame
larger than LOG_KEEPS is not kept: what tests ask of it is taken at once
instead (a RequestDigest, or the answer's error codes), so the log's memory
stays bounded by its size times LOG_KEEPS.

Entries are answered requests: one still waiting for its answer (a long poll, a
held request) appears once it is answered.

Each entry names its connection; the principal of a connection that
authenticated someone (a TLS client certificate) is kept beside the entries,
from its start (`connected`) until it is closed and no entry names it any more.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from kcsim.protocol.named_groups import groups_of

from ..tls import ANONYMOUS
from .fields import error_codes_of, fetch_session_of, topics_of
from .names import error_code, error_name

if TYPE_CHECKING:
    import uuid
    from collections.abc import Callable

    from .names import ApiNames

LOG_KEEPS = 4096  # bytes of a request or answer frame the log keeps

# An entry: (seq, plan, correlation id, connection, received ms, answered ms,
#            request frame or RequestDigest, answer frame or error codes or None, fault id or 0)
Entry = tuple[int, Any, int, int, int, int, Any, Any, int]


class RequestDigest(NamedTuple):
    """What the log keeps of a request too large to keep whole."""

    client_id: str | None
    groups: tuple[str, ...]
    topics: tuple[str, ...]
    session: tuple[int, int] | None = None  # a Fetch's session id and epoch


class RequestRecord(msgspec.Struct, kw_only=True):
    """One answered request, as plain data."""

    seq: int  # increases by one per answered request, from 1; never reused
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
    answered: bool  # False: no answer was sent (acks=0, closed or never answered)
    # Fetch: the fetch session (KIP-227) the request named, as sent (None for other APIs)
    session_id: int | None = None
    session_epoch: int | None = None
    principal: str = ANONYMOUS  # who the connection authenticated as (Kafka's principal)


class RequestLog:
    """Owned by the broker; appended on its trio thread, queried there too."""

    def __init__(self, size: int, names: ApiNames,
                 topic_name: Callable[[uuid.UUID], str | None]) -> None:
        self.entries: deque[Entry] = deque(maxlen=size)
        self.append = self.entries.append
        self.next_seq = itertools.count(1).__next__
        self._names = names
        self._topic_name = topic_name
        self._records: dict[int, RequestRecord] = {}  # decoded entries, by seq
        # By connection, those not anonymous: the principal, and the first seq it holds for
        # (a SASL connection's requests before it authenticated are anonymous).
        self._principals: dict[int, tuple[str, int]] = {}
        self._closed: set[int] = set()  # connections of _principals closed since

    def clear(self) -> None:
        self.entries.clear()
        self._records.clear()

    def connected(self, connection: int, principal: str) -> None:
        """A connection authenticated as `principal`: its entries from now on say so."""
        self._principals[connection] = (principal, self.last_seq + 1)

    def disconnected(self, connection: int) -> None:
        """A connection closed: its principal is kept while an entry names it."""
        if connection not in self._principals:
            return
        self._closed.add(connection)
        if len(self._closed) > 2 * max(len(self.entries), 32):
            named = {entry[3] for entry in self.entries}
            for gone in self._closed - named:
                del self._principals[gone]
            self._closed &= named

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
        for entry in self._after(since):
            seq, plan, _, conn, *_ = entry
            if keys is not None and plan.wire_key not in keys:
                continue
            if version is not None and plan.version != version:
                continue
            if connection is not None and conn != connection:
                continue
            record = self._records.get(seq)
            if record is None:
                record = self._records[seq] = self._record(entry)
            if group is not None and group not in record.groups:
                continue
            if client_id is not None and record.client_id != client_id:
                continue
            if wanted_error is not None and wanted_error not in record.errors:
                continue
            out.append(record)
        self._forget_dropped()
        return out

    def _after(self, since: int) -> list[Entry]:
        entries = self.entries
        if not entries or entries[-1][0] <= since:
            return []
        skip = max(0, since - entries[0][0] + 1)  # seqs are consecutive within the ring
        return list(itertools.islice(entries, skip, None))

    def _forget_dropped(self) -> None:
        if len(self._records) > 2 * max(len(self.entries), 1):
            oldest = self.entries[0][0] if self.entries else self.last_seq + 1
            self._records = {s: r for s, r in self._records.items() if s >= oldest}

    def _record(self, entry: Entry) -> RequestRecord:
        seq, plan, correlation_id, connection, received, answered, request, response, fault = entry
        if isinstance(request, RequestDigest):
            client_id, groups, topics, session = request
        else:
            client_id, decoded = plan.read_request(request)
            groups = groups_of(decoded)
            topics = tuple(dict.fromkeys(t for t, _ in topics_of(decoded, self._topic_name) if t))
            session = fetch_session_of(decoded)
        if response is None:
            codes: tuple[int, ...] = ()
        elif isinstance(response, tuple):
            codes = response
        else:
            codes = error_codes_of(plan.read_response(response))
        return RequestRecord(
            seq=seq, api=plan.name, api_key=plan.wire_key, version=plan.version,
            correlation_id=correlation_id, client_id=client_id, connection=connection,
            received_ms=received, answered_ms=answered, groups=list(groups),
            topics=list(topics), errors=[error_name(c) for c in codes],
            fault=fault or None, answered=response is not None,
            session_id=None if session is None else session[0],
            session_epoch=None if session is None else session[1],
            principal=_principal(self._principals.get(connection), seq))


def _principal(known: tuple[str, int] | None, seq: int) -> str:
    return ANONYMOUS if known is None or seq < known[1] else known[0]
