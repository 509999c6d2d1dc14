"""Re-authentication (KIP-368) on the wire, on the broker's clock: a SASL session that
expires (connections.max.reauth.ms, an OAUTHBEARER token's exp) is renewed by SaslHandshake
and SaslAuthenticate mid-stream, or its connection is closed at its next request."""

from __future__ import annotations

from kcsim.protocol.codecs import request_class
from kcsim.protocol.errors import ErrorCode

from .rawkafka import request_frame
from .saslkit import oauth_token, plain_token, unsecured_jwt
from .test_sasl import _authenticate, _connect, _handshake, _metadata
from .test_tls import _closed_by_broker as _closed

REAUTH = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
          "sasl_plain_users": "alice:alice-secret,bob:bob-secret",
          "sasl_enabled_mechanisms": "PLAIN,OAUTHBEARER",
          "connections_max_reauth_ms": 60_000,
          "connection_failed_authentication_delay_ms": 0}

METADATA = request_frame(3, 12, 9, request_class(3)(topics=None))


def _plain_login(sock, user: str = "alice"):
    assert _handshake(sock, "PLAIN").error_code == 0
    return _authenticate(sock, plain_token(user, f"{user}-secret"))


def test_an_expired_session_is_closed_at_its_next_request(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**REAUTH)
    with _connect(srv) as sock:
        assert _plain_login(sock).session_lifetime_ms == 60_000
        srv.clock.advance(59_000)
        assert _metadata(sock).brokers  # still within its session
        srv.clock.advance(1_001)
        sock.sendall(METADATA)  # no answer: the connection closes
        assert _closed(sock)


def test_a_session_re_authenticated_mid_stream_goes_on(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**REAUTH)
    with _connect(srv) as sock:
        _plain_login(sock)
        assert _metadata(sock).brokers
        srv.clock.advance(50_000)
        renewed = _plain_login(sock)
        assert (renewed.error_code, renewed.session_lifetime_ms) == (0, 60_000)
        srv.clock.advance(50_000)  # past the first session's end, within the second's
        assert _metadata(sock).brokers
    assert {r.principal for r in srv.requests(api="Metadata")} == {"User:alice"}


def test_re_authenticating_as_another_user_fails_and_closes(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**REAUTH)
    with _connect(srv) as sock:
        _plain_login(sock)
        srv.clock.advance(2_000)
        answer = _plain_login(sock, "bob")
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert answer.error_message == ("Cannot change principals during re-authentication "
                                        "from User.alice: User.bob")
        assert _closed(sock)


def test_without_the_setting_a_handshake_after_authentication_is_illegal(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**(REAUTH | {"connections_max_reauth_ms": 0}))
    with _connect(srv) as sock:
        assert _plain_login(sock).session_lifetime_ms == 0
        srv.clock.advance(86_400_000)  # the session never ends
        assert _handshake(sock, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert _metadata(sock).brokers


def test_an_oauthbearer_session_ends_with_its_token(kcsim_embedded_factory):
    srv = kcsim_embedded_factory(**(REAUTH | {"connections_max_reauth_ms": 0}))
    now = srv.clock.now_ms() // 1000
    token = unsecured_jwt({"sub": "svc", "iat": now, "exp": now + 300})
    with _connect(srv) as sock:
        assert _handshake(sock, "OAUTHBEARER").error_code == 0
        answer = _authenticate(sock, oauth_token(token))
        assert answer.error_code == 0 and 290_000 < answer.session_lifetime_ms <= 300_000
        assert _metadata(sock).brokers
        srv.clock.advance(301_000)
        sock.sendall(METADATA)
        assert _closed(sock)
