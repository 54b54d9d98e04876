"""Grades back to the LMS through LTI Assignment and Grade Services (AGS), for a class that logs in with LTI 1.3.

    sudo python deploy/hub/lti_grades.py key --state DIR [--format pem]       # the tool's public key, to register in the LMS
    sudo python deploy/hub/lti_grades.py send --state DIR ad101 ps1_autograd_basics   # each student's score to the LMS

``send`` reads each student's score of the assignment from the course's gradebook (nbgrader's, as
``kitgrade autograde`` and the formgrader left it) and posts it to the assignment's column in the
LMS's gradebook (its AGS line item, made on the first send), with an OAuth2 client-credentials
token that the LMS grants for a request signed with the tool's private key (RFC 7523). The LMS
knows a student by its own id (the launch's ``sub``) and gives the grade service's address only in
a launch: the hub records both at each launch (``record_launch``, in ``<state>/hub/lms/``, root's),
so a student who has never opened the hub from the LMS is reported and not sent.
"""
from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import json
import os
import sys
import time
import uuid
from pathlib import Path

AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
KEY_FILE = "lti_tool_key.pem"
TIMEOUT = 30


class PassbackError(Exception):
    """Something the administrator can fix (printed in one line, no traceback)."""


def lms_folder(spec) -> Path:
    return spec.root / "hub" / "lms"


def record_launch(spec, course_id: str, account: str, claims: dict) -> None:
    """Keep what a launch tells about the course's grade service and the person's id in the LMS."""
    folder = lms_folder(spec)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{course_id}.json"
    record = json.loads(path.read_text()) if path.exists() else {"people": {}}
    record["people"][account] = claims.get("sub")
    endpoint = claims.get(AGS_CLAIM) or {}
    if endpoint.get("lineitems"):
        record["lineitems"] = endpoint["lineitems"]
        record["scopes"] = endpoint.get("scope", [])
    record["issuer"], record["deployment_id"] = claims.get("iss"), claims.get(DEPLOYMENT_CLAIM)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(record, indent=1))
    partial.chmod(0o600)
    partial.replace(path)


# ---- the tool's key ---------------------------------------------------------------------------------

def tool_key(spec, create: bool = False):
    """The tool's RSA private key (``<state>/hub/lti_tool_key.pem``, root's alone)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    path = spec.root / "hub" / KEY_FILE
    if not path.exists():
        if not create:
            raise PassbackError(f"the tool has no key yet ({path}): run `lti_grades.py key --state {spec.root}` and "
                                "register the public key it prints in the LMS")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(pem)
    return serialization.load_pem_private_key(path.read_bytes(), password=None)


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


# ---- AGS -----------------------------------------------------------------------------------------------

def access_token(settings: dict, key, scopes: list[str]) -> str:
    """OAuth2 client credentials, the client authenticated by a JWT signed with the tool's key."""
    import jwt
    import requests

    now = int(time.time())
    assertion = jwt.encode({"iss": settings["client_id"], "sub": settings["client_id"], "aud": settings["token_url"],
                            "iat": now, "exp": now + 300, "jti": uuid.uuid4().hex},
                           key, algorithm="RS256", headers={"kid": public_jwk(key)["kid"]})
    response = requests.post(settings["token_url"], timeout=TIMEOUT, data={
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion, "scope": " ".join(scopes)})
    if response.status_code != 200:
        raise PassbackError(f"the LMS refused the tool a token ({response.status_code}: {response.text[:200]}); is the "
                            "public key that `lti_grades.py key` prints registered with the tool in the LMS?")
    return response.json()["access_token"]


def scores_of(spec, course, assignment: str) -> dict[str, tuple[float, float] | None]:
    """Each student's (score, maximum) in the course's gradebook; None where there is no submission."""
    from nbgrader.api import Gradebook, MissingEntry

    gradebook_path = course.directory(spec) / "gradebook.db"
    if not gradebook_path.exists():
        raise PassbackError(f"{course.course_id} has no gradebook ({gradebook_path})")
    scores = {}
    with Gradebook(f"sqlite:///{gradebook_path}", course.course_id) as gradebook:
        try:
            gradebook.find_assignment(assignment)
        except MissingEntry:
            raise PassbackError(f"{course.course_id} has no assignment {assignment!r} in its gradebook") from None
        for student in course.students:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                scores[student] = None
                continue
            scores[student] = (submission.score, submission.max_score)
    return scores


def send(spec, course_id: str, assignment: str, log=print) -> dict[str, str]:
    """Post each student's score of ``assignment`` to its column in the LMS; returns what became of each."""
    import requests

    settings = (spec.logins or {}).get("lti13") or {}
    if not settings.get("token_url") or not settings.get("client_id"):
        raise PassbackError("class.json: logins.lti13 needs client_id and token_url (the LMS's OAuth2 token address) "
                            "to send grades")
    try:
        course = spec.course(course_id)
    except StopIteration:
        raise PassbackError(f"the class has no course {course_id!r}") from None
    record_path = lms_folder(spec) / f"{course_id}.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {"people": {}}
    if not record.get("lineitems"):
        raise PassbackError(f"no launch into {course_id} has carried the LMS's grade service yet: enable \"Assignment "
                            "and Grade Services\" for the tool in the LMS and open the hub once from the course")
    key = tool_key(spec)
    scores = scores_of(spec, course, assignment)
    token = access_token(settings, key, [LINEITEM_SCOPE, SCORE_SCOPE])
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    maximum = max((s[1] for s in scores.values() if s), default=0) or None
    lineitem = _lineitem(session, record["lineitems"], assignment, maximum)
    outcome = {}
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    for student, score in scores.items():
        user_id = record["people"].get(student)
        if score is None:
            outcome[student] = "not sent: no submission"
        elif not user_id:
            outcome[student] = "not sent: never opened the hub from the LMS, so the LMS's id is unknown"
        else:
            response = session.post(_scores_url(lineitem["id"]), timeout=TIMEOUT, headers={"Content-Type": SCORE_TYPE},
                                    data=json.dumps({"userId": user_id, "scoreGiven": score[0], "scoreMaximum": score[1],
                                                     "activityProgress": "Completed", "gradingProgress": "FullyGraded",
                                                     "timestamp": now}))
            outcome[student] = (f"sent {score[0]:g} / {score[1]:g}" if response.status_code in (200, 201, 202, 204)
                                else f"refused by the LMS ({response.status_code}: {response.text[:120]})")
        log(f"{student}: {outcome[student]}")
    return outcome


def _lineitem(session, lineitems: str, assignment: str, maximum: float | None) -> dict:
    """The assignment's column in the LMS (its line item, found by ``resourceId``), made if missing."""
    response = session.get(lineitems, timeout=TIMEOUT, headers={"Accept": LINEITEMS_TYPE})
    if response.status_code != 200:
        raise PassbackError(f"the LMS's grade service answered {response.status_code} for its columns ({lineitems})")
    for item in response.json():
        if item.get("resourceId") == assignment:
            return item
    if not maximum:
        raise PassbackError(f"{assignment} has no graded submission yet: nothing to make its column from")
    response = session.post(lineitems, timeout=TIMEOUT, headers={"Content-Type": LINEITEM_TYPE}, data=json.dumps(
        {"label": assignment, "resourceId": assignment, "tag": "autograd-kit", "scoreMaximum": maximum}))
    if response.status_code not in (200, 201):
        raise PassbackError(f"the LMS refused to make a column for {assignment} ({response.status_code}: {response.text[:200]})")
    return response.json()


def _scores_url(lineitem: str) -> str:
    path, _, query = lineitem.partition("?")
    return f"{path.rstrip('/')}/scores" + (f"?{query}" if query else "")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import kithub

    parser = argparse.ArgumentParser(prog="lti_grades.py", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["key", "send"])
    parser.add_argument("course", nargs="?")
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--format", choices=["jwk", "pem"], default="jwk",
                        help="key: the public key as a JWK (Canvas) or in PEM (Moodle's \"RSA key\")")
    parser.add_argument("--state", default=str(kithub.DEFAULT_STATE), help=f"the class's folder (default {kithub.DEFAULT_STATE})")
    args = parser.parse_args(argv)
    try:
        spec = kithub.ClassSpec.load(Path(args.state).resolve())
        if args.command == "key":
            key = tool_key(spec, create=True)
            print(json.dumps(public_jwk(key), indent=1) if args.format == "jwk" else public_pem(key), end="\n")
            return 0
        if not args.course or not args.assignment:
            parser.error("send needs the course and the assignment: lti_grades.py send --state DIR ad101 ps1_autograd_basics")
        outcome = send(spec, args.course, args.assignment)
        sent = sum(1 for what in outcome.values() if what.startswith("sent"))
        print(f"{args.course} {args.assignment}: {sent} of {len(outcome)} scores sent to the LMS")
        return 0 if all(not what.startswith("refused") for what in outcome.values()) else 1
    except (PassbackError, kithub.SetupError) as error:
        print(f"lti_grades: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # the LMS unreachable, a file unreadable
        print(f"lti_grades: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
