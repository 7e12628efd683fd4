"""Which ID tokens `ember serve --rules` accepts, and who a token makes the caller.

Responsible for: every UNAUTHENTICATED case ("Invalid ID token: ...": malformed, forged, tampered,
expired beyond the 30 s leeway, issued in the future, `alg: none`, an alg other than
HS256/RS256/ES256, an empty sub; and a wrong aud or iss, including a good token sent to another
project), each on a document anyone may read, so only the token can refuse it; the leeway
itself; the admin token (rules do not bind it); --token-issuer; and RS256/ES256 tokens from a
JWKS generated here (a token's uid reaches request.auth.uid; an unknown kid or another key is
refused; so is a kid naming no key of the set). Two servers: one with an HS256 secret (written with a trailing newline: trimmed), an
admin token and a JWKS; one with --token-issuer.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jwts  # noqa: E402
from access_calls import Caller  # noqa: E402
from access_outcome import DENIED  # noqa: E402
from guarded_server import Guarded, rules  # noqa: E402
from jwts import PROJECT, b64, b64_json, claims, hs, now, unsigned  # noqa: E402

import wire  # noqa: E402  (../rules, put on sys.path by guarded_server)

RULES = rules("""\
    match /open/{id} {
      allow read: if true;
    }
    match /users/{uid} {
      allow read: if request.auth != null && request.auth.uid == uid;
    }
    match /closed/{id} {
      allow read, write: if false;
    }
""")
SEED = {"open/o1": {"v": 1}, "users/alice": {"name": "alice"}, "users/bob": {"name": "bob"},
        "closed/c1": {"v": 1}}
ISSUER = "https://issuer.example.test/{project}/tokens"
OTHER_PROJECT = "demo-other-project"


@pytest.fixture(scope="module")
def keys():
    """The JWKS's keys (and a stranger's key, not in it); None without `cryptography`."""
    if jwts.CRYPTOGRAPHY_MISSING:
        return None
    return {"rsa": jwts.KeyPair.rsa("rsa-1"), "ec": jwts.KeyPair.ec("ec-1"),
            "stranger_ec": jwts.KeyPair.ec("ec-1"), "stranger_rsa": jwts.KeyPair.rsa("rsa-1")}


@pytest.fixture(scope="module")
def g(keys):
    jwks = jwts.jwks([keys["rsa"], keys["ec"]]) if keys else None
    with Guarded.running(RULES, jwks_text=jwks, seed=SEED) as server:
        yield server


@pytest.fixture(scope="module")
def g_issuer():
    with Guarded.running(RULES, extra_args=["--token-issuer", ISSUER], seed=SEED) as server:
        yield server


def swap_payload(token, payload):
    """`token` with its payload replaced and its signature kept (a tampered token)."""
    header, _, signature = token.split(".")
    return f"{header}.{b64_json(payload)}.{signature}"


# name -> a function of the server's secret giving the bearer; each must be UNAUTHENTICATED
# with "Invalid ID token" in the message.
INVALID = {
    "not_a_jwt": lambda s: "not-a-jwt-at-all-0123456789",
    "three_garbage_parts": lambda s: "abc.def.ghi",
    "header_not_json": lambda s: b64(b"{not json") + "." + b64_json(claims("alice")) + "." + b64(b"x" * 32),
    "no_signature_part": lambda s: ".".join(hs(claims("alice"), s).split(".")[:2]),
    "empty_signature": lambda s: ".".join(hs(claims("alice"), s).split(".")[:2]) + ".",
    "forged_other_secret": lambda s: hs(claims("alice"), b"another-secret-of-32-bytes-000000"),
    "tampered_payload": lambda s: swap_payload(hs(claims("bob"), s), claims("alice")),
    "expired_beyond_leeway": lambda s: hs(claims("alice", iat=now() - 3700, exp=now() - 60), s),
    "issued_in_the_future": lambda s: hs(claims("alice", iat=now() + 600, exp=now() + 4200), s),
    "alg_none": lambda s: unsigned(claims("alice")),
    "alg_none_with_signature": lambda s: unsigned(claims("alice")) + b64(b"sig"),
    "alg_HS384": lambda s: hs(claims("alice"), s, alg="HS384"),
    "alg_HS512": lambda s: hs(claims("alice"), s, alg="HS512"),
    "empty_sub": lambda s: hs(claims("", user_id="alice"), s),
}

# Valid signatures, but not for this project or issuer: UNAUTHENTICATED (message unspecified).
WRONG_AUDIENCE = {
    "aud_other_project": lambda s: hs(claims("alice", aud=OTHER_PROJECT), s),
    "iss_other_project": lambda s: hs(claims("alice", iss=f"https://securetoken.google.com/{OTHER_PROJECT}"), s),
    "iss_unrelated": lambda s: hs(claims("alice", iss="https://accounts.example.test"), s),
    "aud_missing": lambda s: hs({k: v for k, v in claims("alice").items() if k != "aud"}, s),
    "iss_missing": lambda s: hs({k: v for k, v in claims("alice").items() if k != "iss"}, s),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_token_is_unauthenticated(g, case):
    out = g.caller.get("open/o1", INVALID[case](g.secret))
    assert out.code == "UNAUTHENTICATED", f"{case}: {out}"
    assert out.message.startswith("Invalid ID token"), f"{case}: {out}"


@pytest.mark.parametrize("case", list(WRONG_AUDIENCE))
def test_token_for_another_project_or_issuer_is_unauthenticated(g, case):
    out = g.caller.get("open/o1", WRONG_AUDIENCE[case](g.secret))
    assert out.code == "UNAUTHENTICATED", f"{case}: {out}"


def test_valid_token_reads_and_secret_file_is_trimmed(g):
    """The secret file ends in a newline; tokens signed with the trimmed bytes verify."""
    assert g.caller.get("open/o1", g.token("alice")).code == "OK"
    out = g.caller.get("users/alice", g.token("alice"))
    assert out.code == "OK", out
    out = g.caller.get("users/bob", g.token("alice"))
    assert out.code == "PERMISSION_DENIED" and out.message == DENIED, out


def test_expired_within_the_leeway_is_accepted(g):
    out = g.caller.get("users/alice", g.token("alice", iat=now() - 3600, exp=now() - 10))
    assert out.code == "OK", out


def test_no_token_is_anonymous(g):
    assert g.caller.get("open/o1", None).code == "OK"
    out = g.caller.get("users/alice", None)
    assert out.code == "PERMISSION_DENIED", out


def test_token_sent_to_another_project_is_unauthenticated(g):
    """aud must be the request's project: demo-rules' token on demo-other-project is refused,
    that project's own token is accepted there."""
    other = Caller(g.srv.host, project=OTHER_PROJECT)
    try:
        out = other.get("open/o1", g.token("alice"))
        assert out.code == "UNAUTHENTICATED", out
        own = hs(claims("alice", project=OTHER_PROJECT), g.secret)
        out = other.get("open/o1", own)
        assert out.code == "NOT_FOUND", f"the project's own token: {out}"   # allowed; nothing there
    finally:
        other.close()


def test_admin_token_bypasses_rules(g):
    out = g.caller.get("closed/c1", g.admin)
    assert out.code == "OK", out
    out = g.caller.commit([wire.write("set", g.caller.docs, "closed/c2", {"by": "admin"})], g.admin)
    assert out.code == "OK", out
    assert g.admin_get("closed/c2") == {"by": "admin"}
    out = g.caller.get("users/alice", g.admin)
    assert out.code == "OK", out
    # The same reads by a signed-in user are refused.
    assert g.caller.get("closed/c1", g.token("alice")).code == "PERMISSION_DENIED"
    out = g.caller.commit([wire.write("set", g.caller.docs, "closed/c3", {"by": "alice"})], g.token("alice"))
    assert out.code == "PERMISSION_DENIED", out
    assert g.admin_get("closed/c3") is None


def test_a_wrong_admin_token_is_no_admin(g):
    out = g.caller.get("closed/c1", g.admin + "x")
    assert out.code == "UNAUTHENTICATED", out


def test_token_issuer_override(g_issuer):
    issuer = ISSUER.format(project=PROJECT)
    out = g_issuer.caller.get("users/alice", g_issuer.token("alice", iss=issuer))
    assert out.code == "OK", f"iss {issuer}: {out}"
    out = g_issuer.caller.get("users/alice", g_issuer.token("alice"))   # the default issuer
    assert out.code == "UNAUTHENTICATED", f"the default issuer under --token-issuer: {out}"


def need_keys(keys):
    if keys is None:
        pytest.skip(jwts.CRYPTOGRAPHY_MISSING)


@pytest.mark.parametrize("alg", ["rsa", "ec"])
def test_jwks_token_names_the_caller(g, keys, alg):
    need_keys(keys)
    token = keys[alg].sign(claims("alice"))
    out = g.caller.get("users/alice", token)
    assert out.code == "OK", f"{keys[alg].alg}: {out}"
    out = g.caller.get("users/bob", token)
    assert out.code == "PERMISSION_DENIED", f"{keys[alg].alg} as alice reading bob: {out}"


@pytest.mark.parametrize("alg", ["rsa", "ec"])
def test_jwks_token_refused(g, keys, alg):
    need_keys(keys)
    cases = {
        "another_key_same_kid": keys[f"stranger_{alg}"].sign(claims("alice")),
        "expired": keys[alg].sign(claims("alice", iat=now() - 3700, exp=now() - 60)),
        "aud_other_project": keys[alg].sign(claims("alice", aud=OTHER_PROJECT)),
    }
    got = {name: g.caller.get("open/o1", token) for name, token in cases.items()}
    wrong = {name: out for name, out in got.items() if out.code != "UNAUTHENTICATED"}
    assert not wrong, f"{keys[alg].alg}: expected UNAUTHENTICATED: {wrong}"


@pytest.mark.parametrize("alg", ["rsa", "ec"])
def test_jwks_token_kid_must_name_a_key(g, keys, alg):
    """As Firebase's verifier: the header's kid must name a key of the set (a token signed by
    a key of the set under an unknown kid, or with no kid, is refused)."""
    need_keys(keys)
    key = keys[alg]
    cases = {"unknown_kid": key.sign(claims("alice"), kid="no-such-kid"),
             "no_kid": key.sign(claims("alice"), kid=jwts.NO_KID)}
    got = {name: g.caller.get("open/o1", token) for name, token in cases.items()}
    wrong = {name: out for name, out in got.items() if out.code != "UNAUTHENTICATED"}
    assert not wrong, f"{key.alg}: expected UNAUTHENTICATED: {wrong}"
