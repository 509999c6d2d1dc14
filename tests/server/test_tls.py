"""SSL listeners over real sockets: certificates, principals, and what is not TLS."""

from __future__ import annotations

import json
import logging
import os
import socket
import ssl
import struct
import subprocess
import sys
import time
import urllib.request

import pytest
import trustme

from kcsim.server import config
from kcsim.server.embedded import EmbeddedServer

from .rawkafka import api_versions_frame

SSL_AND_PLAINTEXT = "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0"


def _address(srv: EmbeddedServer, name: str) -> tuple[str, int]:
    (listener,) = [x for x in srv.server.advertised if x.name == name]
    return listener.host, listener.port


def _api_versions_over_tls(srv: EmbeddedServer, context: ssl.SSLContext) -> int:
    """Ask ApiVersions through the SSL listener; the answer's correlation id."""
    with socket.create_connection(_address(srv, "SSL"), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        sock.sendall(api_versions_frame(41))
        head = _read(sock, 8)
        _read(sock, struct.unpack(">i", head[:4])[0] - 4)
        return int(struct.unpack(">i", head[4:])[0])


def _read(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, "closed by the broker"
        out += chunk
    return out


def _client_context(srv: EmbeddedServer) -> ssl.SSLContext:
    assert srv.ssl_ca_file is not None
    return ssl.create_default_context(cafile=srv.ssl_ca_file)


def _closed_by_broker(sock: socket.socket, within_s: float = 10) -> bool:
    sock.settimeout(within_s)
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True


# -- certificates --------------------------------------------------------------------------


def test_an_ssl_listener_serves_a_certificate_of_a_ca_made_at_start(kcsim_ssl):
    assert os.path.isfile(kcsim_ssl.ssl_ca_file)
    assert _api_versions_over_tls(kcsim_ssl, _client_context(kcsim_ssl)) == 41
    # the PLAINTEXT listener beside it is untouched
    with socket.create_connection(_address(kcsim_ssl, "PLAINTEXT"), timeout=10) as sock:
        sock.sendall(api_versions_frame(42))
        assert struct.unpack(">i", _read(sock, 8)[4:])[0] == 42


def test_a_broker_without_ssl_listeners_makes_no_ca(kcsim):
    assert kcsim.ssl_ca_file is None


def test_a_client_that_does_not_trust_the_ca_is_refused(kcsim_ssl):
    with pytest.raises(ssl.SSLCertVerificationError):
        _api_versions_over_tls(kcsim_ssl, ssl.create_default_context())


def test_the_temporary_ca_of_a_broker_in_memory_is_removed_at_stop():
    with EmbeddedServer(listeners="SSL://127.0.0.1:0") as srv:
        ca_file = srv.ssl_ca_file
        assert ca_file is not None and os.path.isfile(ca_file)
    assert not os.path.exists(ca_file)


def test_a_data_dir_keeps_its_ca_over_restarts(tmp_path):
    srv = EmbeddedServer(listeners="SSL://127.0.0.1:0", in_memory=False,
                         data_dir=str(tmp_path / "data")).start()
    try:
        ca_file = srv.ssl_ca_file
        assert ca_file == str(tmp_path / "data" / "tls" / "ca.pem")
        context = _client_context(srv)  # loaded once, as clients do
        srv.restart()
        assert srv.ssl_ca_file == ca_file
        assert _api_versions_over_tls(srv, context) == 41
    finally:
        srv.stop()


def test_a_key_store_and_trust_store_from_pem_files(tmp_path, kcsim_embedded_factory):
    ca = trustme.CA()
    server_cert = ca.issue_cert("localhost", "127.0.0.1")
    keystore = tmp_path / "server.pem"
    server_cert.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    truststore = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(truststore))
    srv = kcsim_embedded_factory(listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                                 ssl_keystore_location=str(keystore),
                                 ssl_truststore_location=str(truststore))
    assert srv.ssl_ca_file is None  # the user's own CA
    context = ssl.create_default_context()
    ca.configure_trust(context)
    ca.issue_cert("client@example.org", common_name="client").configure_cert(context)
    assert _api_versions_over_tls(srv, context) == 41
    assert srv.requests("ApiVersions")[-1].principal.startswith("User:CN=client,")


@pytest.fixture
def pem_files(tmp_path):
    ca = trustme.CA()
    cert = ca.issue_cert("localhost")
    keystore = tmp_path / "server.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(keystore))
    (tmp_path / "garbage.pem").write_text("not a certificate\n")
    return tmp_path


@pytest.mark.parametrize(("settings", "message"), [
    ({"ssl_keystore_location": "{d}/missing.pem"},
     "ssl_keystore_location='{d}/missing.pem': no such file"),
    ({"ssl_keystore_location": "{d}/garbage.pem"},
     "ssl_keystore_location='{d}/garbage.pem': not a PEM certificate chain with its private key"),
    ({"ssl_key_password": "secret"},
     "--ssl-key-password is given without --ssl-keystore-location"),
    ({"ssl_keystore_location": "{d}/server.pem", "ssl_client_auth": "required"},
     "ssl_client_auth='required' with ssl_keystore_location='{d}/server.pem' needs "
     "--ssl-truststore-location"),
    ({"ssl_truststore_location": "{d}/garbage.pem"},
     "ssl_truststore_location='{d}/garbage.pem': not PEM certificates"),
    ({"ssl_client_auth": "sometimes"},
     "ssl_client_auth='sometimes': expected one of none, requested, required"),
])
def test_ssl_settings_that_cannot_work_are_named(pem_files, settings, message):
    settings = {k: v.format(d=pem_files) for k, v in settings.items()}
    with pytest.raises(config.ConfigError) as excinfo:
        config.load(env={}, listeners="SSL://:0", **settings)
    assert str(excinfo.value).startswith(message.format(d=pem_files))


def test_serve_gives_the_ca_in_its_ready_line_and_control_api(tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KCSIM_")}
    proc = subprocess.Popen([sys.executable, "-m", "kcsim", "serve", "--data-dir",
                             str(tmp_path), "--listeners", "SSL://127.0.0.1:0",
                             "--control-port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=clean)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("kcsim ready on 127.0.0.1:"), line
        ca_file = f"{tmp_path}/tls/ca.pem"
        assert line.rstrip().endswith(f"; SSL CA {ca_file}")
        control = line.split("; control API ")[1].split(";")[0]
        with urllib.request.urlopen(control + "/", timeout=10) as answer:
            assert json.load(answer)["ssl_ca_file"] == ca_file
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# -- principals ----------------------------------------------------------------------------


def test_a_client_certificate_is_the_principal_of_its_requests(kcsim_ssl):
    cert = kcsim_ssl.issue_client_cert("client", "test")
    assert cert.principal == "User:CN=client,O=test"
    mutual = _client_context(kcsim_ssl)
    mutual.load_cert_chain(cert.cert_file, cert.key_file)
    _api_versions_over_tls(kcsim_ssl, mutual)
    _api_versions_over_tls(kcsim_ssl, _client_context(kcsim_ssl))
    with socket.create_connection(_address(kcsim_ssl, "PLAINTEXT"), timeout=10) as sock:
        sock.sendall(api_versions_frame(42))
        _read(sock, 8)
    kcsim_ssl.wait_for_request("ApiVersions", count=3)
    assert [r.principal for r in kcsim_ssl.requests("ApiVersions")] == [
        "User:CN=client,O=test", "User:ANONYMOUS", "User:ANONYMOUS"]


@pytest.mark.kcsim(ssl_client_auth="required")
def test_required_client_auth_refuses_a_client_without_a_certificate(kcsim_ssl, caplog):
    caplog.set_level(logging.WARNING, "kcsim.server")
    with pytest.raises((ssl.SSLError, ConnectionError, AssertionError)):
        _api_versions_over_tls(kcsim_ssl, _client_context(kcsim_ssl))
    cert = kcsim_ssl.issue_client_cert("app")
    mutual = _client_context(kcsim_ssl)
    mutual.load_cert_chain(cert.cert_file, cert.key_file)
    assert _api_versions_over_tls(kcsim_ssl, mutual) == 41
    assert kcsim_ssl.requests("ApiVersions")[-1].principal == "User:CN=app"
    assert any("TLS handshake failed" in r.getMessage() for r in caplog.records)


# -- what is not TLS -----------------------------------------------------------------------


def _client_hello() -> bytes:
    """The first flight of a TLS client: its ClientHello record."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.kcsim(ssl_handshake_timeout_ms=500)
@pytest.mark.parametrize("sent", [b"", "half a ClientHello"])
def test_a_handshake_that_stops_half_way_is_dropped_after_the_time_limit(kcsim_ssl, caplog,
                                                                           sent):
    caplog.set_level(logging.INFO, "kcsim.server")
    first = _client_hello()[:40] if sent else b""
    with socket.create_connection(_address(kcsim_ssl, "SSL"), timeout=10) as stuck:
        stuck.sendall(first)
        started = time.monotonic()
        # the broker serves others meanwhile
        assert _api_versions_over_tls(kcsim_ssl, _client_context(kcsim_ssl)) == 41
        assert _closed_by_broker(stuck)
        assert time.monotonic() - started >= 0.4
    assert [m for m in _warnings(caplog) if "TLS handshake not done within 500 ms" in m]


@pytest.mark.parametrize(("first", "said"), [
    (api_versions_frame(1), "not a TLS handshake (a PLAINTEXT client?)"),
    (b"GET / HTTP/1.1\r\nHost: kcsim\r\n\r\n", "not a TLS handshake (first byte 0x47)"),
    (b"\x16\x03\x01\x00\x05hello", "TLS handshake failed"),
])
def test_what_is_not_a_client_hello_is_closed_with_one_line(kcsim_ssl, caplog, first, said):
    caplog.set_level(logging.INFO, "kcsim.server")
    with socket.create_connection(_address(kcsim_ssl, "SSL"), timeout=10) as sock:
        sock.sendall(first)
        assert _closed_by_broker(sock)
    assert _api_versions_over_tls(kcsim_ssl, _client_context(kcsim_ssl)) == 41
    lines = [m for m in _warnings(caplog) if "on SSL listener SSL" in m]
    assert len(lines) == 1 and said in lines[0], lines
