"""SASL listeners on the wire: how a connection that fails to authenticate ends, what an
oversized frame or a request before authentication gets, the legacy unframed flow, and SCRAM
credentials as records: managed with Describe/AlterUserScramCredentials with Kafka's errors,
and still there after a restart."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.scram import SCRAM_SHA_256, SCRAM_SHA_512, salted_password

from .rawkafka import decode_response, request_frame
from .saslkit import ScramClient, plain_token
from .test_tls import _closed_by_broker as _closed
from .test_tls import _read

HANDSHAKE, AUTHENTICATE, METADATA, DESCRIBE_SCRAM, ALTER_SCRAM = 17, 36, 3, 50, 51
SASL = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        "sasl_plain_users": "alice:alice-secret"}


def _connect(srv, listener: str = "SASL_PLAINTEXT") -> socket.socket:
    host, port = srv.bootstrap_of(listener).rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10)


def _frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", _read(sock, 4))
    return _read(sock, size)


def _call(sock: socket.socket, api_key: int, version: int, request, correlation_id: int = 7):
    sock.sendall(request_frame(api_key, version, correlation_id, request))
    return decode_response(api_key, version, _frame(sock))[1]


def _handshake(sock: socket.socket, mechanism: str, version: int = 1):
    return _call(sock, HANDSHAKE, version, request_class(HANDSHAKE)(mechanism=mechanism))


def _authenticate(sock: socket.socket, token: bytes):
    return _call(sock, AUTHENTICATE, 2, request_class(AUTHENTICATE)(auth_bytes=token))


def _metadata(sock: socket.socket):
    return _call(sock, METADATA, 12, request_class(METADATA)(topics=None))


def test_plain_then_requests_served_with_the_users_principal(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL)
    with _connect(srv) as sock:
        assert _handshake(sock, "PLAIN").error_code == 0
        assert _authenticate(sock, plain_token("alice", "alice-secret")).error_code == 0
        assert _metadata(sock).brokers
        again = _authenticate(sock, plain_token("alice", "alice-secret"))
        assert again.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert [(r.api, r.principal) for r in srv.requests()] == [
        ("SaslHandshake", "User:ANONYMOUS"), ("SaslAuthenticate", "User:ANONYMOUS"),
        ("Metadata", "User:alice"), ("SaslAuthenticate", "User:alice")]


def test_a_request_sent_with_the_last_sasl_frame_is_answered_at_once(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL)
    with _connect(srv) as sock:
        assert _handshake(sock, "PLAIN").error_code == 0
        token = request_class(AUTHENTICATE)(auth_bytes=plain_token("alice", "alice-secret"))
        sock.sendall(request_frame(AUTHENTICATE, 2, 8, token)
                     + request_frame(METADATA, 12, 9, request_class(METADATA)(topics=None)))
        assert decode_response(AUTHENTICATE, 2, _frame(sock))[1].error_code == 0
        correlation_id, metadata = decode_response(METADATA, 12, _frame(sock))
        assert (correlation_id, bool(metadata.brokers)) == (9, True)


def test_bad_credentials_are_answered_after_the_delay_then_closed(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL, connection_failed_authentication_delay_ms=300)
    with _connect(srv) as sock:
        _handshake(sock, "PLAIN")
        started = time.monotonic()
        answer = _authenticate(sock, plain_token("alice", "guess"))
        assert time.monotonic() - started >= 0.25
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert answer.error_message == "Authentication failed: Invalid username or password"
        assert _closed(sock)
    with _connect(srv) as sock:  # the listener serves the next client as usual
        _handshake(sock, "PLAIN")
        assert _authenticate(sock, plain_token("alice", "alice-secret")).error_code == 0


def test_an_unsupported_mechanism_is_answered_with_the_enabled_ones(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL, sasl_enabled_mechanisms="SCRAM-SHA-512,PLAIN",
                                 connection_failed_authentication_delay_ms=0)
    with _connect(srv) as sock:
        answer = _handshake(sock, "GSSAPI")
        assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
        assert answer.mechanisms == ["SCRAM-SHA-512", "PLAIN"]
        assert _closed(sock)


def test_a_request_before_authentication_is_refused_as_kafka_refuses_it(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL, connection_failed_authentication_delay_ms=0)
    with _connect(srv) as sock:
        sock.sendall(request_frame(METADATA, 12, 1, request_class(METADATA)(topics=None)))
        assert _closed(sock)
    assert srv.requests("Metadata") == []


def test_an_oversized_frame_before_authentication_closes(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL, sasl_server_max_receive_size=1024,
                                 connection_failed_authentication_delay_ms=0)
    with _connect(srv) as sock:
        _handshake(sock, "PLAIN")
        sock.sendall(request_frame(AUTHENTICATE, 2, 3, request_class(AUTHENTICATE)(
            auth_bytes=b"x" * 2000)))
        assert _closed(sock)
    with _connect(srv) as sock:
        sock.sendall(struct.pack(">i", 2**31 - 1) + b"\0" * 64)
        assert _closed(sock)


def test_the_legacy_flow_of_saslhandshake_v0(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL)
    with _connect(srv) as sock:
        assert _handshake(sock, "PLAIN", version=0).error_code == 0
        token = plain_token("alice", "alice-secret")
        sock.sendall(struct.pack(">i", len(token)) + token)
        assert _frame(sock) == b""
        assert _metadata(sock).brokers


def _alter(sock, deletions=(), upsertions=()):
    cls = request_class(ALTER_SCRAM)
    answer = _call(sock, ALTER_SCRAM, 0, cls(deletions=list(deletions),
                                            upsertions=list(upsertions)))
    return {r.user: (r.error_code, r.error_message) for r in answer.results}


def _upsert(user: str, password: str, mechanism=SCRAM_SHA_512, iterations: int = 4096):
    salt = b"salt-of-" + user.encode()
    return request_class(ALTER_SCRAM).ScramCredentialUpsertion(
        name=user, mechanism=mechanism.type, iterations=iterations, salt=salt,
        salted_password=salted_password(mechanism, password, salt, iterations))


def _delete(user: str, mechanism: int):
    return request_class(ALTER_SCRAM).ScramCredentialDeletion(name=user, mechanism=mechanism)


def _describe(sock, *users: str):
    cls = request_class(DESCRIBE_SCRAM)
    answer = _call(sock, DESCRIBE_SCRAM, 0, cls(users=[cls.UserName(name=u) for u in users]
                                                 if users else None))
    return {r.user: (r.error_code, r.error_message,
                     [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in answer.results}


def _scram_login(srv, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> int:
    with _connect(srv) as sock:
        _handshake(sock, mechanism)
        client = ScramClient(mechanism, user, password)
        first = _authenticate(sock, client.first())
        if first.error_code:
            return first.error_code
        final = _authenticate(sock, client.final(first.auth_bytes))
        assert final.error_code or client.verify(final.auth_bytes)
        return final.error_code


def test_scram_credentials_are_managed_with_kafkas_errors(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**SASL, connection_failed_authentication_delay_ms=0)
    with _connect(srv, "PLAINTEXT") as admin:
        assert _alter(admin, upsertions=[_upsert("bob", "bob-secret"),
                                         _upsert("bob", "x", SCRAM_SHA_256, 8192)]) == {
            "bob": (ErrorCode.DUPLICATE_RESOURCE,
                    "A user credential cannot be altered twice in the same request")}
        assert _alter(admin, upsertions=[_upsert("bob", "bob-secret"),
                                         _upsert("eve", "e", iterations=100),
                                         _upsert("", "e")],
                      deletions=[_delete("zed", 2), _delete("ann", 9)]) == {
            "bob": (0, None),
            "eve": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
            "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
            "zed": (ErrorCode.RESOURCE_NOT_FOUND,
                    "Attempt to delete a user credential that does not exist"),
            "ann": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")}
        assert _describe(admin) == {"bob": (0, "", [(2, 4096)])}
        assert _describe(admin, "bob", "nobody", "bob") == {
            "bob": (ErrorCode.DUPLICATE_RESOURCE, "Cannot describe SCRAM credentials for the "
                    "same user twice in a single request: bob", []),
            "nobody": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to describe a user credential "
                       "that does not exist: nobody", [])}
    assert _scram_login(srv, "bob", "bob-secret") == 0
    assert _scram_login(srv, "bob", "wrong") == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert _scram_login(srv, "bob", "bob-secret", "SCRAM-SHA-256") == (
        ErrorCode.SASL_AUTHENTICATION_FAILED)
    with _connect(srv, "PLAINTEXT") as admin:
        assert _alter(admin, deletions=[_delete("bob", 2)]) == {"bob": (0, None)}
        assert _describe(admin) == {}
    assert _scram_login(srv, "bob", "bob-secret") == ErrorCode.SASL_AUTHENTICATION_FAILED


@pytest.mark.kcsim(**SASL)
def test_scram_credentials_are_records_kept_over_a_restart(kcsim_persistent):
    with _connect(kcsim_persistent, "PLAINTEXT") as admin:
        assert _alter(admin, upsertions=[_upsert("bob", "bob-secret")]) == {"bob": (0, None)}
    kcsim_persistent.restart()
    assert _scram_login(kcsim_persistent, "bob", "bob-secret") == 0
