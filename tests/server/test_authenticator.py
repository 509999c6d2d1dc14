"""The SASL authenticator as a state machine: frames in, answers and states out, no socket.

Each rule of Kafka's SaslServerAuthenticator that a client can meet: ApiVersions first or
not at all, SaslHandshake then SaslAuthenticate (or v0's unframed tokens), anything else
before authentication refused, failures answered in Kafka's words and closed after the
failed-authentication delay."""

from __future__ import annotations

import pytest

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode
from kcsim.protocol.scram import SCRAM_SHA_512, make_credential
from kcsim.server.config import Config
from kcsim.server.listeners import Listener
from kcsim.server.requests import Dispatcher, Peer
from kcsim.server.requests.authenticator import Close, State, start
from kcsim.server.state.broker_state import BrokerState
from kcsim.server.state.scram_credentials import credential_record

from .rawkafka import api_versions_frame, decode_response, request_frame
from .saslkit import ScramClient, plain_token

HANDSHAKE, AUTHENTICATE, METADATA = 17, 36, 3


def _authenticator(**settings):
    state = BrokerState(Config(in_memory=True, sasl_plain_users="alice:alice-secret",
                               **settings))
    state.apply(credential_record("bob", 2, make_credential(SCRAM_SHA_512, "bob-secret")))
    return start(Dispatcher(state), Peer("127.0.0.1", 1, Listener("SASL_PLAINTEXT", "", 0)))


def _handshake(mechanism: str, version: int = 1) -> bytes:
    return request_frame(HANDSHAKE, version, 2, request_class(HANDSHAKE)(mechanism=mechanism))[4:]


def _authenticate(token: bytes, version: int = 2, correlation_id: int = 3) -> bytes:
    return request_frame(AUTHENTICATE, version, correlation_id,
                         request_class(AUTHENTICATE)(auth_bytes=token))[4:]


def _answer(api_key: int, version: int, step):
    assert step.answer is not None
    return decode_response(api_key, version, bytes(step.answer[4:]))[1]


def test_plain_after_api_versions_authenticates_the_user():
    auth = _authenticator()
    assert auth.receive(api_versions_frame(1)[4:], 0).close is None
    assert auth.state is State.HANDSHAKE
    answer = _answer(HANDSHAKE, 1, auth.receive(_handshake("PLAIN"), 0))
    assert answer.error_code == 0
    assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    step = auth.receive(_authenticate(plain_token("alice", "alice-secret")), 0)
    assert step.close is None and _answer(AUTHENTICATE, 2, step).error_code == 0
    assert auth.state is State.COMPLETE and auth.principal == "User:alice"


def test_scram_sha_512_takes_two_tokens():
    auth = _authenticator()
    auth.receive(_handshake("SCRAM-SHA-512"), 0)
    client = ScramClient("SCRAM-SHA-512", "bob", "bob-secret")
    first = _answer(AUTHENTICATE, 2, auth.receive(_authenticate(client.first()), 0))
    assert auth.state is State.AUTHENTICATE and auth.principal is None
    final = _answer(AUTHENTICATE, 2, auth.receive(_authenticate(client.final(first.auth_bytes)), 0))
    assert client.verify(final.auth_bytes)
    assert auth.principal == "User:bob"


def test_the_legacy_flow_sends_tokens_unframed():
    auth = _authenticator()
    assert _answer(HANDSHAKE, 0, auth.receive(_handshake("PLAIN", version=0), 0)).error_code == 0
    assert auth.state is State.TOKENS
    step = auth.receive(plain_token("alice", "alice-secret"), 0)
    assert step.answer == b"\0\0\0\0" and auth.principal == "User:alice"


@pytest.mark.parametrize(("token", "message"), [
    (plain_token("alice", "wrong"), "Authentication failed: Invalid username or password"),
    (plain_token("mallory", "x"), "Authentication failed: Invalid username or password"),
    (plain_token("alice", ""), "Authentication failed: password not specified"),
    (b"alice", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
])
def test_bad_plain_credentials_are_answered_in_kafkas_words_then_closed(token, message):
    auth = _authenticator()
    auth.receive(_handshake("PLAIN"), 0)
    step = auth.receive(_authenticate(token), 0)
    answer = _answer(AUTHENTICATE, 2, step)
    assert (answer.error_code, answer.error_message) == (ErrorCode.SASL_AUTHENTICATION_FAILED,
                                                         message)
    assert step.close is Close.AFTER_DELAY and auth.state is State.FAILED


def test_a_wrong_scram_password_gets_kafkas_generic_message():
    auth = _authenticator()
    auth.receive(_handshake("SCRAM-SHA-512"), 0)
    client = ScramClient("SCRAM-SHA-512", "bob", "bob-secret")
    first = _answer(AUTHENTICATE, 2, auth.receive(_authenticate(client.first()), 0))
    step = auth.receive(_authenticate(client.final(first.auth_bytes, password="nope")), 0)
    assert _answer(AUTHENTICATE, 2, step).error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-512")
    assert step.close is Close.AFTER_DELAY


def test_an_unsupported_mechanism_gets_the_enabled_list():
    auth = _authenticator(sasl_enabled_mechanisms="SCRAM-SHA-512")
    step = auth.receive(_handshake("PLAIN"), 0)
    answer = _answer(HANDSHAKE, 1, step)
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert answer.mechanisms == ["SCRAM-SHA-512"]
    assert step.close is Close.AFTER_DELAY


def test_a_request_before_the_handshake_is_closed_without_an_answer():
    auth = _authenticator()
    step = auth.receive(request_frame(METADATA, 12, 5, request_class(METADATA)(topics=None))[4:], 0)
    assert step.answer is None and step.close is Close.AFTER_DELAY


def test_a_request_during_authentication_gets_illegal_sasl_state_then_closes():
    auth = _authenticator()
    auth.receive(_handshake("PLAIN"), 0)
    step = auth.receive(request_frame(METADATA, 12, 5, request_class(METADATA)(topics=None))[4:],
                        0)
    answer = _answer(METADATA, 12, step)
    assert {t.error_code for t in answer.topics} <= {ErrorCode.ILLEGAL_SASL_STATE}
    assert step.close is Close.AFTER_DELAY


def test_a_second_api_versions_closes_at_once():
    auth = _authenticator()
    auth.receive(api_versions_frame(1)[4:], 0)
    step = auth.receive(api_versions_frame(2)[4:], 0)
    assert step.answer is None and step.close is Close.AT_ONCE


def test_an_unserved_api_versions_leaves_the_client_free_to_retry():
    auth = _authenticator()
    frame = bytearray(api_versions_frame(1)[4:])
    frame[2:4] = (99).to_bytes(2, "big")  # version 99
    step = auth.receive(bytes(frame), 0)
    assert step.close is None and step.answer is not None
    assert auth.state is State.HANDSHAKE_OR_VERSIONS
    assert auth.receive(api_versions_frame(2)[4:], 0).close is None
    assert auth.state is State.HANDSHAKE


@pytest.mark.parametrize("frame", [b"", b"\x60\x82garbage", b"\x00\x11\x00\x05\x00\x00"])
def test_a_first_frame_that_is_not_a_kafka_request_closes(frame):
    step = _authenticator().receive(frame, 0)
    assert step.answer is None and step.close is not None


def test_every_state_says_what_it_takes_and_how_it_refuses_the_rest():
    from kcsim.server.requests.authenticator import ACCEPTS, REFUSED

    assert set(ACCEPTS) == set(State) == set(REFUSED)
    assert all(None in REFUSED[state] for state in State)
