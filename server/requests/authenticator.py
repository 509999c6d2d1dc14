"""The SASL authenticator: what a connection on a SASL listener may send before it has
authenticated, and how each frame is answered, as Kafka's SaslServerAuthenticator.

I/O-free: `Authenticator.receive(frame, now_ms)` takes one frame (size prefix excluded) and
returns a `Step`: the answer to send (a size-prefixed frame, or None) and whether the
connection then closes, at once or after Kafka's failed-authentication delay. Once
`principal` is set the connection is authenticated and its frames go to the dispatcher.

The rules are data. A frame is first classified into an `Event` (which API it is, a raw
token, or not a Kafka request at all); `ACCEPTS[state]` says which events a state takes
and the state after; `REFUSED[state]` how it refuses any other: with an error answer or
none, and whether the close waits out the delay (Kafka's AuthenticationExceptions do,
other failures close at once). The flow, as Kafka's:

    INITIAL --ApiVersions--> HANDSHAKE --SaslHandshake v1--> AUTHENTICATE --(mechanism done)--> COMPLETE
       \\------------SaslHandshake v1-----------/      \\--SaslHandshake v0--> TOKENS --(done)--> COMPLETE

SaslHandshake v0 is Kafka's legacy flow, still served by Kafka 4.4: the mechanism's tokens
then go unframed (each a size-prefixed token, answered the same way) instead of in
SaslAuthenticate requests. An ApiVersions of a version not served is answered (v0,
UNSUPPORTED_VERSION) and leaves the state as it was, so the client can try again.
"""

from __future__ import annotations

import enum
import logging
import struct
from typing import TYPE_CHECKING, NamedTuple

from kcsim.protocol.codecs import response_class
from kcsim.protocol.error_answers import NoErrorAnswer, error_answer
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.headers import API_VERSIONS_KEY, read_client_id
from kcsim.protocol.primitives import DecodeError

from ..control.request_log import RequestDigest
from . import sasl_mechanisms
from .dispatcher import ProtocolViolation
from .reply import Reply
from .sasl_mechanisms import Failed

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..state.scram_credentials import ScramCredentials
    from .context import Peer
    from .dispatcher import Dispatcher
    from .plans import Plan

log = logging.getLogger("kcsim.server")

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
_HEAD = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
SaslHandshakeResponse = response_class(SASL_HANDSHAKE_KEY)
SaslAuthenticateResponse = response_class(SASL_AUTHENTICATE_KEY)


class State(enum.Enum):
    INITIAL = "initial"  # nothing received yet
    HANDSHAKE_OR_VERSIONS = "handshake or versions"  # an ApiVersions of an unserved version was
    HANDSHAKE = "handshake"  # after ApiVersions: SaslHandshake next
    AUTHENTICATE = "authenticate"  # SaslAuthenticate requests carry the mechanism's tokens
    TOKENS = "tokens"  # SaslHandshake v0: the tokens come unframed
    COMPLETE = "complete"
    FAILED = "failed"


class Event(enum.Enum):
    API_VERSIONS = "ApiVersions"
    HANDSHAKE = "SaslHandshake v1"
    HANDSHAKE_V0 = "SaslHandshake v0"
    AUTHENTICATE = "SaslAuthenticate"
    OTHER = "another request"
    TOKEN = "a token"
    GARBAGE = "not a Kafka request"


class Close(enum.Enum):
    AT_ONCE = "at once"
    AFTER_DELAY = "after the failed-authentication delay"


class Refusal(NamedTuple):
    """How a state refuses an event it does not take."""

    answer: bool  # with the request's error answer (ILLEGAL_SASL_STATE), or none
    close: Close
    reason: str  # for the log line; {event} is the event's name


_HANDSHAKING = {Event.API_VERSIONS: State.HANDSHAKE, Event.HANDSHAKE: State.AUTHENTICATE,
                Event.HANDSHAKE_V0: State.TOKENS}
# Which events each state takes, and the state after (a mechanism that completes goes to
# COMPLETE, one that fails to FAILED, whatever this says).
ACCEPTS: dict[State, dict[Event, State]] = {
    State.INITIAL: _HANDSHAKING,
    State.HANDSHAKE_OR_VERSIONS: _HANDSHAKING,
    State.HANDSHAKE: {Event.HANDSHAKE: State.AUTHENTICATE, Event.HANDSHAKE_V0: State.TOKENS},
    State.AUTHENTICATE: {Event.AUTHENTICATE: State.AUTHENTICATE},
    State.TOKENS: {Event.TOKEN: State.TOKENS},
    State.COMPLETE: {},
    State.FAILED: {},
}
_UNEXPECTED = Refusal(False, Close.AFTER_DELAY, "unexpected {event} during SASL handshake")
_MALFORMED = Refusal(False, Close.AT_ONCE, "malformed request during SASL authentication")
# How each state refuses an event it does not take (None: any event not listed).
REFUSED: dict[State, dict[Event | None, Refusal]] = {
    # Kafka would fall back to GSSAPI for a first frame that is not a Kafka request; with
    # GSSAPI not enabled that is an unsupported mechanism.
    State.INITIAL: {Event.GARBAGE: Refusal(False, Close.AFTER_DELAY, "first frame is not a "
                                           "Kafka request, and GSSAPI is not enabled"),
                    None: _UNEXPECTED},
    State.HANDSHAKE_OR_VERSIONS: {Event.GARBAGE: _MALFORMED, None: _UNEXPECTED},
    State.HANDSHAKE: {Event.GARBAGE: _MALFORMED,
                      Event.API_VERSIONS: Refusal(False, Close.AT_ONCE,
                                                  "a second ApiVersions during SASL handshake"),
                      None: _UNEXPECTED},
    State.AUTHENTICATE: {Event.GARBAGE: _MALFORMED,
                         None: Refusal(True, Close.AFTER_DELAY,
                                       "unexpected {event} during SASL authentication")},
    State.TOKENS: {None: _MALFORMED},
    State.COMPLETE: {None: _MALFORMED},
    State.FAILED: {None: _MALFORMED},
}


class Step(NamedTuple):
    """What to do with one frame's answer."""

    answer: bytes | bytearray | None  # size-prefixed; None: nothing to send
    close: Close | None = None  # None: the exchange goes on (or has completed)
    reason: str = ""  # why it closes, for one log line


def failed_message(mechanism: str) -> str:
    """Kafka's answer to a failure it does not explain (unknown user, wrong proof)."""
    return ("Authentication failed during authentication due to invalid credentials with "
            f"SASL mechanism {mechanism}")


class Authenticator:
    """One connection's SASL exchange (see the module's doc)."""

    def __init__(self, dispatcher: Dispatcher, peer: Peer, enabled: Sequence[str],
                 plain_users: Mapping[str, str], credentials: ScramCredentials) -> None:
        self._dispatcher = dispatcher
        self._peer = peer
        self.enabled = list(enabled)
        self._plain_users = plain_users
        self._credentials = credentials
        self.state = State.INITIAL
        self.mechanism_name = ""
        self._mechanism: sasl_mechanisms.Mechanism | None = None
        self.principal: str | None = None  # `User:name` once COMPLETE

    def receive(self, frame: bytes, now_ms: int) -> Step:
        state = self.state
        if state is State.TOKENS:
            return self._token(frame)
        event, version, plan = self._classify(frame)
        after = ACCEPTS[state].get(event)
        if after is None:
            return self._refuse(event, frame, plan, version, now_ms)
        if event is Event.API_VERSIONS:
            try:
                answer = self._dispatcher.process(frame, self._peer, now_ms)
            except ProtocolViolation as exc:
                self.state = State.FAILED
                return Step(None, Close.AT_ONCE, str(exc))
            if isinstance(answer, Reply):  # a fault rule's: its frame, nothing that waits
                answer = answer.frame if isinstance(answer.frame, (bytes, bytearray)) else None
            if self._dispatcher.plan(API_VERSIONS_KEY, version) is not None:
                self.state = after
            elif state is State.INITIAL:
                self.state = State.HANDSHAKE_OR_VERSIONS
            return Step(answer)
        if plan is None:  # SaslHandshake or SaslAuthenticate of a version not served
            self.state = State.FAILED
            return Step(None, Close.AT_ONCE, f"{event.value} v{version} is not served")
        try:
            client_id, pos = read_client_id(frame, plan.header_version)
            request, _ = plan.decode(frame, pos)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError):
            self.state = State.FAILED
            return Step(None, Close.AT_ONCE, f"malformed {plan.name} v{version} request")
        correlation_id = _HEAD.unpack_from(frame, 0)[2]
        if event is Event.AUTHENTICATE:
            return self._authenticate(plan, correlation_id, client_id, request, now_ms)
        return self._handshake(plan, correlation_id, frame, request, after, now_ms)

    # -- frames into events ---------------------------------------------------

    def _classify(self, frame: bytes) -> tuple[Event, int, Plan | None]:
        """The frame's event, version and plan (None where it is none of the served APIs)."""
        if len(frame) < 8:
            return Event.GARBAGE, 0, None
        api_key, version, _ = _HEAD.unpack_from(frame, 0)
        if api_key == API_VERSIONS_KEY:
            return Event.API_VERSIONS, version, None
        if api_key not in self._dispatcher.routes:
            return Event.GARBAGE, version, None
        plan = self._dispatcher.plan(api_key, version)
        if api_key == SASL_HANDSHAKE_KEY:
            return (Event.HANDSHAKE_V0 if version == 0 else Event.HANDSHAKE), version, plan
        if api_key == SASL_AUTHENTICATE_KEY:
            return Event.AUTHENTICATE, version, plan
        return Event.OTHER, version, plan

    def _refuse(self, event: Event, frame: bytes, plan: Plan | None, version: int,
                now_ms: int) -> Step:
        rules = REFUSED[self.state]
        refusal = rules.get(event) or rules[None]
        name = plan.name if plan is not None else event.value
        reason = refusal.reason.format(event=name)
        self.state = State.FAILED
        if not refusal.answer or plan is None:
            return Step(None, refusal.close, reason)
        try:
            _, pos = read_client_id(frame, plan.header_version)
            request, _ = plan.decode(frame, pos)
            response = error_answer(plan.route.api_key, version, request,
                                    ErrorCode.ILLEGAL_SASL_STATE)
        except (DecodeError, struct.error, IndexError, ValueError, UnicodeDecodeError):
            return Step(None, Close.AT_ONCE, f"malformed {plan.name} v{version} request")
        except NoErrorAnswer:
            return Step(None, refusal.close, reason)
        correlation_id = _HEAD.unpack_from(frame, 0)[2]
        answer = self._dispatcher.encode_response(plan, correlation_id, response)
        self._dispatcher.log_answered(plan, correlation_id, self._peer.id, now_ms,
                                      bytes(frame), answer)
        return Step(answer, refusal.close, reason)

    # -- the handshake and the tokens ---------------------------------------------

    def _handshake(self, plan: Plan, correlation_id: int, frame: bytes, request: object,
                   after: State, now_ms: int) -> Step:
        mechanism = getattr(request, "mechanism", "")
        known = mechanism in self.enabled
        response = SaslHandshakeResponse(
            error_code=0 if known else ErrorCode.UNSUPPORTED_SASL_MECHANISM,
            mechanisms=self.enabled)
        answer = self._dispatcher.encode_response(plan, correlation_id, response)
        self._dispatcher.log_answered(plan, correlation_id, self._peer.id, now_ms,
                                      bytes(frame), answer)
        if not known:
            self.state = State.FAILED
            return Step(answer, Close.AFTER_DELAY, f"unsupported SASL mechanism {mechanism!r}")
        self.mechanism_name = mechanism
        self._mechanism = sasl_mechanisms.start(mechanism, self._plain_users,
                                                self._credentials)
        self.state = after
        return Step(answer)

    def _authenticate(self, plan: Plan, correlation_id: int, client_id: str | None,
                      request: object, now_ms: int) -> Step:
        token = getattr(request, "auth_bytes", b"")
        try:
            out = self._evaluate(token)
        except Failed as exc:
            response = SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=exc.client_message or failed_message(self.mechanism_name))
            step = Step(None, Close.AFTER_DELAY, f"SASL/{self.mechanism_name} authentication "
                        f"failed: {exc}")
        else:
            response = SaslAuthenticateResponse(auth_bytes=out)
            step = Step(None)
        answer = self._dispatcher.encode_response(plan, correlation_id, response)
        # The log keeps no token (a PLAIN token holds the password): only who sent it.
        self._dispatcher.log_answered(plan, correlation_id, self._peer.id, now_ms,
                                      RequestDigest(client_id, (), ()), answer)
        return step._replace(answer=answer)

    def _token(self, token: bytes) -> Step:
        """A token of the legacy flow: answered by the mechanism's token, unframed."""
        try:
            out = self._evaluate(token)
        except Failed as exc:
            return Step(None, Close.AFTER_DELAY,
                        f"SASL/{self.mechanism_name} authentication failed: {exc}")
        return Step(_SIZE.pack(len(out)) + out)

    def _evaluate(self, token: bytes) -> bytes:
        mechanism = self._mechanism
        assert mechanism is not None
        try:
            out = mechanism.step(token)
        except Failed:
            self.state = State.FAILED
            raise
        if mechanism.complete:
            self.state = State.COMPLETE
            self.principal = f"User:{mechanism.user}"
        return out


def start(dispatcher: Dispatcher, peer: Peer) -> Authenticator:
    """The SASL exchange of a new connection on a SASL listener: it answers the
    connection's frames until it has authenticated."""
    return Authenticator(dispatcher, peer, dispatcher.sasl_mechanisms,
                         dispatcher.sasl_plain_users, dispatcher.state.scram_credentials)
