"""The hub as an LTI 1.3 tool towards the LMS: its key, its tokens, and what launches told it.

Shared by the grades (``grades.py``, Assignment and Grade Services) and the roster
(``roster.py``, Names and Role Provisioning Services). What the hub learns of a course in the
LMS (the services' addresses, each person's id in the LMS) is kept in ``<state>/hub/lms/<course>.json``,
root's: the hub writes it at each launch, the grade service when it reads the roster, each under
a lock so that neither loses what the other wrote.
"""
from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import time
import uuid
from pathlib import Path

AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
KEY_FILE = "lti_tool_key.pem"
TIMEOUT = 30


class PassbackError(Exception):
    """Something the administrator or the instructor can fix (printed in one line, no traceback)."""


def lms_folder(spec) -> Path:
    return spec.root / "hub" / "lms"


@contextlib.contextmanager
def course_record(spec, course_id: str):
    """The course's record, read under a lock and written back whole when the block ends."""
    folder = lms_folder(spec)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{course_id}.json"
    with open(folder / f"{course_id}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = json.loads(path.read_text()) if path.exists() else {}
        record.setdefault("people", {})   # account -> LMS id, from launches
        record.setdefault("members", {})  # account -> LMS id, from the LMS's roster
        record.setdefault("sent", {})     # assignment -> account -> [score, maximum] the LMS accepted
        yield record
        partial = path.with_suffix(".json.partial")
        partial.write_text(json.dumps(record, indent=1))
        partial.chmod(0o600)
        partial.replace(path)


def read_record(spec, course_id: str) -> dict:
    with course_record(spec, course_id) as record:
        return json.loads(json.dumps(record))


def record_launch(spec, course_id: str, account: str, claims: dict) -> None:
    """Keep what a launch tells about the course's services and the person's id in the LMS."""
    with course_record(spec, course_id) as record:
        record["people"][account] = claims.get("sub")
        endpoint = claims.get(AGS_CLAIM) or {}
        if endpoint.get("lineitems"):
            record["lineitems"] = endpoint["lineitems"]
            record["scopes"] = endpoint.get("scope", [])
        names = claims.get(NRPS_CLAIM) or {}
        if names.get("context_memberships_url"):
            record["memberships"] = names["context_memberships_url"]
        record["issuer"], record["deployment_id"] = claims.get("iss"), claims.get(DEPLOYMENT_CLAIM)


# ---- the tool's key ---------------------------------------------------------------------------------

def tool_key(spec, create: bool = False):
    """The tool's RSA private key (``<state>/hub/lti_tool_key.pem``, root's alone)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    path = spec.root / "hub" / KEY_FILE
    try:
        exists = path.exists()
    except PermissionError:
        exists = True  # not root: reading it says so below
    if not exists:
        if not create:
            raise PassbackError(f"the tool has no key yet ({path}): run `python -m kithub.lti key --state {spec.root}` and "
                                "register the public key it prints in the LMS")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
    try:
        return serialization.load_pem_private_key(path.read_bytes(), password=None)
    except PermissionError:
        raise PassbackError(f"the tool's key ({path}) is root's alone: as the course's grader, run `lti-grades` "
                            "(the hub's grade service sends for you)") from None


def public_jwk(key) -> dict:
    """The public half as a JWK, with its RFC 7638 thumbprint as ``kid``: what Canvas and Moodle take."""
    from jwt.algorithms import RSAAlgorithm

    jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    canonical = json.dumps({k: jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"), sort_keys=True)
    kid = base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
    return {**jwk, "kid": kid, "alg": "RS256", "use": "sig"}


def public_pem(key) -> str:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode().strip()


# ---- talking to the LMS -------------------------------------------------------------------------------

def settings_of(spec) -> dict:
    settings = (spec.logins or {}).get("lti13") or {}
    if not settings.get("token_url") or not settings.get("client_id"):
        raise PassbackError("class.json: logins.lti13 needs client_id and token_url (the LMS's OAuth2 token address) "
                            "to reach the LMS's services")
    return settings


def session(spec, scopes: list[str]):
    """A requests session carrying a bearer token the LMS granted the tool for ``scopes``."""
    import requests

    settings, key = settings_of(spec), tool_key(spec)
    token = access_token(settings, key, scopes)
    lms = requests.Session()
    lms.headers["Authorization"] = f"Bearer {token}"
    return lms


def access_token(settings: dict, key, scopes: list[str]) -> str:
    """OAuth2 client credentials, the client authenticated by a JWT signed with the tool's key (RFC 7523)."""
    import jwt

    now = int(time.time())
    assertion = jwt.encode({"iss": settings["client_id"], "sub": settings["client_id"], "aud": settings["token_url"],
                            "iat": now, "exp": now + 300, "jti": uuid.uuid4().hex},
                           key, algorithm="RS256", headers={"kid": public_jwk(key)["kid"]})
    response = call("post", settings["token_url"], "its token service", data={
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion, "scope": " ".join(scopes)})
    if response.status_code != 200:
        raise PassbackError(f"the LMS refused the tool a token ({response.status_code}: {brief(response)}); is the "
                            "public key that `python -m kithub.lti key` prints registered with the tool in the LMS, with "
                            "its grade and roster services enabled?")
    return response.json()["access_token"]


def call(method: str, url: str, what: str, session=None, **options):
    """One request to the LMS; the LMS unreachable is a PassbackError naming ``what`` was asked."""
    import requests

    try:
        return getattr(session or requests, method)(url, timeout=TIMEOUT, **options)
    except requests.RequestException as error:
        raise PassbackError(f"the LMS did not answer for {what} ({url}: {type(error).__name__})") from None


def brief(response) -> str:
    return " ".join(response.text.split())[:160] or response.reason or ""
