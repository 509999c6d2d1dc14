"""The SSL listeners' certificates, their server context, and who a client certificate names.

Every SSL (and SASL_SSL) listener serves one `ssl.SSLContext`, built at start from PEM files
(`ssl_keystore_location`: the certificate chain and its private key;
`ssl_truststore_location`: the CAs that sign client certificates), or, when no key
store is given, from a CA kcsim makes itself with trustme. That CA is kept in the
data dir's `tls/` (reused by the next start, so clients configured with it keep
working over restarts) or, in memory mode, in a temporary directory removed at
stop; a fresh server certificate for every name the listeners are reached by is
issued from it at each start. Clients trust `ca_file`; tests get client
certificates from the same CA (`issue_client_cert`).

A connection's principal is Kafka's: `User:` and the subject of the client's
certificate as an RFC 2253 string (`User:CN=client,O=test`), or `User:ANONYMOUS`
for a connection without one (PLAINTEXT, or SSL without client authentication). On a
SASL_SSL listener the principal is the one SASL authenticated (`User:` + its user name).
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import re
import shutil
import ssl
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .listeners import TLS_PROTOCOLS, WILDCARD_HOSTS

if TYPE_CHECKING:
    import trustme

    from .config import Config

log = logging.getLogger("kcsim.server")

ANONYMOUS = "User:ANONYMOUS"  # the principal of a connection that authenticated nobody
GENERATED_DIR = "tls"  # under the data dir
CA_FILE = "ca.pem"
CA_KEY_FILE = "ca-key.pem"
_LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
_NAME = re.compile(r"[A-Za-z0-9.:*-]+")  # a host name or address a certificate can name
_VERIFY = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


class ClientCert(NamedTuple):
    """A client certificate issued by the generated CA, as PEM files."""

    cert_file: str  # the certificate
    key_file: str  # its private key, PKCS#8 unencrypted (what Java's PEM key stores read)
    principal: str  # what the broker will call a client presenting it


class Tls:
    """The SSL listeners' context, and the generated CA when kcsim made one."""

    def __init__(self, context: ssl.SSLContext, ca: trustme.CA | None = None,
                 directory: str | None = None, temporary: bool = False) -> None:
        self.context = context
        self._ca = ca
        self._dir = directory
        self._temporary = temporary
        self._issued = 0

    @property
    def ca_file(self) -> str | None:
        """The generated CA's certificate (PEM) for clients to trust; None with a key store."""
        return None if self._dir is None or self._ca is None else os.path.join(self._dir, CA_FILE)

    def issue_client_cert(self, common_name: str = "client",
                          organization: str | None = None) -> ClientCert:
        """A client certificate from the generated CA whose subject is CN=`common_name`
        (and O=`organization`): its principal is `User:CN=client,O=...`."""
        if self._ca is None or self._dir is None:
            raise RuntimeError("kcsim made no CA: it serves the certificate of "
                               "--ssl-keystore-location; issue client certificates from your own CA")
        cert, key = _client_cert(self._ca, common_name, organization)
        self._issued += 1
        stem = os.path.join(self._dir, f"client-{self._issued}")
        Path(stem + ".pem").write_bytes(cert)
        _write_private(stem + "-key.pem", key)
        return ClientCert(stem + ".pem", stem + "-key.pem", principal_of(cert, pem=True))

    def close(self) -> None:
        """Remove a temporary CA (memory mode); a data dir's stays for the next start."""
        if self._temporary and self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def open_tls(config: Config) -> Tls | None:
    """The TLS of the SSL and SASL_SSL listeners, or None when no listener speaks either."""
    plans = [p for p in config.listener_plans if p.protocol in TLS_PROTOCOLS]
    if not plans:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.verify_mode = _VERIFY[config.ssl_client_auth]
    if config.ssl_keystore_location is not None:
        context.load_cert_chain(config.ssl_keystore_location, password=config.ssl_key_password)
        if config.ssl_truststore_location is not None:
            context.load_verify_locations(config.ssl_truststore_location)
        return Tls(context)
    names = {*_LOCAL_NAMES, platform.node()}
    names.update(p.advertise(0).host for p in plans)
    names.update(p.host for p in plans if p.host not in WILDCARD_HOSTS)
    directory, temporary = _ca_dir(config)
    ca = _load_or_make_ca(directory)
    ca.issue_cert(*sorted(n for n in names if _NAME.fullmatch(n)),
                  common_name="kcsim").configure_cert(context)
    if config.ssl_truststore_location is not None:
        context.load_verify_locations(config.ssl_truststore_location)
    else:
        ca.configure_trust(context)
    tls = Tls(context, ca, directory, temporary)
    log.info("SSL listeners serve a certificate of kcsim's own CA; clients trust %s",
             tls.ca_file)
    return tls


def _ca_dir(config: Config) -> tuple[str, bool]:
    if config.in_memory:
        return tempfile.mkdtemp(prefix="kcsim-tls-"), True
    directory = os.path.join(config.data_dir, GENERATED_DIR)
    os.makedirs(directory, exist_ok=True)
    return directory, False


def _load_or_make_ca(directory: str) -> trustme.CA:
    import trustme

    cert, key = Path(directory, CA_FILE), Path(directory, CA_KEY_FILE)
    with contextlib.suppress(OSError, ValueError):
        return trustme.CA.from_pem(cert.read_bytes(), key.read_bytes())
    ca = trustme.CA(organization_name="kcsim")
    _write_private(str(key), ca.private_key_pem.bytes())
    ca.cert_pem.write_to_path(str(cert))
    return ca


def _client_cert(ca: trustme.CA, common_name: str,
                 organization: str | None) -> tuple[bytes, bytes]:
    """A client certificate (PEM) and its PKCS#8 key, signed by `ca`, with just the subject
    asked for (trustme's own would add an organizational unit)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    issuer = x509.load_pem_x509_certificate(ca.cert_pem.bytes())
    signer = serialization.load_pem_private_key(ca.private_key_pem.bytes(), None)
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization)] if organization else []
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([*names, x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(issuer.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(signer, hashes.SHA256()))  # type: ignore[arg-type]
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def principal_of(cert: bytes | None, *, pem: bool = False) -> str:
    """Kafka's principal for a client certificate (DER, or PEM): `User:` + its subject
    as RFC 2253 writes it; `User:ANONYMOUS` without one."""
    if not cert:
        return ANONYMOUS
    from cryptography import x509

    parsed = x509.load_pem_x509_certificate(cert) if pem else x509.load_der_x509_certificate(cert)
    return "User:" + parsed.subject.rfc4514_string()
