"""A fuzzed SASL exchange: mutated handshakes, tokens and requests on a SASL listener, each
after a valid start of the exchange, never stop the broker, never log an error, and never
get past authentication: nothing but the exchange's own APIs is answered, except as refused
(ILLEGAL_SASL_STATE) before the connection closes, and a good client still logs in afterwards."""

from __future__ import annotations

import logging
import random
import socket

from kcsim.protocol.codecs import request_class

from ..rawkafka import api_versions_frame, request_frame
from ..saslkit import ScramClient, oauth_token, plain_token, unsecured_jwt
from .frames import Seed
from .harness import exchange
from .mutate import Mutator

HANDSHAKE, AUTHENTICATE, METADATA = 17, 36, 3
CONNECTIONS = 600
SEED = 3677
EXCHANGE_APIS = {"ApiVersions", "SaslHandshake", "SaslAuthenticate"}
# OAUTHBEARER tokens no mutation is likely to make valid: signed, or without an algorithm.
_SIGNED = oauth_token(unsecured_jwt({"sub": "alice", "exp": 4102444800},
                                    header={"alg": "RS256"}, signature="c2lnbmF0dXJl"))
_NO_ALG = oauth_token(unsecured_jwt({"sub": "alice", "exp": 4102444800}, header={"typ": "JWT"}))


def _handshake(mechanism: str, version: int = 1) -> bytes:
    return request_frame(HANDSHAKE, version, 1, request_class(HANDSHAKE)(mechanism=mechanism))


def _authenticate(token: bytes, version: int = 2) -> bytes:
    return request_frame(AUTHENTICATE, version, 2, request_class(AUTHENTICATE)(auth_bytes=token))


def _seeds() -> list[Seed]:
    scram = ScramClient("SCRAM-SHA-512", "alice", "not-a-scram-user")
    frames = [(18, 3, api_versions_frame(1)),
              (METADATA, 12, request_frame(METADATA, 12, 3, request_class(METADATA)(topics=None)))]
    frames += [(HANDSHAKE, v, _handshake(m, v)) for v in (0, 1)
               for m in ("PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256", "OAUTHBEARER", "GSSAPI")]
    frames += [(AUTHENTICATE, v, _authenticate(t, v)) for v in (0, 1, 2)
               for t in (plain_token("alice", "wrong"), scram.first(), b"c=biws,r=x,p=AAAA",
                         _SIGNED, _NO_ALG, b"\x01")]
    return [Seed(key, version, frame) for key, version, frame in frames]


_PREFIXES: tuple[tuple[bytes, ...], ...] = (
    (), (api_versions_frame(1),), (_handshake("PLAIN"),), (_handshake("PLAIN", 0),),
    (_handshake("SCRAM-SHA-512"),),
    (_handshake("SCRAM-SHA-512"), _authenticate(ScramClient("SCRAM-SHA-512", "bob", "x").first())),
    (_handshake("OAUTHBEARER"),), (_handshake("OAUTHBEARER"), _authenticate(_SIGNED)),
)


def test_a_fuzzed_sasl_exchange_gets_nowhere_and_breaks_nothing(kcsim_embedded_factory, caplog):
    srv = kcsim_embedded_factory(listeners="SASL_PLAINTEXT://127.0.0.1:0",
                                 sasl_plain_users="alice:alice-secret",
                                 sasl_enabled_mechanisms="PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,"
                                                         "OAUTHBEARER",
                                 connection_failed_authentication_delay_ms=0)
    host, port = srv.bootstrap.rsplit(":", 1)
    rng = random.Random(SEED)
    mutator = Mutator(rng, _seeds(), dict.fromkeys((HANDSHAKE, AUTHENTICATE, METADATA), (0, 2)))
    caplog.set_level(logging.WARNING, logger="kcsim")
    for _ in range(CONNECTIONS):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            for frame in rng.choice(_PREFIXES):
                if not exchange(sock, frame):
                    break
            else:
                for _ in range(rng.choice((1, 1, 2, 3))):
                    if not exchange(sock, mutator.frame()[0]):
                        break
    fuzzed = srv.requests()
    assert {r.principal for r in fuzzed} == {"User:ANONYMOUS"}
    # Another API is answered only as refused (ILLEGAL_SASL_STATE, where its answer has room
    # for an error), and nothing after it on its connection, which is closed.
    last = {r.connection: r.seq for r in fuzzed}
    assert [(r.api, r.errors) for r in fuzzed if r.api not in EXCHANGE_APIS
            and (r.errors not in ([], ["ILLEGAL_SASL_STATE"]) or last[r.connection] != r.seq)] == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        assert exchange(sock, _handshake("PLAIN"))
        assert exchange(sock, _authenticate(plain_token("alice", "alice-secret")))
        assert exchange(sock, request_frame(METADATA, 12, 3, request_class(METADATA)(topics=None)))
    assert srv.requests("Metadata")[-1].principal == "User:alice"
