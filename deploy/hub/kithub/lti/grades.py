"""Grades back to the LMS through LTI Assignment and Grade Services (AGS), for a class that logs in with LTI 1.3.

    sudo python -m kithub.lti key --state DIR [--format pem]   # the tool's public key, to register in the LMS
    lti-grades send ad101 ps1_autograd_basics      # as the course's grader, in its grader service's terminal
    lti-grades roster ad101                        # the LMS course's roster against the class's

``send`` reads each student's score of the assignment from the course's gradebook (nbgrader's, as
``kitgrade autograde`` and the formgrader left it) and posts it to the assignment's column in the
LMS's gradebook (its AGS line item, made on the first send), with an OAuth2 client-credentials
token that the LMS grants for a request signed with the tool's private key (RFC 7523). The LMS knows
a student by its own id: the hub learns it at each launch and, for those who never launched, from
the LMS course's roster (``roster.py``, NRPS), read again at each send. Each score the LMS accepts
is recorded, so a second send posts only what was not sent (or has changed since).

The tool's key is root's alone: the course's grader asks the hub's grade service (``service.py``,
run by the hub as root) over a socket, which sends the grades of that grader's course only.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path

from ..errors import SetupError
from ..spec import ClassSpec
from .roster import read_roster
from .tool import PassbackError, brief, call, course_record, read_record, session, tool_key

LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
LINEITEMS_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
NOT_SUBMITTED = "not submitted"


def scores_of(spec, course, assignment: str) -> dict[str, tuple[str, float, float]]:
    """Each student's (state, score, maximum): ``graded``; ``missing`` (no submission: 0, as ``kitgrade
    export`` gives); ``manual`` (written answers still wait for their grade: not final, not sent)."""
    from grader.commands.export import nbgrader_score
    from nbgrader.api import Gradebook, MissingEntry

    gradebook_path = course.directory(spec) / "gradebook.db"
    if not gradebook_path.exists():
        raise PassbackError(f"{course.course_id} has no gradebook ({gradebook_path})")
    scores = {}
    with Gradebook(f"sqlite:///{gradebook_path}", course.course_id) as gradebook:
        try:
            maximum = gradebook.find_assignment(assignment).max_score
        except MissingEntry:
            raise PassbackError(f"{course.course_id} has no assignment {assignment!r} in its gradebook") from None
        for student in course.students:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                scores[student] = ("missing", 0.0, maximum)
                continue
            state = "manual" if submission.needs_manual_grade else "graded"
            scores[student] = (state, nbgrader_score(gradebook, assignment, student), maximum)
    if not any(state != "missing" for state, _, _ in scores.values()):
        # as kitgrade export: an assignment nobody has handed in gives nobody a 0
        raise PassbackError(f"nobody has a graded submission of {assignment} in {course.course_id} yet: nothing to send")
    return scores


def send(spec, course_id: str, assignment: str, log=print) -> dict[str, str]:
    """Post each student's score of ``assignment`` to its column in the LMS; returns what became of each
    (``sent``, ``already sent``, ``not sent: <why>`` for what the class decides, ``failed: <why>`` for
    what the LMS refused or did not answer: those are sent by the next run)."""
    course = course_of(spec, course_id)
    record = read_record(spec, course_id)
    if not record.get("lineitems"):
        raise PassbackError(f"no launch into {course_id} has carried the LMS's grade service yet: enable \"Assignment "
                            "and Grade Services\" for the tool in the LMS and open the hub once from the course")
    tool_key(spec)  # no key: said before anything is asked of the LMS
    scores = scores_of(spec, course, assignment)
    roster = read_roster(spec, course_id)  # the roster service down: said, nothing sent
    lms_ids = {**record["people"], **(roster.members if roster else {})}
    lms = session(spec, [LINEITEM_SCOPE, SCORE_SCOPE])
    lineitem = _lineitem(lms, record["lineitems"], assignment, max(s[2] for s in scores.values()))
    already = record["sent"].get(assignment, {})
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    outcome = {}
    for student in course.students:
        state, given, maximum = scores[student]
        user_id = lms_ids.get(student)
        if roster and student in roster.left:
            outcome[student] = f"not sent: {roster.left[student]}"
        elif not user_id:
            outcome[student] = "not sent: never opened the hub from the LMS, so the LMS's id is unknown"
        elif state == "manual":
            outcome[student] = "not sent: written answers still wait for a manual grade (kitgrade export says which)"
        elif already.get(student) == [given, maximum]:
            outcome[student] = f"already sent {_points(given, maximum, state)}"
        else:
            outcome[student] = _post_score(lms, lineitem["id"], user_id, scores[student], now)
            if outcome[student].startswith("sent"):
                with course_record(spec, course_id) as saved:  # at once: a run stopped later keeps this one
                    saved["sent"].setdefault(assignment, {})[student] = [given, maximum]
        log(f"{student}: {outcome[student]}")
    return outcome


def _points(given: float, maximum: float, state: str) -> str:
    return f"{given:g} / {maximum:g}" + (f" ({NOT_SUBMITTED})" if state == "missing" else "")


def _post_score(lms, lineitem: str, user_id: str, scored: tuple[str, float, float], now: str) -> str:
    """Post one student's ``(state, score, maximum)``; what became of it."""
    state, given, maximum = scored
    score = {"userId": user_id, "scoreGiven": given, "scoreMaximum": maximum, "gradingProgress": "FullyGraded",
             "activityProgress": "Completed" if state == "graded" else "Initialized", "timestamp": now}
    if state == "missing":
        score["comment"] = NOT_SUBMITTED
    try:
        response = call("post", _scores_url(lineitem), "a score", session=lms, headers={"Content-Type": SCORE_TYPE},
                        data=json.dumps(score))
    except PassbackError as error:
        return f"failed: {error}"
    if response.status_code in (200, 201, 202, 204):
        return f"sent {_points(given, maximum, state)}"
    return f"failed: the LMS refused it ({response.status_code}: {brief(response)})"


def _lineitem(lms, lineitems: str, assignment: str, maximum: float) -> dict:
    """The assignment's column in the LMS (its line item, found by ``resourceId``), made if missing."""
    response = call("get", lineitems, "its gradebook's columns", session=lms, headers={"Accept": LINEITEMS_TYPE})
    if response.status_code != 200:
        raise PassbackError(f"the LMS's grade service answered {response.status_code} for its columns ({lineitems})")
    for item in response.json():
        if item.get("resourceId") == assignment:
            return item
    response = call("post", lineitems, "a new column", session=lms, headers={"Content-Type": LINEITEM_TYPE},
                    data=json.dumps({"label": assignment, "resourceId": assignment, "tag": "autograd-kit",
                                     "scoreMaximum": maximum}))
    if response.status_code not in (200, 201):
        raise PassbackError(f"the LMS refused to make a column for {assignment} ({response.status_code}: {brief(response)})")
    return response.json()


def _scores_url(lineitem: str) -> str:
    path, _, query = lineitem.partition("?")
    return f"{path.rstrip('/')}/scores" + (f"?{query}" if query else "")


def course_of(spec, course_id: str):
    try:
        return spec.course(course_id)
    except StopIteration:
        known = ", ".join(course.course_id for course in spec.courses)
        raise PassbackError(f"the class has no course {course_id!r}; it has {known}") from None


# ---- what a request does (run as root: here, or by the grade service for a course's grader) -------------

def run(spec, request: dict, log=print) -> int:
    """``send`` or ``roster`` as ``request`` asks; the exit status (1: something was not done)."""
    course_id, assignment = request.get("course"), request.get("assignment")
    course_of(spec, course_id)
    if request.get("command") == "roster":
        roster = read_roster(spec, course_id)
        if roster is None:
            raise PassbackError(f"no launch into {course_id} has carried the LMS's roster service yet: enable \"Names "
                                "and Role Provisioning Services\" for the tool in the LMS and open the hub once from the course")
        for line in roster.lines():
            log(line)
        log(f"{course_id}: {len(roster.members)} of the class's {len(roster.members) + len(roster.left)} students are "
            f"in the LMS course; {len(roster.unknown)} learner(s) of the LMS course are not the course's students")
        return 0
    outcome = send(spec, course_id, assignment, log=log)
    count = {kind: sum(1 for what in outcome.values() if what.startswith(kind)) for kind in ("sent", "already", "not", "failed")}
    log(f"{course_id} {assignment}: {count['sent']} sent, {count['already']} already sent before, {count['not']} not sent, "
        f"{count['failed']} failed")
    failed = sorted(student for student, what in outcome.items() if what.startswith("failed"))
    if failed:
        log(f"not in the LMS yet: {', '.join(failed)}; the same command again sends these (and nothing twice)")
    return 1 if failed else 0


def answer(state: Path, uid: int, request: dict, say) -> int:
    """The grade service's answer to the account ``uid``: ``run`` for a course whose grader it is."""
    import pwd
    import traceback

    try:
        spec = ClassSpec.load(state)  # read again each time: the class file may have changed
        course = course_of(spec, request.get("course"))
        try:
            account = pwd.getpwuid(uid).pw_name
        except KeyError:
            account = f"uid {uid}"
        if uid != 0 and account != course.grader:
            say(f"you ({account}) are not the grader of {course.course_id}: only its grader account ({course.grader}) "
                "sends its grades", "error")
            return 1
        return run(spec, request, log=say)
    except (PassbackError, SetupError, OSError) as error:
        say(str(error), "error")
        return 1
    except Exception:  # a bug of the kit: the hub's log keeps the traceback, the grader gets a sentence
        traceback.print_exc()
        say("the hub's grade service failed (a bug of the kit; the hub's log has the traceback)", "error")
        return 3
