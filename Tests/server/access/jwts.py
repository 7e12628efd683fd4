"""ID tokens for the access tests: any claims, any header, signed HS256/384/512, RS256 or ES256.

Responsible for: the tokens a caller of `ember serve --rules` sends, good and bad alike (expired,
issued in the future, wrong audience or issuer, empty subject, `alg: none`, an unexpected alg,
signed with the wrong key), and the JSON Web Key Set (--jwks) of freshly generated RSA and P-256
keys. The claims start from ../rules/tokens.py's (project demo-rules, expiring in 2100).

    claims("alice")                                   # sub/user_id alice, aud demo-rules, ...
    claims("alice", exp=now() - 120)                  # expired beyond the 30 s leeway
    hs(claims("alice"), b"0123456789abcdef")          # "eyJhbGciOiJIUzI1NiIs...."
    key = KeyPair.rsa("rsa-1"); key.sign(claims("alice")); jwks([key])

RS256/ES256 need the `cryptography` package (CRYPTOGRAPHY_MISSING says why it cannot be used).
"""
import hashlib
import hmac
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules"))
from tokens import PROJECT, b64, b64_json, claims_of  # noqa: E402

try:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
    CRYPTOGRAPHY_MISSING = None
except ImportError as e:                              # pragma: no cover - depends on the venv
    CRYPTOGRAPHY_MISSING = (f"the Python package `cryptography` is not importable in {sys.executable} "
                            f"({e}): RS256/ES256 keys cannot be generated")

NO_KID = object()            # KeyPair.sign(..., kid=NO_KID): a header without kid
HMAC_HASHES = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}


def now():
    return int(time.time())


def claims(uid, project=PROJECT, **overrides):
    """The claims of a token for `uid` on `project`; `overrides` replace (or add) claims."""
    out = claims_of({"uid": uid})
    out.update({"iss": f"https://securetoken.google.com/{project}", "aud": project})
    out.update(overrides)
    return out


def unsigned(payload, alg="none"):
    """A JWT with no signature (`alg: none` by default)."""
    return b64_json({"alg": alg, "typ": "JWT"}) + "." + b64_json(payload) + "."


def hs(payload, secret, alg="HS256"):
    """`payload` signed with HMAC under `secret` (bytes); alg HS256, HS384 or HS512."""
    signing_input = b64_json({"alg": alg, "typ": "JWT"}) + "." + b64_json(payload)
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), HMAC_HASHES[alg]).digest())


def _int_bytes(n, length=None):
    return n.to_bytes(length or (n.bit_length() + 7) // 8, "big")


class KeyPair:
    """One signing key with its kid: RSA 2048 (RS256) or P-256 (ES256)."""

    def __init__(self, kid, alg, private_key):
        self.kid, self.alg, self.private_key = kid, alg, private_key

    @classmethod
    def rsa(cls, kid):
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid):
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self):
        """The public key as a JWK (with kid, alg and use)."""
        numbers = self.private_key.public_key().public_numbers()
        if self.alg == "RS256":
            return {"kty": "RSA", "kid": self.kid, "alg": "RS256", "use": "sig",
                    "n": b64(_int_bytes(numbers.n)), "e": b64(_int_bytes(numbers.e))}
        return {"kty": "EC", "kid": self.kid, "alg": "ES256", "use": "sig", "crv": "P-256",
                "x": b64(_int_bytes(numbers.x, 32)), "y": b64(_int_bytes(numbers.y, 32))}

    def sign(self, payload, kid=None):
        """`payload` signed with this key; the header names `kid` (this key's unless given; no
        kid at all for NO_KID)."""
        header = {"alg": self.alg, "typ": "JWT", "kid": kid or self.kid}
        if kid is NO_KID:
            del header["kid"]
        signing_input = (b64_json(header) + "." + b64_json(payload)).encode()
        if self.alg == "RS256":
            signature = self.private_key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        else:                                         # JOSE wants r || s, 32 bytes each, not DER
            r, s = decode_dss_signature(self.private_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
            signature = _int_bytes(r, 32) + _int_bytes(s, 32)
        return signing_input.decode() + "." + b64(signature)


def jwks(keys):
    """The JSON Web Key Set text of `keys` (KeyPair objects)."""
    return json.dumps({"keys": [k.jwk() for k in keys]})
