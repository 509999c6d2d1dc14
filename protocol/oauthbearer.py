"""SASL/OAUTHBEARER (RFC 7628) with unsecured JWTs, the server's side, as Kafka's default
validator (OAuthBearerSaslServer with OAuthBearerUnsecuredValidatorCallbackHandler) takes it.

Sans-IO: `OAuthBearerServer.step(token, now_ms)` takes the client's message and returns the
server's. The client's initial response is a GS2 header (`n,` with an optional `a=`
authorization id), then `auth=Bearer <token>` and any extensions (key=value pairs, all
accepted), each ended by 0x01. The token is an unsecured JWS (`alg` `none`, no signature),
read and checked in Kafka's order: its principal claim (`sub` unless configured), `exp`
required and not passed, `iat` (if present) not in the future, `exp` after `iat`, then the
required scope, if any, against its scope claim (`scope`), each on the broker's clock with the
allowed clock skew. The principal is the principal claim; the session may last until `exp`.

A token that fails validation is answered as RFC 7628 and Kafka answer it: a JSON error
(`{"status":"invalid_token"}`, or `insufficient_scope` with the scope required) as the
server's message; the client acknowledges it with a single 0x01 and the exchange then fails
with that JSON as the message. Other failures (a message that does not parse, another scheme)
are `OAuthFailed` with no message of Kafka's own (`client_message` None): Kafka answers them
with its generic one. A token whose header has no `alg` makes Kafka's validator throw what its
SASL server does not catch: `OAuthUnanswered`, the connection closes without an answer.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import NamedTuple

SEPARATOR = "\x01"
_SASLNAME = r"(?:[\x01-\x7F](?<![=,])|=2C|=3D)+"
_KEY = r"[A-Za-z]+"
_VALUE = r"[\x21-\x7E \t\r\n]+"
_INITIAL_RESPONSE = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,{SEPARATOR}"
    rf"(?P<kvpairs>(?:{_KEY}={_VALUE}{SEPARATOR})*){SEPARATOR}", re.ASCII)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)", re.ASCII)
_KEY_RE = re.compile(_KEY, re.ASCII)
_VALUE_RE = re.compile(_VALUE, re.ASCII)
_SCOPE_ITEM = re.compile(r"[\x23-\x5B\x5D-\x7E\x21]+", re.ASCII)


class OAuthFailed(Exception):
    """The exchange failed; `client_message`: Kafka's words for it, None for its generic ones."""

    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.client_message = client_message


class OAuthUnanswered(OAuthFailed):
    """A failure Kafka's SASL server does not catch: the connection closes without an answer."""


class _Invalid(Exception):
    """A token the unsecured validator refuses: `scope`, the scope required, if that is why."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


class ValidatorOptions(NamedTuple):
    """The unsecured validator's JAAS options (`unsecuredValidator...`)."""

    principal_claim: str = "sub"  # unsecuredValidatorPrincipalClaimName
    scope_claim: str = "scope"  # unsecuredValidatorScopeClaimName
    required_scope: tuple[str, ...] = ()  # unsecuredValidatorRequiredScope, space-separated
    clock_skew_ms: int = 0  # unsecuredValidatorAllowableClockSkewMs


def parse_scope(text: str) -> tuple[str, ...]:
    """A space-separated scope, as Kafka's OAuthBearerScopeUtils reads it (ValueError: an
    item with a character a scope may not hold)."""
    items = tuple(item for item in text.split(" ") if item)
    for item in items:
        if not _SCOPE_ITEM.fullmatch(item):
            raise ValueError(f"Invalid scope value: {item}")
    return items


class Token(NamedTuple):
    """A validated unsecured JWS."""

    principal: str
    lifetime_ms: int  # `exp`, in ms since the epoch
    claims: dict[str, object]


class InitialResponse(NamedTuple):
    token: str
    authorization_id: str
    extensions: dict[str, str]


def parse_initial_response(message: bytes) -> InitialResponse:
    """The client's first message, as Kafka's OAuthBearerClientInitialResponse reads it."""
    text = message.decode("utf-8", errors="replace")
    match = _INITIAL_RESPONSE.fullmatch(text)
    if match is None:
        raise OAuthFailed("Invalid OAUTHBEARER client first message")
    pairs: dict[str, str] = {}
    for element in match["kvpairs"].split(SEPARATOR):
        if element:
            key, _, value = element.partition("=")
            pairs[key] = value
    auth = pairs.pop("auth", None)
    if auth is None:
        raise OAuthFailed("Invalid OAUTHBEARER client first message: 'auth' not specified")
    for key, value in pairs.items():
        if not _KEY_RE.fullmatch(key) or not _VALUE_RE.fullmatch(value):
            raise OAuthFailed(f"Extension {key} is invalid")
    auth_match = _AUTH.fullmatch(auth)
    if auth_match is None:
        raise OAuthFailed("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if auth_match["scheme"].lower() != "bearer":
        raise OAuthFailed(f"Invalid scheme in OAUTHBEARER client first message: "
                          f"{auth_match['scheme']}")
    return InitialResponse(auth_match["token"], match["authzid"] or "", pairs)


def _convert(value: object) -> object:
    """A claim's value as Kafka's Jackson conversion leaves it: numbers stay numbers, arrays
    become lists of text, anything else its text."""
    if isinstance(value, list):
        return [_text(item) for item in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _text(value)


def _text(value: object) -> str:
    """Jackson's `asText`: a string itself, true/false/null, a number's digits, "" for an
    object or array."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return ""


def _to_map(split: str) -> dict[str, object]:
    """One part of the compact serialization: Base64 (Java's basic decoder, padding optional)
    of a JSON object."""
    try:
        decoded = base64.b64decode(split + "=" * (-len(split) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _Invalid("malformed Base64 URL encoded value") from None
    try:
        node = json.loads(decoded, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):  # Jackson limits nesting too
        raise _Invalid("malformed JSON") from None
    if not isinstance(node, dict):
        return {}  # Jackson's fields() of a value that is not an object: none
    return {key: _convert(value) for key, value in node.items()}


def _no_constant(name: str) -> object:
    """NaN and Infinity are not JSON, and Jackson refuses them as Kafka runs it."""
    raise ValueError(f"{name} is not JSON")


_LONG_MAX = 2**63 - 1


def _ms(seconds: float) -> int:
    """A claim's seconds as Kafka's ms: Math.round of a double, so at most Long.MAX_VALUE."""
    ms = seconds * 1000.0
    return _LONG_MAX if ms >= _LONG_MAX else round(ms)


def _number(claims: dict[str, object], name: str) -> float | None:
    """A numeric claim as Kafka reads it, a double (an integer too large for one: infinite)."""
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return math.inf
    raise _Invalid(f"The '{name}' claim was not of type Number: {_java_type(value)}")


def _java_type(value: object) -> str:
    return {str: "String", list: "ArrayList", int: "Integer", float: "Double"}.get(
        type(value), type(value).__name__)


def validate(token: str, options: ValidatorOptions, now_ms: int) -> Token:
    """The unsecured JWS `token` as Kafka's unsecured validator checks it at `now_ms`;
    `_Invalid` says why not (OAuthUnanswered where Kafka's validator throws unchecked)."""
    if ".." in token:
        raise _Invalid("Malformed compact serialization contains '..'")
    splits = token.split(".")
    while splits and not splits[-1]:  # Java's split drops trailing empty strings
        splits.pop()
    if token.endswith("."):
        splits.append("")
    if len(splits) != 3:
        raise _Invalid("Unsecured JWS compact serializations must have 3 dot-separated "
                       "Base64URL-encoded values")
    header = _to_map(splits[0])
    claims = _to_map(splits[1])
    if "alg" not in header:
        raise OAuthUnanswered("JWS header must have an Algorithm value")
    if header["alg"] != "none":
        raise _Invalid("Unsecured JWS must have 'none' for an algorithm")
    if splits[2]:
        raise _Invalid("Unsecured JWS must not contain a digital signature")
    scope = _scope(claims, options.scope_claim)
    exp = _number(claims, "exp")
    if exp is None:
        raise _Invalid("No expiration time in JWT")
    principal = claims.get(options.principal_claim)
    if principal is not None and not isinstance(principal, str):
        raise _Invalid(f"The '{options.principal_claim}' claim was not of type String: "
                       f"{_java_type(principal)}")
    if principal is None or not principal.strip():
        raise _Invalid(f"No principal name in JWT claim: {options.principal_claim}")
    iat = _number(claims, "iat")
    skew = options.clock_skew_ms
    if iat is not None and 1000 * iat > now_ms + skew:
        raise _Invalid(f"The Issued At value ({iat:f} seconds) was after the indicated time "
                       f"({now_ms} ms) plus allowable clock skew ({skew} ms)")
    if now_ms - skew >= 1000 * exp:
        raise _Invalid(f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) "
                       f"was on or after the Expiration Time value ({exp:f} seconds)")
    if iat is not None and exp <= iat:
        raise _Invalid(f"The Expiration Time time ({exp:f} seconds) was not after the Issued At "
                       f"time ({iat:f} seconds)")
    for required in options.required_scope:
        if required not in scope:
            raise _Invalid(f"The provided scope ({sorted(scope)}) was missing a required scope "
                           f"({required})", scope="[" + ", ".join(options.required_scope) + "]")
    return Token(principal, _ms(exp), claims)


def _scope(claims: dict[str, object], name: str) -> set[str]:
    value = claims.get(name)
    if isinstance(value, str):
        return {value.strip()} if value.strip() else set()
    if value is None:
        return set()
    if not isinstance(value, list):
        raise _Invalid(f"The '{name}' claim was not of type List: {_java_type(value)}")
    return {item.strip() for item in value if isinstance(item, str) and item.strip()}


def error_response(status: str, scope: str | None) -> str:
    """RFC 7628's JSON error, formatted as Kafka formats it."""
    text = f'{{"status":"{status}"'
    if scope is not None:
        text += f', "scope":"{scope}"'
    return text + "}"


class OAuthBearerServer:
    """One OAUTHBEARER exchange (see the module's doc): `complete`, then `user` and
    `lifetime_ms` (the token's `exp`, in ms) say who authenticated and until when."""

    def __init__(self, options: ValidatorOptions) -> None:
        self._options = options
        self._error: str | None = None  # the JSON error sent, awaiting the client's 0x01
        self.complete = False
        self.user: str | None = None
        self.lifetime_ms: int | None = None
        self.extensions: dict[str, str] = {}
        self.reason = ""  # why the last token was refused, for the log

    def step(self, message: bytes, now_ms: int) -> bytes:
        if message == b"\x01" and self._error is not None:
            raise OAuthFailed(f"invalid token: {self.reason}", self._error)
        self._error = None
        response = parse_initial_response(message)
        try:
            token = validate(response.token, self._options, now_ms)
        except _Invalid as exc:
            status = "insufficient_scope" if exc.scope is not None else "invalid_token"
            self._error = error_response(status, exc.scope)
            self.reason = str(exc)
            return self._error.encode()
        if response.authorization_id and response.authorization_id != token.principal:
            raise OAuthFailed("authorization id is not the token's principal",
                              "Authentication failed: Client requested an authorization id "
                              f"({response.authorization_id}) that is different from the "
                              f"token's principal name ({token.principal})")
        self.user = token.principal
        self.lifetime_ms = token.lifetime_ms
        self.extensions = response.extensions
        self.complete = True
        return b""
