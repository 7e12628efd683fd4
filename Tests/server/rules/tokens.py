"""The ID tokens the rules cases send: one claims map per identity, unsigned or signed HS256.

Responsible for: the claims of a case's `auth` (what request.auth.token holds, recorded into
differential_cases.json) and the two ways of carrying them: an unsigned JWT (`alg: none`, which
the Firestore emulator accepts) and the same claims signed HS256 with a shared secret (what
`ember serve --jwt-secret-file` checks: signature, exp/iat, aud == project, iss).

    unsigned_token({"uid": "alice"})                 # "eyJhbGciOiJub25lIi...eyJpc3Mi...."
    hs256_token({"uid": "alice"}, b"secret")         # "eyJhbGciOiJIUzI1NiIs....<signature>"
"""
import base64
import hashlib
import hmac
import json

PROJECT = "demo-rules"
ISSUED = 1_700_000_000          # 2023-11-14; iat and auth_time of every token
EXPIRES = 4_102_444_800         # 2100-01-01


def b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64_json(obj):
    return b64(json.dumps(obj, separators=(",", ":")).encode())


def claims_of(auth):
    """Every claim of the token; the Swift test gives the same map to request.auth.token."""
    claims = {"iss": f"https://securetoken.google.com/{PROJECT}", "aud": PROJECT, "sub": auth["uid"],
              "user_id": auth["uid"], "iat": ISSUED, "auth_time": ISSUED, "exp": EXPIRES,
              "firebase": {"sign_in_provider": "custom", "identities": {}}}
    claims.update(auth.get("claims", {}))
    return claims


def unsigned_token(auth):
    return b64_json({"alg": "none", "typ": "JWT"}) + "." + b64_json(claims_of(auth)) + "."


def hs256_token(auth, secret):
    """The claims of `auth` signed with HMAC-SHA256 under `secret` (bytes)."""
    signing_input = b64_json({"alg": "HS256", "typ": "JWT"}) + "." + b64_json(claims_of(auth))
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(signature)
