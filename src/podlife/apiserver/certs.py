"""Certificates ``podlife up`` makes for itself at each start: the serving certificate of ``--tls`` and the front
proxy's CA and client certificate (kubeadm's certs phase makes the same kinds: cmd/kubeadm/app/phases/certs). They
carry what ``openssl req -x509`` and ``openssl x509 -req`` put in them (a self-signed one is a CA with its key
identifiers), made with the ``cryptography`` package instead of the openssl command, which a machine may lack."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from typing import Any

# the validity kubeadm gives its CAs is ten years and its leaves one; podlife's certificates live for one run
DAYS = 365


def _key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem(cert: Any, key: Any) -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives import serialization

    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _builder(cn: str, issuer: Any, key: Any) -> Any:
    """A certificate of subject CN=``cn`` and ``key`` issued by ``issuer`` (an x509.Name; None: itself)."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    # a certificate's times are the machine's, as a TLS peer checks them: not the model's clock
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject if issuer is None else issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=DAYS))
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))


def self_signed(cn: str, names: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """A self-signed CA certificate and its key (PEM), with ``names`` as its subject alternative names (IP
    addresses as such)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    key = _key()
    b = (_builder(cn, None, key)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False)
         .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True))
    if names:
        b = b.add_extension(x509.SubjectAlternativeName([_general_name(n) for n in dict.fromkeys(names)]),
                            critical=False)
    return _pem(b.sign(key, hashes.SHA256()), key)


def client_signed_by(ca_cert_pem: bytes, ca_key_pem: bytes, cn: str) -> tuple[bytes, bytes]:
    """A client certificate (clientAuth; digitalSignature and keyEncipherment) signed by the CA, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import ExtendedKeyUsageOID

    ca_cert = x509.load_pem_x509_certificate(ca_cert_pem)
    ca_key: Any = serialization.load_pem_private_key(ca_key_pem, password=None)
    key = _key()
    b = (_builder(cn, ca_cert.subject, key)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
         .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
         .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, content_commitment=False,
                                      data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                      crl_sign=False, encipher_only=False, decipher_only=False), critical=True))
    return _pem(b.sign(ca_key, hashes.SHA256()), key)


def _general_name(name: str) -> Any:
    from cryptography import x509

    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


def load_chain(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Give ``ctx`` the certificate and key: the ssl module reads them from files only, so they are on disk in a
    private temporary directory (the key readable by its owner alone) while they are loaded, and gone after."""
    with tempfile.TemporaryDirectory(prefix="podlife-tls-") as tmp:
        cert, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        with open(cert, "wb") as f:
            f.write(cert_pem)
        with os.fdopen(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(key_pem)
        ctx.load_cert_chain(cert, key)
