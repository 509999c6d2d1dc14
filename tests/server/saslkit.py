"""A SASL client's side, for tests that speak the exchange frame by frame: PLAIN's token,
SCRAM's two messages (RFC 5802, the protocol's own client) and OAUTHBEARER's initial
response with an unsecured JWT (RFC 7628), computed as a client computes them."""

from __future__ import annotations

import base64
import json

from kcsim.protocol.scram import ScramClient

__all__ = ["ScramClient", "oauth_token", "plain_token", "unsecured_jwt"]


def plain_token(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


def unsecured_jwt(claims: dict, header: dict | None = None, signature: str = "") -> str:
    """An unsecured JWS as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes one."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part(header or {'alg': 'none'})}.{part(claims)}.{signature}"


def oauth_token(jwt: str, authzid: str = "", **extensions: str) -> bytes:
    """OAUTHBEARER's client initial response (RFC 7628) carrying `jwt`."""
    kvpairs = "".join(f"{key}={value}\x01" for key, value in extensions.items())
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {jwt}\x01{kvpairs}\x01".encode()
