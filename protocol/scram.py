"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server's side, as Kafka speaks it.

Sans-IO: `ScramServer` takes the client's two messages and returns the server's two, and
says who authenticated. The messages are read with the grammar of Kafka's ScramMessages
(only the `n,` GS2 header: no channel binding; extensions allowed and ignored) and the keys
derived as Kafka's ScramFormatter derives them, so a credential made by Kafka's tools
(`kafka-configs --add-config 'SCRAM-SHA-512=[password=...]'`, which sends a salted password)
verifies here as there. A broker keeps only what RFC 5802 has it keep (`ScramCredential`:
salt, StoredKey, ServerKey, iterations), never a password.

Failures are `ScramFailed`; `client_message` is what Kafka tells the client when its own
SCRAM server says it (an authorization id that is not the user), None where Kafka sends its
generic "invalid credentials" message instead (so a client cannot learn whether a user exists).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable


class ScramMechanism(NamedTuple):
    name: str  # as in SaslHandshake
    type: int  # as in Describe/AlterUserScramCredentials
    hash_name: str  # hashlib's
    min_iterations: int = 4096


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", 1, "sha256")
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", 2, "sha512")
MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
BY_TYPE = {m.type: m for m in MECHANISMS.values()}
MAX_ITERATIONS = 16384  # what Kafka's controller accepts


class ScramCredential(NamedTuple):
    """What a broker keeps of a SCRAM password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


class ScramFailed(Exception):
    """The exchange failed; `client_message` is Kafka's own words for it, if it has some."""

    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.client_message = client_message


def _hmac(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def salted_password(mechanism: ScramMechanism, password: str, salt: bytes,
                    iterations: int) -> bytes:
    """Hi(password, salt, i): PBKDF2 with the mechanism's HMAC."""
    return hashlib.pbkdf2_hmac(mechanism.hash_name, password.encode(), salt, iterations)


def credential(mechanism: ScramMechanism, salt: bytes, salted: bytes,
               iterations: int) -> ScramCredential:
    """The credential of a salted password: StoredKey = H(HMAC(salted, "Client Key")),
    ServerKey = HMAC(salted, "Server Key")."""
    client_key = _hmac(mechanism, salted, b"Client Key")
    return ScramCredential(salt, hashlib.new(mechanism.hash_name, client_key).digest(),
                           _hmac(mechanism, salted, b"Server Key"), iterations)


def make_credential(mechanism: ScramMechanism, password: str,
                    iterations: int = 4096) -> ScramCredential:
    salt = secrets.token_bytes(32)
    return credential(mechanism, salt, salted_password(mechanism, password, salt, iterations),
                      iterations)


# Kafka's grammar (ScramMessages), its Java character classes spelled out.
_SAFE = r"[\x01-\x2b\x2d-\x3c\x3e-\x7f]"  # [\x01-\x7F] but = and ,
_VALUE = r"[\x01-\x2b\x2d-\x7f]+"  # [\x01-\x7F] but ,
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"  # [\x21-\x7E] but ,
_SASLNAME = rf"(?:{_SAFE}|=2C|=3D)+"
_B64 = r"(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?"
_EXTENSIONS = rf"(?:,[A-Za-z]+={_VALUE})*"
_CLIENT_FIRST = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,(?:m={_VALUE},)?n=(?P<saslname>{_SASLNAME}),"
    rf"r=(?P<nonce>{_PRINTABLE})(?P<extensions>{_EXTENSIONS})")
_CLIENT_FINAL = re.compile(
    rf"c=(?P<channel>{_B64}),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS},p=(?P<proof>{_B64})")


def username(saslname: str) -> str:
    """A user name from its SCRAM form (`=2C` is a comma, `=3D` an equals sign)."""
    name = saslname.replace("=2C", ",")
    if "=" in name.replace("=3D", ""):
        raise ScramFailed(f"invalid user name {saslname!r}")
    return name.replace("=3D", "=")


def _nonce() -> str:
    """As Kafka's: 130 random bits in base 36."""
    n = secrets.randbits(130)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, d = divmod(n, 36)
        out = digits[d] + out
    return out or "0"


class ScramServer:
    """One SCRAM exchange: `step` the client-first message (answered by the server-first),
    then the client-final one (answered by the server-final); `complete` then, and `user`
    is who authenticated. `lookup(user)` gives the user's credential for this mechanism."""

    def __init__(self, mechanism: ScramMechanism,
                 lookup: Callable[[str], ScramCredential | None],
                 nonce: Callable[[], str] = _nonce) -> None:
        self.mechanism = mechanism
        self._lookup = lookup
        self._new_nonce = nonce
        self.user: str | None = None
        self.complete = False
        self._credential: ScramCredential | None = None
        self._first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def step(self, token: bytes) -> bytes:
        if self.complete:
            raise ScramFailed("unexpected message after the exchange completed")
        if self._credential is None:
            return self._first(token)
        return self._final(token)

    def _first(self, token: bytes) -> bytes:
        message = _text(token)
        match = _CLIENT_FIRST.fullmatch(message)
        if match is None:
            raise ScramFailed(f"Invalid SCRAM client first message format: {message}")
        user = username(match["saslname"])
        found = self._lookup(user)
        if found is None:
            raise ScramFailed("Authentication failed: Invalid user credentials")
        authzid = match["authzid"]
        if authzid and authzid != user:
            raise ScramFailed("authorization id is not the user", "Authentication failed: Client "
                              "requested an authorization id that is different from username")
        if found.iterations < self.mechanism.min_iterations:
            raise ScramFailed(f"Iterations {found.iterations} is less than the minimum "
                              f"{self.mechanism.min_iterations} for {self.mechanism.name}")
        self.user = user
        self._credential = found
        self._first_bare = f"n={match['saslname']},r={match['nonce']}{match['extensions']}"
        self._nonce = match["nonce"] + self._new_nonce()
        self._server_first = (f"r={self._nonce},s={base64.b64encode(found.salt).decode()},"
                              f"i={found.iterations}")
        return self._server_first.encode()

    def _final(self, token: bytes) -> bytes:
        message = _text(token)
        match = _CLIENT_FINAL.fullmatch(message)
        if match is None:
            raise ScramFailed(f"Invalid SCRAM client final message format: {message}")
        if not match["nonce"].endswith(self._nonce):
            raise ScramFailed("Invalid client nonce in the final client message.")
        stored = self._credential
        assert stored is not None
        try:
            proof = base64.b64decode(match["proof"], validate=True)
        except binascii.Error:
            raise ScramFailed("Invalid client final message") from None
        auth_message = (f"{self._first_bare},{self._server_first},"
                        f"c={match['channel']},r={match['nonce']}").encode()
        signature = _hmac(self.mechanism, stored.stored_key, auth_message)
        if len(proof) != len(signature):
            raise ScramFailed("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(signature, proof, strict=True))
        computed = hashlib.new(self.mechanism.hash_name, client_key).digest()
        if not hmac.compare_digest(computed, stored.stored_key):
            raise ScramFailed("Invalid client credentials")
        self.complete = True
        server_signature = _hmac(self.mechanism, stored.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)


def _text(token: bytes) -> str:
    return token.decode("utf-8", errors="replace")


class ScramClient:
    """The client's side of one exchange (RFC 5802), as a Kafka client computes it: for
    tests and the bench, which speak SASL frame by frame."""

    def __init__(self, mechanism: str, user: str, password: str,
                 nonce: str = "fyko+d2lbbFgONRv9qkxdawL") -> None:
        self.mechanism = MECHANISMS[mechanism]
        self.password = password
        self.first_bare = f"n={user.replace('=', '=3D').replace(',', '=2C')},r={nonce}"
        self.server_signature = b""

    def first(self) -> bytes:
        return f"n,,{self.first_bare}".encode()

    def final(self, server_first: bytes, password: str | None = None) -> bytes:
        fields = dict(part.split("=", 1) for part in server_first.decode().split(","))
        salted = salted_password(self.mechanism, password or self.password,
                                 base64.b64decode(fields["s"]), int(fields["i"]))
        without_proof = f"c=biws,r={fields['r']}"
        auth = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = _hmac(self.mechanism, salted, b"Client Key")
        stored_key = hashlib.new(self.mechanism.hash_name, client_key).digest()
        signature = _hmac(self.mechanism, stored_key, auth)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self.server_signature = _hmac(self.mechanism, _hmac(self.mechanism, salted,
                                                            b"Server Key"), auth)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        return server_final.decode() == f"v={base64.b64encode(self.server_signature).decode()}"
