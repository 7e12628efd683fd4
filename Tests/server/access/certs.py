"""A self-signed TLS certificate for 127.0.0.1 and localhost, made at test time.

Responsible for: cert.pem and key.pem (RSA 2048, one day, subjectAltName DNS:localhost and
IP:127.0.0.1) in a given directory, made with the `openssl` CLI if it is on PATH, else with the
`cryptography` package; CERTS_MISSING says why neither can (nothing is installed by hand).

    cert, key = self_signed(tmpdir)          # paths; open(cert, "rb").read() is the client's root
"""
import datetime
import ipaddress
import os
import shutil
import subprocess

OPENSSL_SECONDS = 30

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
    HAVE_CRYPTOGRAPHY = True
except ImportError:                                  # pragma: no cover - depends on the venv
    HAVE_CRYPTOGRAPHY = False

CERTS_MISSING = None if shutil.which("openssl") or HAVE_CRYPTOGRAPHY else \
    "neither the `openssl` CLI nor the Python package `cryptography` is available to make a test certificate"


def self_signed(directory):
    """(cert path, key path), both PEM."""
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    if shutil.which("openssl"):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "1", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=OPENSSL_SECONDS)
        return cert, key
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(private.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(private, hashes.SHA256()))
    with open(cert, "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(key, "wb") as f:
        f.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    return cert, key
