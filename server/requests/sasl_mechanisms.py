"""The SASL mechanisms a SASL listener serves, behind one small interface: `step` a
client token, get the server's token back, until `complete` names the `user`.

PLAIN checks a user and password against `--sasl-plain-users` (Kafka's PlainLoginModule
with its JAAS `user_NAME="PASSWORD"` options); SCRAM-SHA-256 and SCRAM-SHA-512 against the
broker's SCRAM credentials (records, managed with AlterUserScramCredentials); OAUTHBEARER
takes unsecured JWTs as Kafka's default validator does (protocol/oauthbearer.py), on the
broker's clock, and its token's `exp` bounds the session (`lifetime_ms`). A failure is
`Failed`, with Kafka's words for the client where Kafka has some (`client_message`), and
otherwise Kafka's generic "invalid credentials" message, which says nothing of the reason;
`answered` False where Kafka closes the connection without an answer.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING, Protocol

from kcsim.protocol.oauthbearer import OAuthBearerServer, OAuthFailed, OAuthUnanswered
from kcsim.protocol.scram import MECHANISMS as SCRAM_MECHANISMS
from kcsim.protocol.scram import ScramFailed, ScramServer

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kcsim.protocol.oauthbearer import ValidatorOptions

    from ..state.scram_credentials import ScramCredentials


class Failed(Exception):
    """Authentication failed; `client_message`: Kafka's message for it, if not the generic one."""

    def __init__(self, reason: str, client_message: str | None = None, *,
                 answered: bool = True) -> None:
        super().__init__(reason)
        self.client_message = client_message
        self.answered = answered


class Mechanism(Protocol):
    @property
    def complete(self) -> bool: ...

    @property
    def user(self) -> str | None: ...  # who authenticated, once complete

    @property
    def lifetime_ms(self) -> int | None: ...  # when the credential expires (ms), if it does

    def step(self, token: bytes, now_ms: int) -> bytes: ...


class Plain:
    """SASL/PLAIN (RFC 4616): one token, `[authzid] NUL user NUL password`, as Kafka's
    PlainSaslServer reads it."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = users
        self.complete = False
        self.user: str | None = None
        self.lifetime_ms: int | None = None

    def step(self, token: bytes, now_ms: int) -> bytes:
        parts = token.decode("utf-8", errors="replace").split("\0", 3)
        if len(parts) != 3:
            raise Failed("malformed PLAIN token", "Invalid SASL/PLAIN response: expected 3 "
                         f"tokens, got {min(len(parts), 4)}")
        authzid, user, password = parts
        if not user:
            raise Failed("no user", "Authentication failed: username not specified")
        if not password:
            raise Failed("no password", "Authentication failed: password not specified")
        expected = self._users.get(user)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise Failed(f"wrong password for user {user!r}" if expected is not None
                         else f"no PLAIN user {user!r}",
                         "Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise Failed("authorization id is not the user", "Authentication failed: Client "
                         "requested an authorization id that is different from username")
        self.user = user
        self.complete = True
        return b""


class Scram:
    """SCRAM-SHA-256 / SCRAM-SHA-512 over the broker's SCRAM credentials."""

    def __init__(self, name: str, credentials: ScramCredentials) -> None:
        mechanism = SCRAM_MECHANISMS[name]
        self._server = ScramServer(mechanism,
                                   lambda user: credentials.get(user, mechanism.type))

    @property
    def complete(self) -> bool:
        return self._server.complete

    @property
    def user(self) -> str | None:
        return self._server.user if self._server.complete else None

    lifetime_ms = None  # only delegation tokens expire, and kcsim issues none

    def step(self, token: bytes, now_ms: int) -> bytes:
        try:
            return self._server.step(token)
        except ScramFailed as exc:
            raise Failed(str(exc), exc.client_message) from None


class OAuthBearer:
    """OAUTHBEARER with unsecured JWTs, validated on the broker's clock."""

    def __init__(self, options: ValidatorOptions) -> None:
        self._server = OAuthBearerServer(options)

    @property
    def complete(self) -> bool:
        return self._server.complete

    @property
    def user(self) -> str | None:
        return self._server.user

    @property
    def lifetime_ms(self) -> int | None:
        return self._server.lifetime_ms

    def step(self, token: bytes, now_ms: int) -> bytes:
        try:
            return self._server.step(token, now_ms)
        except OAuthUnanswered as exc:
            raise Failed(str(exc), answered=False) from None
        except OAuthFailed as exc:
            raise Failed(str(exc), exc.client_message) from None


def start(name: str, plain_users: Mapping[str, str], credentials: ScramCredentials,
          oauth: ValidatorOptions) -> Mechanism:
    """A new exchange of mechanism `name` (one of the enabled ones)."""
    if name == "PLAIN":
        return Plain(plain_users)
    if name == "OAUTHBEARER":
        return OAuthBearer(oauth)
    return Scram(name, credentials)
