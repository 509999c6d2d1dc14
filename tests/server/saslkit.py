"""A SASL client's side, for tests that speak the exchange frame by frame: PLAIN's token
and SCRAM's two messages (RFC 5802), computed as a client computes them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from kcsim.protocol.scram import MECHANISMS, salted_password


def plain_token(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


class ScramClient:
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
        name = self.mechanism.hash_name
        without_proof = f"c=biws,r={fields['r']}"
        auth = f"{self.first_bare},{server_first.decode()},{without_proof}".encode()
        client_key = hmac.new(salted, b"Client Key", name).digest()
        signature = hmac.new(hashlib.new(name, client_key).digest(), auth, name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", name).digest()
        self.server_signature = hmac.new(server_key, auth, name).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify(self, server_final: bytes) -> bool:
        return server_final == b"v=" + base64.b64encode(self.server_signature)


def unsecured_jwt(claims: dict, header: dict | None = None, signature: str = "") -> str:
    """An unsecured JWS as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes one."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part(header or {'alg': 'none'})}.{part(claims)}.{signature}"


def oauth_token(jwt: str, authzid: str = "", **extensions: str) -> bytes:
    """OAUTHBEARER's client initial response (RFC 7628) carrying `jwt`."""
    kvpairs = "".join(f"{key}={value}\x01" for key, value in extensions.items())
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {jwt}\x01{kvpairs}\x01".encode()
