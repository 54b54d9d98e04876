"""University logins on the real hub: LTI 1.3 launches from an LMS, OpenID Connect, grades back to the LMS.

The LMS is ``lms_platform.Platform``, started here on 127.0.0.1: an LTI 1.3 platform and an OpenID
provider that sign their tokens with their own RSA key and publish it (JWKS). The hub is the class's
(deploy/hub/kithub/jupyterhub_config.py with real system accounts, as tests/hub/test_hub.py sets it up), its
authenticator chosen by class.json's ``logins``: ltiauthenticator's LTI 1.3 authenticator first,
then oauthenticator's GenericOAuthenticator (the hub is started again with the other login). In
Chromium, a launch follows the LMS's auto-submitting forms as a student's browser does:

* a student of the roster launches from the LMS's course and lands in JupyterLab on their server,
  in the course's student group; the instructor lands in the course's grader service, in its
  instructor group; someone the LMS knows but the class file does not is refused with a sentence;
* a launch in which the LMS makes a student of the class file its instructor is refused;
* a token signed with another key, an expired one, one issued for another tool, and a replayed
  one (its nonce from an earlier login) are each refused, and so is a launch copied and posted
  again from another browser;
* ``python -m kithub.lti send`` posts each student's score from the course's gradebook to the LMS's
  column through LTI Assignment and Grade Services, with a token granted for the tool's key; the
  LMS records the scores; the LMS course's roster (Names and Role Provisioning Services, read page
  by page) gives the LMS id of a student who never launched, and a 0 "not submitted" goes to one
  without a submission, while one who left the LMS course is reported; the roster service down, a
  token refused, a score refused are each a line, and a second send posts only what was not sent;
* the course's grader (not root) sends through the hub's grade service, without reading the
  tool's key; a student can neither read the key nor have the service send;
* with OpenID Connect, a student signs in on the university's page and lands on their server; a
  stranger is refused.

The tests run in the order written and build on each other (the grades need the launches
above), as tests/hub/test_hub.py's do. Needs root (accounts), ``make hub-env``, Chromium and Playwright; without them the tests skip,
except in CI (``CI=true``), where they fail.
"""
from __future__ import annotations

import base64
import json
import os
import pwd
import secrets
import shutil
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from cryptography.hazmat.primitives import serialization

from browser_support import artifacts_folder, free_port, launch_chromium, unavailable
from kit_paths import ROOT
from kithub import banner
from kithub.accounts import account_exists, create_accounts, remove_accounts
from kithub.backup import teardown
from kithub.config_files import write_commands, write_jupyter_config
from kithub.hub_process import Hub
from kithub.spec import CLASS_FILE, ClassSpec, CourseSpec
from hub_support import PROXY, python_as, run_as, server_environment
from lms_platform import Platform

ARTIFACTS = ROOT / "artifacts" / "hub-logins"
HUB_ENV = (ROOT / ".venv-hub").resolve()
LMS_COURSE = "ad101-lms"   # the LMS's id of the course (its LTI context id)
PS1 = "ps1_autograd_basics"
IN_CI = 'CI must run the hub login test (.ci/run runs as root; `make test` builds .venv-hub)'

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]


@pytest.fixture(scope="module")
def artifacts(request):
    yield from artifacts_folder(request, ARTIFACTS, "hub login test: screenshots and the hub's log")


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium(IN_CI)


@pytest.fixture(scope="module")
def platform():
    lms = Platform(free_port()).start()
    yield lms
    lms.stop()


def _set_up(spec) -> None:
    """The class's accounts, configuration and course folders, as ``kithub.set_up.setup`` makes them, without
    releasing assignments (a login needs none; that part is tests/hub/test_hub.py's)."""
    spec.root.chmod(0o755)
    spec.save()
    create_accounts(spec)
    spec.exchange.mkdir(exist_ok=True)
    spec.exchange.chmod(0o777)
    write_jupyter_config(spec)
    write_commands(spec)
    for course in spec.courses:
        directory = course.directory(spec)
        directory.mkdir(exist_ok=True)
        shutil.chown(directory, course.grader, course.grader)
        directory.chmod(0o700)


class Hubs:
    """The class's hub, started with the login ``serve`` asks for (again when that changes)."""

    def __init__(self, spec, artifacts: Path):
        self.spec, self.artifacts, self.hub, self.method = spec, artifacts, None, None

    def serve(self, method: str):
        if self.method != method:
            self.stop()
            self.spec.logins["method"] = method
            self.spec.save()
            self.hub = Hub(self.spec, log_path=self.artifacts / "jupyterhub.log").start()
            self.method = method
        return self.spec

    def stop(self):
        if self.hub is not None:
            self.hub.stop()
            self.hub = None


@pytest.fixture(scope="module")
def hubs(platform, artifacts):
    if os.geteuid() != 0:
        unavailable("the hub login test creates system accounts: it runs as root", IN_CI)
    if not (HUB_ENV / "bin" / "jupyterhub").exists() or not PROXY.exists():
        unavailable("the hub's environment is missing: run `make hub-env`", IN_CI)
    tag = secrets.token_hex(2)
    name = {who: f"{who}-{tag}" for who in ("teach", "alice", "bob", "carol", "dave", "erin")}
    state = Path(tempfile.mkdtemp(prefix="kit-hub-logins-"))
    course = CourseSpec("ad101", grader=f"grader-{tag}-ad101", port=free_port(), instructors=[name["teach"]],
                               students=[name[who] for who in ("alice", "bob", "carol", "dave", "erin")],
                               assignments=[PS1])
    spec = ClassSpec(state=str(state), courses=[course], passwords={}, hub_port=free_port(),
                            hub_api_port=free_port(), proxy_api_port=free_port(), python=str(HUB_ENV / "bin" / "python"))
    for who, role in (("alice", "Learner"), ("bob", "Learner"), ("carol", "Learner"), ("teach", "Instructor"),
                      ("mallory", "Learner"), ("dave", "Learner"), ("erin", "Learner")):
        platform.add(f"{who}@uni.example", who.title(), **{LMS_COURSE: role})  # mallory: in the LMS, not in the class
    platform.status[("erin@uni.example", LMS_COURSE)] = "Inactive"  # erin has left the LMS course
    platform.register_tool(spec.url)
    platform.oidc_redirect_uri = f"{spec.url}/hub/oauth_callback"
    spec.logins = {
        "people": {f"{who}@uni.example": account for who, account in name.items()},
        "lti13": {**platform.lti13_settings(), "courses": {LMS_COURSE: "ad101"}},
        "oidc": {"authorize_url": f"{platform.url}/oidc/authorize", "token_url": f"{platform.url}/oidc/token",
                 "userdata_url": f"{platform.url}/oidc/userinfo", "client_id": platform.oidc_client[0],
                 "client_secret": platform.oidc_client[1], "login_service": "Uni Example"},
    }
    artifacts.chmod(0o700)  # the hub's log is written there
    hubs = Hubs(spec, artifacts)
    spec.names = name
    try:
        _set_up(spec)
        yield hubs
    finally:
        hubs.stop()
        if (state / CLASS_FILE).exists():
            _, backup = teardown(state)
            if backup is not None:
                shutil.rmtree(backup)
        remove_accounts(state)
        shutil.rmtree(state, ignore_errors=True)
    assert not any(account_exists(a) for a in spec.accounts()), "accounts left behind"


@pytest.fixture
def page(browser):
    """A browser of its own for each launch (no cookies from another person's)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    context.set_default_timeout(30_000)
    yield context.new_page()
    context.close()


def groups_of(spec, account: str) -> list[str]:
    """The account's groups in the hub's database, as the hub's roles read them."""
    with sqlite3.connect(spec.root / "hub" / "jupyterhub.sqlite") as db:
        rows = db.execute("SELECT groups.name FROM groups JOIN user_group_map ON groups.id = user_group_map.group_id "
                          "JOIN users ON users.id = user_group_map.user_id WHERE users.name = ?", (account,)).fetchall()
    return sorted(row[0] for row in rows)


def refusal(page, url: str, shot: Path) -> str:
    """Open ``url`` (a launch or a sign-in that must fail) and return the text of the hub's error page."""
    page.goto(url)
    page.locator("div.error").wait_for(timeout=60_000)
    page.screenshot(path=str(shot))
    return " ".join(page.locator("div.error").inner_text().split())


# ---- LTI 1.3 ------------------------------------------------------------------------------------------

def test_a_student_of_the_roster_launches_from_the_lms_into_their_own_server(hubs, platform, page, artifacts):
    spec = hubs.serve("lti13")
    alice = spec.names["alice"]
    page.goto(platform.launch_url(LMS_COURSE, "alice@uni.example"))
    page.wait_for_url(f"**/user/{alice}/lab**", timeout=120_000)
    page.locator(".jp-LabShell").wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "lti-student-lab.png"))
    assert groups_of(spec, alice) == ["nbgrader-ad101"]
    # her server runs as the system account that the class file names for her LMS identity
    assert server_environment(pwd.getpwnam(alice).pw_uid)["JUPYTERHUB_USER"] == alice
    assert platform.refusals == []


def test_what_kithub_start_prints_says_how_each_person_logs_in(hubs):
    spec = hubs.serve("lti13")
    printed = banner.text(spec)  # a class on the university's logins has no password of the hub
    assert f"  student     {spec.names['alice']:<12} logs in with lti13" in printed and "password" not in printed, printed


def test_a_launch_posted_again_by_someone_else_is_refused(hubs, platform):
    """Whoever copies a student's launch (the id_token and state the LMS posted) and posts it from
    their own browser lacks the state and nonce cookies of the login it belongs to."""
    hubs.serve("lti13")
    callback, form = platform.posted["alice@uni.example"]
    response = requests.post(callback, data=form, allow_redirects=False, timeout=60)
    assert response.status_code == 403 and "The launch from the LMS was refused (OAuth state missing from cookies)" \
        in " ".join(response.text.split()), response.text[-2000:]
    assert "jupyterhub-hub-login" not in response.headers.get("Set-Cookie", "")  # no login cookie for them


def test_the_instructor_launches_into_the_courses_grader_service_in_the_instructors_group(hubs, platform, page, artifacts):
    spec = hubs.serve("lti13")
    teach = spec.names["teach"]
    page.goto(platform.launch_url(LMS_COURSE, "teach@uni.example", target=f"{spec.url}/services/ad101/lab"))
    page.wait_for_url("**/services/ad101/lab**", timeout=120_000)
    page.locator(".jp-LabShell").wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "lti-instructor-grader-service.png"))
    assert groups_of(spec, teach) == ["formgrade-ad101"]


def test_a_student_cannot_open_the_grader_service_after_a_launch(hubs, platform, page):
    spec = hubs.serve("lti13")
    page.goto(platform.launch_url(LMS_COURSE, "bob@uni.example", target=f"{spec.url}/services/ad101/lab"))
    page.wait_for_load_state("networkidle")
    assert page.locator("div.error").inner_text().startswith("403"), page.url
    assert groups_of(spec, spec.names["bob"]) == ["nbgrader-ad101"]


def test_someone_of_the_lms_who_is_not_on_the_roster_is_refused_with_a_reason(hubs, platform, page, artifacts):
    spec = hubs.serve("lti13")
    text = refusal(page, platform.launch_url(LMS_COURSE, "mallory@uni.example"), artifacts / "lti-not-on-roster.png")
    assert "403" in text and "mallory@uni.example, who is not on the roster of any course on this hub" in text, text
    assert "Traceback" not in page.content()
    with sqlite3.connect(spec.root / "hub" / "jupyterhub.sqlite") as db:
        assert db.execute("SELECT count(*) FROM users WHERE name LIKE '%mallory%'").fetchone() == (0,)


def test_a_launch_from_an_lms_course_the_hub_does_not_serve_names_it_for_the_administrator(hubs, platform, page, artifacts):
    hubs.serve("lti13")
    platform.roles[("alice@uni.example", "ml200-lms")] = "Learner"
    text = refusal(page, platform.launch_url("ml200-lms", "alice@uni.example"), artifacts / "lti-unknown-course.png")
    assert "This hub serves no course for the LMS's course 'Course ml200-lms' (context id 'ml200-lms'" in text, text


def test_the_lms_cannot_make_a_student_of_the_class_file_an_instructor(hubs, platform, page, artifacts):
    spec = hubs.serve("lti13")
    text = refusal(page, platform.launch_url(LMS_COURSE, "bob@uni.example", tamper="as-instructor"),
                   artifacts / "lti-student-as-instructor.png")
    assert "launched you (bob@uni.example) into ad101 as instructor, but the class lists you as student" in text, text
    assert "formgrade-ad101" not in groups_of(spec, spec.names["bob"])


@pytest.mark.parametrize("tamper, reason", [
    ("foreign-key", "Signature verification failed"),
    ("expired", "Signature has expired"),
    ("wrong-audience", "Audience doesn't match"),
])
def test_a_launch_with_a_forged_expired_or_misaddressed_token_is_refused(hubs, platform, page, artifacts, tamper, reason):
    spec = hubs.serve("lti13")
    text = refusal(page, platform.launch_url(LMS_COURSE, "bob@uni.example", tamper=tamper), artifacts / f"lti-{tamper}.png")
    assert "The launch from the LMS was refused" in text and reason in text, text
    assert not page.url.startswith(f"{spec.url}/user/")


def test_a_replayed_token_whose_nonce_belongs_to_an_earlier_login_is_refused(hubs, platform, page, artifacts):
    hubs.serve("lti13")
    assert "alice@uni.example" in platform.issued  # her launch above: the token an eavesdropper kept
    text = refusal(page, platform.launch_url(LMS_COURSE, "alice@uni.example", tamper="replay"), artifacts / "lti-replay.png")
    assert "The launch from the LMS was refused" in text and "nonce mismatch" in text, text


# ---- grades back to the LMS (LTI Assignment and Grade Services) ------------------------------------------

GRADEBOOK = '''
import json, sys
from nbgrader.api import Gradebook
with Gradebook("sqlite:///gradebook.db", "ad101") as gradebook:
    for assignment, scores in json.loads(sys.argv[1]).items():
        gradebook.add_assignment(assignment)
        gradebook.add_notebook("autograd_basics", assignment)
        gradebook.add_grade_cell("q1", "autograd_basics", assignment, max_score=10, cell_type="code")
        for student, score in scores.items():
            gradebook.update_or_create_student(student)
            gradebook.add_submission(assignment, student)
            grade = gradebook.find_grade("q1", "autograd_basics", assignment, student)
            grade.auto_score = float(str(score).removeprefix("pending "))
            # as autograde leaves a code cell it graded; "pending": a written answer waits for its grader
            grade.needs_manual_grade = str(score).startswith("pending")
    gradebook.db.commit()
'''
PS2 = "ps2_build_your_own"


def grade(spec, **assignments: dict[str, float]) -> None:
    """The course's gradebook as autograde leaves it: each assignment's scores by first name (no entry:
    no submission)."""
    course = spec.course("ad101")
    scores = {assignment: {spec.names[who]: score for who, score in by_name.items()}
              for assignment, by_name in assignments.items()}
    made = run_as(spec, course.grader, str(spec.python), "-c", GRADEBOOK, json.dumps(scores),
                  cwd=str(course.directory(spec)))
    assert made.returncode == 0, made.stderr


def lti_grades(spec, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(spec.python), "-m", "kithub.lti", *args, "--state", str(spec.root)],
                          capture_output=True, text=True, timeout=120)


def lti_grades_as(spec, account: str, *args: str) -> subprocess.CompletedProcess:
    """``lti-grades`` as ``account`` would type it in a terminal of the hub (the command the grade service
    puts in the class's bin folder, which is on the terminals' PATH)."""
    command = spec.root / "bin" / "lti-grades"
    for _ in range(300):  # the hub starts its grade service with it
        if command.exists() and (spec.root / "lti-grades.sock").exists():
            break
        time.sleep(0.1)
    return run_as(spec, account, str(command), *args, env={"KIT_HUB_STATE": str(spec.root)}, timeout=120)


def lms_ids(platform, *people: str) -> dict[str, str]:
    return {who: platform.people[f"{who}@uni.example"]["sub"] for who in people}


def column(platform, assignment: str) -> list[dict]:
    """The scores the LMS holds in ``assignment``'s column, in the order they arrived."""
    [lineitem] = [item for item in platform.lineitems[LMS_COURSE] if item["resourceId"] == assignment]
    return platform.scores.get(lineitem["id"], [])


def test_grades_go_back_to_the_lms_through_assignment_and_grade_services(hubs, platform):
    spec = hubs.serve("lti13")
    n = spec.names
    assert {"alice@uni.example", "bob@uni.example"} <= set(platform.posted), "alice's and bob's launches above run first"
    assert "carol@uni.example" not in platform.posted and "dave@uni.example" not in platform.posted
    grader = spec.course("ad101").grader
    grade(spec, **{PS1: dict(alice=7, bob=3, carol=5, erin=6),  # dave has no submission
                   PS2: dict(alice=9, bob=8, carol="pending 6", dave=4)})

    unregistered = lti_grades(spec, "send", "ad101", PS1)  # no key yet: said, nothing sent
    assert unregistered.returncode == 1 and "kithub.lti: the tool has no key yet" in unregistered.stderr, unregistered.stderr
    key = lti_grades(spec, "key")
    assert key.returncode == 0, key.stderr
    public = json.loads(key.stdout)
    assert public["kty"] == "RSA" and "d" not in public  # the public half only
    pem = lti_grades(spec, "key", "--format", "pem")  # the same key, for Moodle's "RSA key" field
    assert serialization.load_pem_public_key(pem.stdout.encode()).public_numbers().n == \
        int.from_bytes(base64.urlsafe_b64decode(public["n"] + "=="), "big"), pem.stdout
    assert (spec.root / "hub" / "lti_tool_key.pem").stat().st_mode & 0o077 == 0

    platform.tool_public_key = {**public, "n": platform.jwks()["keys"][0]["n"]}  # the LMS holds another key
    # from here on the course's grader sends, through the hub's grade service, as in its terminal
    wrong = lti_grades_as(spec, grader, "send", "ad101", PS1)
    assert wrong.returncode == 1 and wrong.stderr.count("\n") == 1, wrong.stderr
    assert wrong.stderr.startswith("lti-grades: the LMS refused the tool a token (401"), wrong.stderr
    assert platform.scores == {}

    platform.tool_public_key = public  # the admin pastes the printed key into the LMS's tool settings
    platform.down.add("nrps")
    down = lti_grades_as(spec, grader, "send", "ad101", PS1)
    assert down.returncode == 1 and down.stderr.count("\n") == 1 and "Traceback" not in down.stderr, down.stderr
    assert down.stderr.startswith("lti-grades: the LMS's roster service answered 503"), down.stderr
    assert "nothing was sent" in down.stderr and platform.scores == {}
    platform.down.discard("nrps")

    platform.roster_pages.clear()
    sent = lti_grades_as(spec, grader, "send", "ad101", PS1)
    assert sent.returncode == 0, sent.stdout + sent.stderr
    # seven members of the LMS course, two a page: four pages, each found through the previous one's Link
    assert platform.roster_pages == [f"{LMS_COURSE} page {page}" for page in (1, 2, 3, 4)]
    [lineitem] = platform.lineitems[LMS_COURSE]
    assert (lineitem["resourceId"], lineitem["label"], lineitem["scoreMaximum"]) == (PS1, PS1, 10)
    ids = lms_ids(platform, "alice", "bob", "carol", "dave")
    assert sorted((s["userId"], s["scoreGiven"], s["scoreMaximum"], s["activityProgress"], s.get("comment"))
                  for s in column(platform, PS1)) == sorted([
        (ids["alice"], 7, 10, "Completed", None), (ids["bob"], 3, 10, "Completed", None),
        # carol never opened the hub from the LMS: the LMS's roster gave her id
        (ids["carol"], 5, 10, "Completed", None),
        # dave handed nothing in: a 0 saying so, as kitgrade export gives him
        (ids["dave"], 0, 10, "Initialized", "not submitted")])
    for line in (f"{n['alice']}: sent 7 / 10", f"{n['carol']}: sent 5 / 10", f"{n['dave']}: sent 0 / 10 (not submitted)",
                 f"{n['erin']}: not sent: no longer in the LMS course (the LMS says Inactive)",
                 "ad101 ps1_autograd_basics: 4 sent, 0 already sent before, 1 not sent, 0 failed"):
        assert line in sent.stdout, sent.stdout


def test_the_courses_grader_sends_through_the_hubs_grade_service_and_a_second_send_posts_only_what_failed(
        hubs, platform):
    spec = hubs.serve("lti13")
    n, grader = spec.names, spec.course("ad101").grader
    ids = lms_ids(platform, "alice", "bob", "carol", "dave")
    assert python_as(spec, grader, f"open({str(spec.root / 'hub' / 'lti_tool_key.pem')!r}).read()").returncode == 1

    platform.refuse_scores.add(ids["bob"])  # the LMS refuses bob's score (his enrolment, say, is being changed)
    first = lti_grades_as(spec, grader, "send", "ad101", PS2)
    assert first.returncode == 1, first.stdout + first.stderr
    assert f"{n['bob']}: failed: the LMS refused it (422: " in first.stdout, first.stdout
    assert f"not in the LMS yet: {n['bob']}; the same command again sends these" in first.stdout, first.stdout
    assert sorted((s["userId"], s["scoreGiven"]) for s in column(platform, PS2)) == sorted(
        [(ids["alice"], 9), (ids["dave"], 4)])
    # carol's written answer waits for a manual grade: her score is not final, so not sent (as export refuses it)
    assert f"{n['carol']}: not sent: written answers still wait for a manual grade" in first.stdout, first.stdout

    platform.refuse_scores.clear()
    again = lti_grades_as(spec, grader, "send", "ad101", PS2)
    assert again.returncode == 0, again.stdout + again.stderr
    assert [(s["userId"], s["scoreGiven"]) for s in column(platform, PS2)][2:] == [(ids["bob"], 8)]  # bob's alone
    assert f"{n['alice']}: already sent 9 / 10" in again.stdout and f"{n['bob']}: sent 8 / 10" in again.stdout, again.stdout
    assert len(platform.lineitems[LMS_COURSE]) == 2  # a column per assignment, reused

    roster = lti_grades_as(spec, grader, "roster", "ad101")
    assert roster.returncode == 0, roster.stdout + roster.stderr
    assert f"{n['carol']}: in the LMS course" in roster.stdout, roster.stdout
    assert f"{n['erin']}: no longer in the LMS course (the LMS says Inactive)" in roster.stdout, roster.stdout
    assert "mallory@uni.example: a learner of the LMS course, not a student of the class's course" in roster.stdout
    assert "ad101: 4 of the class's 5 students are in the LMS course; 1 learner(s)" in roster.stdout, roster.stdout


def test_a_student_can_neither_read_the_tools_key_nor_have_the_grade_service_send(hubs, platform):
    spec = hubs.serve("lti13")
    alice, before = spec.names["alice"], json.dumps(platform.scores)
    key = spec.root / "hub" / "lti_tool_key.pem"
    assert key.exists()
    read = python_as(spec, alice, f"open({str(key)!r}).read()")
    assert read.returncode == 1 and "PermissionError" in read.stderr, read.stderr
    asked = lti_grades_as(spec, alice, "send", "ad101", PS1)
    assert asked.returncode == 1 and asked.stderr.strip() == (
        f"lti-grades: you ({alice}) are not the grader of ad101: only its grader account "
        f"({spec.course('ad101').grader}) sends its grades"), asked.stderr
    assert json.dumps(platform.scores) == before


# ---- OpenID Connect ------------------------------------------------------------------------------------

def test_with_openid_connect_a_student_signs_in_at_the_university_and_lands_on_their_server(hubs, platform, page, artifacts):
    spec = hubs.serve("oidc")
    alice = spec.names["alice"]
    page.goto(f"{spec.url}/hub/login")
    page.get_by_text("Sign in with Uni Example").click()
    page.locator("#email").fill("alice@uni.example")
    page.screenshot(path=str(artifacts / "oidc-sign-in.png"))
    page.locator("#sign-in").click()
    page.wait_for_url(f"**/user/{alice}/lab**", timeout=120_000)
    page.locator(".jp-LabShell").wait_for(timeout=60_000)
    assert groups_of(spec, alice) == ["nbgrader-ad101"]


def test_with_openid_connect_someone_not_on_the_roster_is_refused_with_a_reason(hubs, platform, page, artifacts):
    spec = hubs.serve("oidc")
    page.goto(f"{spec.url}/hub/oauth_login")
    page.locator("#email").fill("mallory@uni.example")
    page.locator("#sign-in").click()
    page.locator("div.error").wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "oidc-not-on-roster.png"))
    text = " ".join(page.locator("div.error").inner_text().split())
    assert "403" in text and "mallory@uni.example, who is not on the roster of any course on this hub" in text, text


def test_with_openid_connect_the_instructor_is_in_the_instructors_group(hubs, platform, page):
    spec = hubs.serve("oidc")
    page.goto(f"{spec.url}/hub/oauth_login?next=/services/ad101/lab")
    page.locator("#email").fill("teach@uni.example")
    page.locator("#sign-in").click()
    page.wait_for_url("**/services/ad101/lab**", timeout=120_000)
    page.locator(".jp-LabShell").wait_for(timeout=60_000)
    assert groups_of(spec, spec.names["teach"]) == ["formgrade-ad101"]


def test_with_openid_connect_lti_grades_says_in_a_line_that_there_is_no_grade_service(hubs, platform):
    spec = hubs.serve("oidc")  # no LTI, no grade service (its socket from the LTI hub above is left, unanswered)
    asked = lti_grades_as(spec, spec.course("ad101").grader, "send", "ad101", PS1)
    assert asked.returncode == 1 and asked.stderr.startswith("lti-grades: the hub's grade service is not running ("), \
        asked.stderr
    assert asked.stderr.count("\n") == 1, asked.stderr
