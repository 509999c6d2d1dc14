"""SASL/OAUTHBEARER with unsecured JWTs, frame by frame, as Kafka's default validator takes
them: the principal claim, exp and iat against the broker's clock, the required scope, the
JSON error sent as a challenge then the failure once the client acknowledges it; and the
session lifetimes the answers carry (KIP-368): a token's exp, connections.max.reauth.ms."""

from __future__ import annotations

import base64
import json

import pytest

from kcsim.protocol.errors import ErrorCode
from kcsim.server.requests.authenticator import Close, Previous, State

from .saslkit import oauth_token, plain_token, unsecured_jwt
from .test_authenticator import AUTHENTICATE, HANDSHAKE, _answer, _authenticate, _handshake
from .test_authenticator import _authenticator as _plain_authenticator

NOW_MS = 1_800_000_000_000
NOW = NOW_MS // 1000


def _authenticator(**settings):
    return _plain_authenticator(sasl_enabled_mechanisms="PLAIN,OAUTHBEARER", **settings)


def _jwt(**claims) -> str:
    return unsecured_jwt({"sub": "alice", "iat": NOW - 10, "exp": NOW + 3600} | claims)


def _login(auth, token: bytes, now_ms: int = NOW_MS):
    assert _answer(HANDSHAKE, 1, auth.receive(_handshake("OAUTHBEARER"), now_ms)).error_code == 0
    return auth.receive(_authenticate(token), now_ms)


def test_an_unsecured_jwt_authenticates_its_subject_until_it_expires():
    auth = _authenticator()
    step = _login(auth, oauth_token(_jwt(), traceId="abc"))
    answer = _answer(AUTHENTICATE, 2, step)
    assert (answer.error_code, answer.auth_bytes) == (0, b"")
    assert auth.principal == "User:alice"
    # Kafka tells the client how long its session lasts: until the token's exp.
    assert answer.session_lifetime_ms == 3600 * 1000
    assert auth.session_expires_ms == (NOW + 3600) * 1000


def test_a_token_that_never_expires_is_a_session_as_long_as_kafkas_longest():
    auth = _authenticator()
    answer = _answer(AUTHENTICATE, 2, _login(auth, oauth_token(_jwt(exp=10**400))))
    assert answer.error_code == 0 and answer.session_lifetime_ms == 2**63 - 1 - NOW_MS


def test_the_principal_claim_and_the_clock_skew_are_settings():
    auth = _authenticator(sasl_oauthbearer_principal_claim="client_id",
                          sasl_oauthbearer_clock_skew_ms=5000)
    token = unsecured_jwt({"client_id": "orders", "iat": NOW + 4, "exp": NOW + 60})
    assert _answer(AUTHENTICATE, 2, _login(auth, oauth_token(token))).error_code == 0
    assert auth.principal == "User:orders"


def _refused_with(auth, token: bytes) -> str:
    """The JSON error the broker sends as its challenge, after which the client sends 0x01
    and gets SASL_AUTHENTICATION_FAILED with that JSON, then the close."""
    challenge = _answer(AUTHENTICATE, 2, _login(auth, token))
    assert challenge.error_code == 0 and auth.principal is None
    step = auth.receive(_authenticate(b"\x01"), NOW_MS)
    failure = _answer(AUTHENTICATE, 2, step)
    assert failure.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert failure.error_message == challenge.auth_bytes.decode()
    assert step.close is Close.AFTER_DELAY and auth.state is State.FAILED
    return failure.error_message


@pytest.mark.parametrize("jwt", [
    _jwt(exp=NOW),  # expired: now is on or after exp
    _jwt(iat=NOW + 60),  # issued in the future
    _jwt(iat=NOW + 7200),  # issued after it expires
    unsecured_jwt({"sub": "alice", "iat": NOW}),  # no exp
    _jwt(sub=""),  # no principal
    _jwt(sub=42),  # a principal that is not a string
    _jwt(exp="tomorrow"),
    unsecured_jwt({"sub": "alice", "exp": NOW + 60}, header={"alg": "HS256"}),
    unsecured_jwt({"sub": "alice", "exp": NOW + 60}, signature="c2ln"),
    "e30.e30",  # two parts
    "not~base64.e30.",
    "eyJhbGciOiJub25lIn0." + base64.b64encode(b'{"sub":"a","exp":NaN}').decode() + ".",
    "eyJhbGciOiJub25lIn0." + base64.b64encode(b"[" * 99_999).decode() + ".",  # nested deep
])
def test_a_token_kafka_refuses_gets_invalid_token(jwt):
    assert json.loads(_refused_with(_authenticator(), oauth_token(jwt))) == {
        "status": "invalid_token"}


def test_a_token_without_the_required_scope_gets_insufficient_scope():
    auth = _authenticator(sasl_oauthbearer_required_scope="kafka orders")
    assert _refused_with(auth, oauth_token(_jwt(scope=["kafka"]))) == (
        '{"status":"insufficient_scope", "scope":"[kafka, orders]"}')
    auth = _authenticator(sasl_oauthbearer_required_scope="kafka orders")
    step = _login(auth, oauth_token(_jwt(scope=["orders", "kafka", "other"])))
    assert _answer(AUTHENTICATE, 2, step).error_code == 0


@pytest.mark.parametrize(("token", "message"), [
    (b"n,,\x01auth=Basic abc\x01\x01", None),
    (b"n,,\x01\x01", None),
    (b"y,,\x01auth=Bearer abc\x01\x01", None),
    (oauth_token(_jwt(), authzid="bob"), "Authentication failed: Client requested an "
     "authorization id (bob) that is different from the token's principal name (alice)"),
])
def test_a_message_that_is_not_oauthbearers_fails_in_kafkas_words(token, message):
    step = _login(_authenticator(), token)
    answer = _answer(AUTHENTICATE, 2, step)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == (message or "Authentication failed during authentication "
                                    "due to invalid credentials with SASL mechanism OAUTHBEARER")
    assert step.close is Close.AFTER_DELAY


def test_a_token_without_alg_closes_without_an_answer():
    token = unsecured_jwt({"sub": "alice", "exp": NOW + 60}, header={"typ": "JWT"})
    step = _login(_authenticator(), oauth_token(token))
    assert step.answer is None and step.close is Close.AT_ONCE


def test_oauthbearer_is_served_only_when_enabled():
    answer = _answer(HANDSHAKE, 1, _plain_authenticator().receive(_handshake("OAUTHBEARER"), 0))
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert "OAUTHBEARER" not in answer.mechanisms


# -- session lifetimes (KIP-368) ------------------------------------------------------------

@pytest.mark.parametrize(("max_reauth_ms", "expected"), [(0, 3600_000), (60_000, 60_000),
                                                         (7_200_000, 3600_000)])
def test_the_session_lasts_the_shorter_of_the_token_and_the_setting(max_reauth_ms, expected):
    auth = _authenticator(connections_max_reauth_ms=max_reauth_ms)
    answer = _answer(AUTHENTICATE, 2, _login(auth, oauth_token(_jwt())))
    assert answer.session_lifetime_ms == expected
    assert auth.session_expires_ms == NOW_MS + expected


def test_a_plain_session_expires_only_with_the_setting():
    for max_reauth_ms, expires in [(0, None), (30_000, 30_000)]:
        auth = _authenticator(connections_max_reauth_ms=max_reauth_ms)
        auth.receive(_handshake("PLAIN"), 0)
        answer = _answer(AUTHENTICATE, 2, auth.receive(
            _authenticate(plain_token("alice", "alice-secret")), 0))
        assert answer.session_lifetime_ms == (expires or 0)
        assert auth.session_expires_ms == expires


def _reauthenticator(previous: Previous, **settings):
    from kcsim.server.requests.authenticator import start

    auth = _authenticator(**settings)
    return start(auth._dispatcher, auth._peer, previous)


def test_re_authentication_may_not_change_the_principal():
    auth = _reauthenticator(Previous("OAUTHBEARER", "User:alice"))
    step = _login(auth, oauth_token(_jwt(sub="bob")))
    answer = _answer(AUTHENTICATE, 2, step)
    assert answer.error_message == ("Cannot change principals during re-authentication from "
                                    "User.alice: User.bob")
    assert step.close is Close.AFTER_DELAY


def test_re_authentication_may_not_change_the_mechanism():
    auth = _reauthenticator(Previous("OAUTHBEARER", "User:alice"))
    # Kafka answers the handshake, then closes at the next frame without an answer.
    assert _answer(HANDSHAKE, 1, auth.receive(_handshake("PLAIN"), 0)).error_code == 0
    step = auth.receive(_authenticate(plain_token("alice", "alice-secret")), 0)
    assert step.answer is None and step.close is Close.AFTER_DELAY
    assert "not supported for re-authentication of mechanism 'OAUTHBEARER'" in step.reason


def test_a_re_authentication_renews_the_session():
    auth = _reauthenticator(Previous("PLAIN", "User:alice"), connections_max_reauth_ms=1000)
    auth.receive(_handshake("PLAIN"), 0)
    ok = _answer(AUTHENTICATE, 2, auth.receive(_authenticate(plain_token("alice", "alice-secret")),
                                               5))
    assert ok.session_lifetime_ms == 1000 and auth.session_expires_ms == 1005


def test_a_failed_re_authentication_says_so():
    auth = _reauthenticator(Previous("OAUTHBEARER", "User:alice"))
    answer = _answer(AUTHENTICATE, 2, _login(auth, b"n,,\x01\x01"))
    assert answer.error_message == ("Authentication failed during re-authentication due to "
                                    "invalid credentials with SASL mechanism OAUTHBEARER")
