"""SASL users made and removed by a test (`add_user`, `remove_user`, `users`, and `/users`
of the HTTP API): a SCRAM user authenticates as one made with AlterUserScramCredentials
does, and is still there after a restart; a PLAIN user until the broker stops; a removed
user is refused at its next authentication."""

from __future__ import annotations

from typing import Any

import pytest

from kcsim.protocol.errors import ErrorCode

from ..saslkit import plain_token
from ..test_sasl import SASL, _authenticate, _connect, _handshake, _scram_login
from .test_http_api import call, python_refusal


def _plain_login(srv, user: str, password: str) -> int:
    with _connect(srv) as sock:
        _handshake(sock, "PLAIN")
        return _authenticate(sock, plain_token(user, password)).error_code


@pytest.mark.kcsim(**SASL)
def test_users_are_added_and_removed_for_each_mechanism(kcsim_persistent):
    srv = kcsim_persistent
    assert _scram_login(srv, "zoe", "zoe-secret") == ErrorCode.SASL_AUTHENTICATION_FAILED
    srv.add_user("zoe", "zoe-secret")
    srv.add_user("zoe", "zoe-256", mechanism="SCRAM-SHA-256", iterations=8192)
    srv.add_user("yann", "yann-secret", mechanism="PLAIN")
    assert srv.users() == {"alice": ["PLAIN"], "yann": ["PLAIN"],
                           "zoe": ["SCRAM-SHA-256", "SCRAM-SHA-512"]}
    assert _scram_login(srv, "zoe", "zoe-secret") == 0
    assert _scram_login(srv, "zoe", "zoe-256", "SCRAM-SHA-256") == 0
    assert _plain_login(srv, "yann", "yann-secret") == 0
    assert srv.remove_user("zoe", "SCRAM-SHA-256") == ["SCRAM-SHA-256"]
    assert _scram_login(srv, "zoe", "zoe-256", "SCRAM-SHA-256") == (
        ErrorCode.SASL_AUTHENTICATION_FAILED)
    srv.restart()  # SCRAM users are records; PLAIN users are settings, gone with the broker
    assert srv.users() == {"alice": ["PLAIN"], "zoe": ["SCRAM-SHA-512"]}
    assert _scram_login(srv, "zoe", "zoe-secret") == 0
    assert srv.remove_user("zoe") == ["SCRAM-SHA-512"]
    assert srv.remove_user("zoe") == []
    assert _scram_login(srv, "zoe", "zoe-secret") == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert srv.remove_user("alice") == ["PLAIN"]
    assert _plain_login(srv, "alice", "alice-secret") == ErrorCode.SASL_AUTHENTICATION_FAILED


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "", "password": "x"}, "name: must not be empty"),
    ({"name": "u", "password": ""}, "password: must not be empty"),
    ({"name": "u", "password": "x", "mechanism": "GSSAPI"},
     "mechanism: expected one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, got 'GSSAPI'"),
    ({"name": "u", "password": "x", "iterations": 100},
     "iterations: SCRAM-SHA-512 takes 4096 to 16384, got 100"),
])
async def test_a_bad_user_is_refused_naming_the_field(kcsim_trio: Any, fields, message) -> None:
    assert python_refusal(kcsim_trio.add_user, **fields) == message
    status, _, answer = await call(kcsim_trio, "POST", "/users", fields)
    assert (status, answer) == (400, {"error": message, "field": message.split(":")[0]})


async def test_users_over_http(kcsim_trio: Any) -> None:
    status, _, answer = await call(kcsim_trio, "POST", "/users",
                                   {"name": "zoe", "password": "zoe-secret"})
    assert (status, answer) == (200, {"users": {"zoe": ["SCRAM-SHA-512"]}})
    await call(kcsim_trio, "POST", "/users",
               {"name": "yann", "password": "p", "mechanism": "PLAIN"})
    _, _, listed = await call(kcsim_trio, "GET", "/users")
    assert listed == {"users": {"yann": ["PLAIN"], "zoe": ["SCRAM-SHA-512"]}}
    assert kcsim_trio.users() == listed["users"]
    _, _, removed = await call(kcsim_trio, "DELETE", "/users", {"name": "zoe"})
    assert removed == {"name": "zoe", "removed": ["SCRAM-SHA-512"]}
    _, _, listed = await call(kcsim_trio, "GET", "/users")
    assert listed == {"users": {"yann": ["PLAIN"]}}


def test_a_scram_user_is_logged_under_every_fsync_policy(kcsim_embedded_factory, tmp_path):
    srv = kcsim_embedded_factory(**SASL, in_memory=False, data_dir=str(tmp_path / "data"),
                                 fsync="always")
    srv.add_user("zoe", "zoe-secret")
    assert _scram_login(srv, "zoe", "zoe-secret") == 0
    srv.restart()
    assert _scram_login(srv, "zoe", "zoe-secret") == 0
