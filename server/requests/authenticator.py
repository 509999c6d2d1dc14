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

Re-authentication (KIP-368): where a session expires (`--connections-max-reauth-ms`, or a
credential that expires, an OAUTHBEARER token's `exp`), the authenticated connection is
served through its `Session`, which closes it at its first request after the expiry, as
Kafka's SocketServer does, and takes a SaslHandshake as the start of a re-authentication
(at most one a second): a new `Authenticator` for the previous mechanism and principal
answers it and the SaslAuthenticate requests after it, and the session is renewed once it
completes. Changing mechanism or principal fails it, in Kafka's words.
"""

from __future__ import annotations

import enum
import logging
import struct
from typing import TYPE_CHECKING, NamedTuple

import trio

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

    from kcsim.protocol.oauthbearer import ValidatorOptions

    from ..state.scram_credentials import ScramCredentials
    from .context import Peer
    from .dispatcher import Dispatcher
    from .plans import Plan
    from .reply import Answer

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
    BAD_MECHANISM = "re-authentication with another mechanism"  # Kafka's REAUTH_BAD_MECHANISM


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
    State.BAD_MECHANISM: {},
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
    # Kafka fails the frame after the handshake, whatever it is, without an answer.
    State.BAD_MECHANISM: {None: Refusal(False, Close.AFTER_DELAY, "SASL mechanism '{wanted}' "
                                        "requested by client is not supported for "
                                        "re-authentication of mechanism '{mechanism}'")},
}


class Step(NamedTuple):
    """What to do with one frame's answer."""

    answer: bytes | bytearray | None  # size-prefixed; None: nothing to send
    close: Close | None = None  # None: the exchange goes on (or has completed)
    reason: str = ""  # why it closes, for one log line


def failed_message(mechanism: str, reauthenticating: bool = False) -> str:
    """Kafka's answer to a failure it does not explain (unknown user, wrong proof)."""
    during = "re-authentication" if reauthenticating else "authentication"
    return (f"Authentication failed during {during} due to invalid credentials with "
            f"SASL mechanism {mechanism}")


class Previous(NamedTuple):
    """What a re-authentication must keep: the mechanism and the principal."""

    mechanism: str
    principal: str


class Authenticator:
    """One connection's SASL exchange (see the module's doc)."""

    def __init__(self, dispatcher: Dispatcher, peer: Peer, enabled: Sequence[str],
                 plain_users: Mapping[str, str], credentials: ScramCredentials,
                 oauth: ValidatorOptions, max_reauth_ms: int = 0,
                 previous: Previous | None = None) -> None:
        self._dispatcher = dispatcher
        self._peer = peer
        self.enabled = list(enabled)
        self._plain_users = plain_users
        self._credentials = credentials
        self._oauth = oauth
        self._max_reauth_ms = max_reauth_ms  # 0: sessions last as long as their credential
        self._previous = previous  # set when re-authenticating
        # A re-authentication starts with the SaslHandshake, as Kafka's REAUTH_PROCESS_HANDSHAKE.
        self.state = State.INITIAL if previous is None else State.HANDSHAKE
        self.mechanism_name = ""
        self._mechanism: sasl_mechanisms.Mechanism | None = None
        self._bad_mechanism = ""
        self.principal: str | None = None  # `User:name` once COMPLETE
        self.session_lifetime_ms = 0  # as the last SaslAuthenticate answer says it
        self.session_expires_ms: int | None = None  # on the broker's clock; None: never

    def receive(self, frame: bytes, now_ms: int) -> Step:
        state = self.state
        if state is State.TOKENS:
            return self._token(frame, now_ms)
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
        reason = refusal.reason.format(event=name, wanted=self._bad_mechanism,
                                       mechanism=self.mechanism_name)
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
        previous = self._previous
        if previous is not None and mechanism != previous.mechanism:
            self.state, self._bad_mechanism = State.BAD_MECHANISM, mechanism
            self.mechanism_name = previous.mechanism
            return Step(answer)
        self.mechanism_name = mechanism
        self._mechanism = sasl_mechanisms.start(mechanism, self._plain_users,
                                                self._credentials, self._oauth)
        self.state = after
        return Step(answer)

    def _authenticate(self, plan: Plan, correlation_id: int, client_id: str | None,
                      request: object, now_ms: int) -> Step:
        token = getattr(request, "auth_bytes", b"")
        try:
            out = self._evaluate(token, now_ms)
        except Failed as exc:
            if not exc.answered:
                return Step(None, Close.AT_ONCE, self._failed(exc))
            response = SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=exc.client_message or failed_message(
                    self.mechanism_name, self._previous is not None))
            step = Step(None, Close.AFTER_DELAY, self._failed(exc))
        else:
            response = SaslAuthenticateResponse(auth_bytes=out,
                                                session_lifetime_ms=self.session_lifetime_ms)
            step = Step(None)
        answer = self._dispatcher.encode_response(plan, correlation_id, response)
        # The log keeps no token (a PLAIN token holds the password): only who sent it.
        self._dispatcher.log_answered(plan, correlation_id, self._peer.id, now_ms,
                                      RequestDigest(client_id, (), ()), answer)
        return step._replace(answer=answer)

    def _token(self, token: bytes, now_ms: int) -> Step:
        """A token of the legacy flow: answered by the mechanism's token, unframed."""
        try:
            out = self._evaluate(token, now_ms)
        except Failed as exc:
            return Step(None, Close.AFTER_DELAY if exc.answered else Close.AT_ONCE,
                        self._failed(exc))
        return Step(_SIZE.pack(len(out)) + out)

    def _failed(self, exc: Failed) -> str:
        during = "re-authentication" if self._previous is not None else "authentication"
        return f"SASL/{self.mechanism_name} {during} failed: {exc}"

    def _evaluate(self, token: bytes, now_ms: int) -> bytes:
        mechanism = self._mechanism
        assert mechanism is not None
        try:
            out = mechanism.step(token, now_ms)
            if mechanism.complete:
                self._complete(mechanism, now_ms)
        except Failed:
            self.state = State.FAILED
            raise
        return out

    def _complete(self, mechanism: sasl_mechanisms.Mechanism, now_ms: int) -> None:
        """The mechanism is done: the principal (the previous one, if re-authenticating) and
        how long the session lasts, as Kafka's ReauthInfo works it out."""
        principal = f"User:{mechanism.user}"
        previous = self._previous
        if previous is not None and principal != previous.principal:
            raise Failed(f"principal {principal} is not {previous.principal}",
                         "Cannot change principals during re-authentication from "
                         f"{_dotted(previous.principal)}: {_dotted(principal)}")
        self.state = State.COMPLETE
        self.principal = principal
        credential_ms, max_reauth_ms = mechanism.lifetime_ms, self._max_reauth_ms
        if credential_ms is None and not max_reauth_ms:
            return
        lifetime = (max_reauth_ms if credential_ms is None
                    else credential_ms - now_ms if not max_reauth_ms
                    else min(credential_ms - now_ms, max_reauth_ms))
        self.session_lifetime_ms = max(lifetime, 0)
        self.session_expires_ms = now_ms + self.session_lifetime_ms



def _dotted(principal: str) -> str:
    """`User:alice` as Kafka's message writes it: `User.alice`."""
    kind, _, name = principal.partition(":")
    return f"{kind}.{name}"


def start(dispatcher: Dispatcher, peer: Peer, previous: Previous | None = None) -> Authenticator:
    """The SASL exchange of a new connection on a SASL listener (or, with `previous`, of
    an authenticated one re-authenticating): it answers the connection's frames until it
    has authenticated."""
    return Authenticator(dispatcher, peer, dispatcher.sasl_mechanisms,
                         dispatcher.sasl_plain_users, dispatcher.state.scram_credentials,
                         dispatcher.oauthbearer_options, dispatcher.config.connections_max_reauth_ms,
                         previous)


class Session:
    """An authenticated connection whose session expires: its frames go through `process`
    (see the module's doc), the rest to the dispatcher."""

    def __init__(self, dispatcher: Dispatcher, authenticator: Authenticator) -> None:
        assert authenticator.principal is not None and authenticator.session_expires_ms is not None
        self._dispatcher = dispatcher
        self._previous = Previous(authenticator.mechanism_name, authenticator.principal)
        self.expires_ms = authenticator.session_expires_ms
        self._reauth: Authenticator | None = None
        self._started_ms: int | None = None  # when the last re-authentication began
        self._delay_s = dispatcher.config.connection_failed_authentication_delay_ms / 1000

    def process(self, frame: bytes | memoryview, peer: Peer, now_ms: int) -> Answer:
        reauth = self._reauth
        if reauth is not None:
            return self._reauthenticating(reauth, frame, peer, now_ms)
        if (len(frame) >= 2 and frame[0] == 0 and frame[1] == SASL_HANDSHAKE_KEY
                and (self._started_ms is None or now_ms - self._started_ms >= _MIN_REAUTH_MS)):
            self._started_ms = now_ms
            self._reauth = start(self._dispatcher, peer, self._previous)
            return self._reauthenticating(self._reauth, frame, peer, now_ms)
        if now_ms > self.expires_ms:
            log.info("closing connection %d from %s: its SASL session (%s) expired %d ms ago",
                     peer.id, peer.host, self._previous.principal, now_ms - self.expires_ms)
            return Reply(None, close=True)
        return self._dispatcher.process(frame, peer, now_ms)

    def _reauthenticating(self, reauth: Authenticator, frame: bytes | memoryview, peer: Peer,
                          now_ms: int) -> Answer:
        step = reauth.receive(bytes(frame), now_ms)
        if step.close is not None:
            log.info("closing connection %d from %s on SASL listener %s: %s", peer.id, peer.host,
                     peer.listener.name, step.reason)
            if step.close is Close.AFTER_DELAY and self._delay_s:
                return Reply(None, pending=self._after_delay(step.answer))
            return Reply(step.answer, close=True)
        if reauth.state is State.COMPLETE:
            self._reauth = None
            # Re-authenticating keeps an expiry: the setting, or the credential's, is still there.
            assert reauth.session_expires_ms is not None
            self.expires_ms = reauth.session_expires_ms
            log.debug("connection %d from %s re-authenticated as %s, session for %d ms", peer.id,
                      peer.host, reauth.principal, reauth.session_lifetime_ms)
        return step.answer

    async def _after_delay(self, answer: bytes | bytearray | None) -> Answer:
        """As Kafka ends a connection that failed to authenticate: after the delay (real
        time), the answer, if any, then the close."""
        await trio.sleep(self._delay_s)
        return Reply(answer, close=True)


_MIN_REAUTH_MS = 1000  # Kafka's KafkaChannel: a re-authentication at most once a second
