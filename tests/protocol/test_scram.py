"""SCRAM's server side: RFC 7677's exchange verbatim, and the failures Kafka names."""

from __future__ import annotations

import base64

import pytest

from kcsim.protocol.scram import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramFailed,
    ScramServer,
    credential,
    make_credential,
    salted_password,
    username,
)

from ..server.saslkit import ScramClient

# RFC 7677, section 3: user "user", password "pencil".
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SERVER_FIRST = (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def _rfc_server() -> ScramServer:
    stored = credential(SCRAM_SHA_256, SALT, salted_password(SCRAM_SHA_256, "pencil", SALT, 4096),
                        4096)
    return ScramServer(SCRAM_SHA_256, {"user": stored}.get, nonce=lambda: SERVER_NONCE)


def test_the_exchange_of_rfc_7677():
    server = _rfc_server()
    assert server.step(CLIENT_FIRST) == SERVER_FIRST
    assert not server.complete
    assert server.step(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.user == "user"


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_a_client_with_the_password_authenticates_and_verifies_the_server(mechanism):
    server = ScramServer(mechanism, {"alice": make_credential(mechanism, "s3cret")}.get)
    client = ScramClient(mechanism.name, "alice", "s3cret")
    assert client.verify(server.step(client.final(server.step(client.first()))))
    assert server.user == "alice"


def test_a_wrong_password_fails_without_saying_why_to_the_client():
    server = ScramServer(SCRAM_SHA_512, {"alice": make_credential(SCRAM_SHA_512, "s3cret")}.get)
    client = ScramClient("SCRAM-SHA-512", "alice", "s3cret")
    server_first = server.step(client.first())
    with pytest.raises(ScramFailed, match="Invalid client credentials") as failed:
        server.step(client.final(server_first, password="guess"))
    assert failed.value.client_message is None
    assert not server.complete


def test_an_unknown_user_fails_like_a_wrong_password():
    server = ScramServer(SCRAM_SHA_512, {}.get)
    with pytest.raises(ScramFailed) as failed:
        server.step(ScramClient("SCRAM-SHA-512", "nobody", "x").first())
    assert failed.value.client_message is None


def test_an_authorization_id_other_than_the_user_is_refused_in_kafkas_words():
    server = ScramServer(SCRAM_SHA_256, _rfc_server()._lookup)
    with pytest.raises(ScramFailed) as failed:
        server.step(b"n,a=admin,n=user,r=abc")
    assert failed.value.client_message == ("Authentication failed: Client requested an "
                                           "authorization id that is different from username")


@pytest.mark.parametrize("first", [b"", b"y,,n=user,r=abc", b"n,,n=user", b"\xff\xfe",
                                   b"n,,n=us=er,r=abc", b"n,,n=user,r=a,b"])
def test_a_malformed_first_message_fails(first):
    with pytest.raises(ScramFailed):
        _rfc_server().step(first)


@pytest.mark.parametrize("final", [
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",  # nonce
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA",  # short proof
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",  # no proof
    b"",
])
def test_a_bad_final_message_fails(final):
    server = _rfc_server()
    server.step(CLIENT_FIRST)
    with pytest.raises(ScramFailed):
        server.step(final)
    assert not server.complete


def test_too_few_iterations_are_refused_as_kafka_refuses_them():
    weak = credential(SCRAM_SHA_256, SALT, salted_password(SCRAM_SHA_256, "p", SALT, 10), 10)
    with pytest.raises(ScramFailed, match="Iterations 10 is less than the minimum 4096"):
        ScramServer(SCRAM_SHA_256, {"user": weak}.get).step(CLIENT_FIRST)


def test_user_names_in_scram_form():
    assert username("a=2Cb=3Dc") == "a,b=c"
    with pytest.raises(ScramFailed):
        username("a=41")
