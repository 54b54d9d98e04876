"""A class on a real JupyterHub, end to end, in a real browser.

deploy/hub/kithub.py sets up a class the way ``make hub`` does, with real system accounts
(created here, removed afterwards): course ``ad101`` (an instructor, alice, bob and carol; ps1
released) and course ``ad102`` (another instructor and dave; ps2 released). JupyterHub 5
runs behind configurable-http-proxy on 127.0.0.1, each person's server as their own account
(``LocalProcessSpawner``), a grader service per course as the course's grader account, and
nbgrader's exchange with ``path_includes_course`` and ``JupyterHubAuthPlugin``. Then, in Chromium:

* alice logs in on the hub's login page, runs her own copy of a lesson, fetches ps1 in the
  Assignments panel, types the solutions, validates and submits; bob submits a blank ps1;
* the instructor's ``kitgrade`` (as the grader account) collects, autogrades and releases the
  feedback through the exchange; alice fetches it and sees her score; the formgrader of the
  grader service lists the grades;
* what a student must not be able to do (read another's submission, the course's source/,
  gradebook or hidden tests; submit as someone else; open another's server) is tried and fails;
  the second course keeps its students, assignments and grades apart; everything listens on
  127.0.0.1 only. The memory of an idle student server and of one running a lesson is measured.

Screenshots, the hub's log and the memory figures are written to ``artifacts/hub/``. Needs root
(accounts), ``make hub-env`` (.venv-hub and configurable-http-proxy, which ``make test`` builds),
Chromium and Playwright. Without them the tests skip, except in CI (``CI=true``), where they fail.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser_support import IN_CI, artifacts_folder, free_port, launch_chromium, unavailable
from conftest import ROOT
from hub_support import (Person, kithub, listening_sockets, memory_of, python_as, run_as, server_environment,
                         solution_cells)

ARTIFACTS = ROOT / "artifacts" / "hub"
HUB_ENV = ROOT / ".venv-hub"
PS1, PS2 = "ps1_autograd_basics", "ps2_build_your_own"
PS1_NOTEBOOK = "autograd_basics.ipynb"
#: what alice writes in each of ps1's written answers (graded by hand)
WRITTEN_ANSWER = "With `create_graph=True` the backward pass is recorded too, so there is more to compute and keep."
LESSON = "lessons/en/01_recording_history.ipynb"

pytestmark = pytest.mark.timeout(900)


def _unavailable(reason: str):
    unavailable(reason, 'CI must run the hub test (.ci/run runs as root; `make test` builds .venv-hub)')


@pytest.fixture(scope="module")
def artifacts(request):
    yield from artifacts_folder(request, ARTIFACTS, "hub test: screenshots, the hub's log and memory figures")


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium('CI must run the hub test (.ci/run runs as root; `make test` builds .venv-hub)')


def _test_class(state: Path) -> "kithub.ClassSpec":
    """Two courses; account names carry a random tag so that runs on one machine never meet."""
    tag = secrets.token_hex(2)
    name = {who: f"{who}-{tag}" for who in ("teach", "teach2", "alice", "bob", "carol", "dave")}
    courses = [
        kithub.CourseSpec("ad101", grader=f"grader-{tag}-ad101", port=free_port(), instructors=[name["teach"]],
                          students=[name["alice"], name["bob"], name["carol"]], assignments=[PS1]),
        kithub.CourseSpec("ad102", grader=f"grader-{tag}-ad102", port=free_port(), instructors=[name["teach2"]],
                          students=[name["dave"]], assignments=[PS2]),
    ]
    return kithub.ClassSpec(state=str(state), courses=courses,
                            passwords={person: kithub.new_password() for person in name.values()},
                            hub_port=free_port(), hub_api_port=free_port(), proxy_api_port=free_port(),
                            python=str(HUB_ENV / "bin" / "python"))


def _let_accounts_through(path: Path) -> list[tuple[Path, int]]:
    """The class's accounts run the kit's environment and lessons from this checkout: a checkout
    in a private folder (a temporary clone, mode 700) gets search permission (o+x, no listing) on
    its parents for the test's duration. Returns what to restore."""
    changed = []
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode & 0o7777
        if not mode & 0o001:
            folder.chmod(mode | 0o001)
            changed.append((folder, mode))
    return changed


@pytest.fixture(scope="module")
def hub(artifacts):
    """The class, set up and served for the whole module; accounts and files removed afterwards."""
    if os.geteuid() != 0:
        _unavailable("the hub test creates system accounts: it runs as root")
    if not (HUB_ENV / "bin" / "jupyterhub").exists() or not kithub.CHP.exists():
        _unavailable("the hub's environment is missing: run `make hub-env` (.venv-hub and configurable-http-proxy)")
    state = Path(tempfile.mkdtemp(prefix="kit-hub-"))
    spec = _test_class(state)
    server = kithub.Hub(spec, log_path=artifacts / "jupyterhub.log")
    opened = _let_accounts_through(ROOT)
    try:
        started = time.monotonic()
        kithub.setup(spec, log=lambda line: None)
        set_up = time.monotonic() - started
        server.start()
        (artifacts / "timings.txt").write_text(f"set-up (accounts, 2 courses, 2 releases): {set_up:.1f} s\n"
                                               f"hub start: {time.monotonic() - started - set_up:.1f} s\n")
        spec.server = server
        yield spec
    finally:
        proxy_pid = state / "hub" / "jupyterhub-proxy.pid"
        proxy = int(proxy_pid.read_text()) if proxy_pid.exists() else None
        server.stop()
        time.sleep(1)
        proxy_left = proxy is not None and Path(f"/proc/{proxy}").exists()
        uids = [pwd.getpwnam(a).pw_uid for a in spec.accounts() if kithub.account_exists(a)]
        left = {uid: kithub.processes_of(uid) for uid in uids if kithub.processes_of(uid)}
        try:
            if (state / kithub.CLASS_FILE).exists():
                kithub.teardown(state)
            else:  # set-up stopped before the class existed
                shutil.rmtree(state, ignore_errors=True)
        finally:
            for folder, mode in opened:
                folder.chmod(mode)
        assert not left, f"processes left running after the hub stopped: {left}"
        assert not proxy_left, f"configurable-http-proxy (pid {proxy}) left running after the hub stopped"
        assert not any(kithub.account_exists(a) for a in spec.accounts()), "accounts left behind"


@pytest.fixture(scope="module")
def people(hub, browser, artifacts):
    """Each person's browser, opened on first use and closed at the end."""
    opened: dict[str, Person] = {}

    def person(name: str) -> Person:
        if name not in opened:
            opened[name] = Person(browser, hub.url, name, hub.passwords[name], artifacts)
        return opened[name]

    yield person
    for p in opened.values():
        p.close()


def ad101(hub):
    return hub.course("ad101")


def ad102(hub):
    return hub.course("ad102")


def alice(hub):
    return ad101(hub).students[0]


def bob(hub):
    return ad101(hub).students[1]


def inbound(hub, course="ad101") -> Path:
    return hub.exchange / course / "inbound"


def kitgrade(hub, course, *args):
    """``kitgrade ...`` as the course's grader account, in the course directory (its terminal)."""
    result = run_as(hub, course.grader, str(hub.bin / "kitgrade"), *args, cwd=str(course.directory(hub)))
    assert result.returncode == 0, f"kitgrade {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


# --- a student: the lessons ---------------------------------------------------------------------------


def test_student_logs_in_and_runs_her_own_copy_of_a_lesson(hub, people):
    student = people(alice(hub))
    student.log_in("alice-1")
    home = Path(pwd.getpwnam(student.name).pw_dir)
    lesson = home / LESSON
    assert lesson.is_file() and lesson.stat().st_uid == pwd.getpwnam(student.name).pw_uid
    assert lesson.read_bytes() == (ROOT / "notebooks" / "en" / lesson.name).read_bytes()

    notebook = student.notebook(LESSON, "lesson1")
    prompts = notebook.run_all()
    student.shot("alice-2-lesson-ran")
    assert not notebook.errors(), notebook.errors()
    assert prompts and all(p.strip("[]:").isdigit() for p in prompts), prompts
    notebook.save()
    # what ran and was saved is her copy, with her outputs; the original is as it was
    original = (ROOT / "notebooks" / "en" / lesson.name).read_bytes()
    deadline = time.monotonic() + 30
    while lesson.read_bytes() == original and time.monotonic() < deadline:
        time.sleep(0.5)
    assert lesson.read_bytes() != original
    assert '"execution_count": null' not in lesson.read_text()


def test_a_student_resets_a_lesson_to_the_original(hub):
    student = alice(hub)
    home = Path(pwd.getpwnam(student).pw_dir)
    original = (ROOT / "notebooks" / "en" / "01_recording_history.ipynb").read_bytes()
    mine = (home / LESSON).read_bytes()
    assert mine != original  # run and saved by the test above
    result = run_as(hub, student, "reset-lesson", "en/01_recording_history")
    assert result.returncode == 0, result.stderr
    assert (home / LESSON).read_bytes() == original
    assert (home / (LESSON + ".mine")).read_bytes() == mine
    wrong = run_as(hub, student, "reset-lesson", "en/99_no_such_lesson")
    assert wrong.returncode == 2 and "no lesson 'en/99_no_such_lesson'" in wrong.stderr
    assert "Traceback" not in wrong.stderr


# --- students: fetch, validate, submit ----------------------------------------------------------------


def test_student_fetches_fills_in_validates_and_submits_ps1(hub, people):
    student = people(alice(hub))
    student.open_assignments()
    released = student.section("released").inner_text()
    student.shot("alice-3-assignments")
    assert PS1 in released and "ad101" in released
    everything = student.page.locator("#assignments").inner_text()
    assert "ad102" not in everything and PS2 not in everything  # not her course

    student.fetch(PS1)
    row = student.assignment_row("fetched", PS1)
    row.locator("a.assignment-notebooks-link").click()
    row.locator(".nested_list_item a", has_text=Path(PS1_NOTEBOOK).stem).click()  # opens it in JupyterLab
    student.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.wait_for(timeout=60_000)
    notebook = student.notebook(f"ad101/{PS1}/{PS1_NOTEBOOK}", "ps1")
    for index, answer in solution_cells(ROOT / "exercises" / PS1 / PS1_NOTEBOOK).items():
        notebook.type_into_cell(index, answer)
    for index in solution_cells(ROOT / "exercises" / PS1 / PS1_NOTEBOOK, "markdown"):  # her own words
        notebook.write_into_markdown_cell(index, WRITTEN_ANSWER)
    notebook.save()
    student.shot("alice-4-solutions-typed")

    notebook.panel.locator(".validate-button").click()
    result = student.page.locator(".jp-Dialog [class*='validation-']").first
    result.wait_for(timeout=120_000)
    student.shot("alice-5-validated")
    dialog = student.page.locator(".jp-Dialog").inner_text()
    assert "validation-success" in result.get_attribute("class"), dialog
    assert "Success! Your notebook passes all the tests." in dialog
    student.page.locator(".jp-Dialog").get_by_role("button").last.click()

    student.open_assignments()
    student.submit(PS1)
    student.shot("alice-6-submitted")
    assert len([p for p in inbound(hub).iterdir() if p.name.startswith(f"{student.name}+{PS1}+")]) == 1


def test_another_student_submits_a_blank_ps1(hub, people):
    student = people(bob(hub))
    student.log_in("bob-1")
    student.open_assignments()
    student.fetch(PS1)
    student.submit(PS1)
    student.shot("bob-2-submitted-blank")


# --- what a student must not be able to do ----------------------------------------------------------

PROBE = """
import json, os, sys
results = {}
for path in json.loads(sys.argv[1]):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        results[path] = "read"
    except PermissionError:
        results[path] = "denied"
print(json.dumps(results))
"""


def _probe(hub, account: str, paths: list[Path]) -> dict[str, str]:
    """What ``account`` can read (files) or list (folders) of ``paths``."""
    result = run_as(hub, account, str(hub.python), "-c", PROBE, json.dumps([str(p) for p in paths]))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _submission_of(hub, student: str, course="ad101") -> Path:
    [submission] = [p for p in inbound(hub, course).iterdir() if p.name.startswith(f"{student}+")]
    return submission


def test_a_student_cannot_read_another_students_submission(hub):
    theirs = _submission_of(hub, alice(hub))
    paths = [inbound(hub), theirs / PS1_NOTEBOOK, theirs / "submission_secret.txt", theirs / "timestamp.txt",
             Path(pwd.getpwnam(alice(hub)).pw_dir) / "ad101"]
    seen = _probe(hub, bob(hub), paths)
    assert set(seen.values()) == {"denied"}, seen
    # the control: the same probe reads what is meant for students, and the grader reads the submission
    released = hub.exchange / "ad101" / "outbound" / PS1 / PS1_NOTEBOOK
    assert _probe(hub, bob(hub), [released]) == {str(released): "read"}
    grader = _probe(hub, ad101(hub).grader, [inbound(hub), theirs / PS1_NOTEBOOK, theirs / "timestamp.txt"])
    assert set(grader.values()) == {"read"}, grader


def test_a_student_cannot_read_the_course_source_gradebook_or_hidden_tests(hub):
    course = ad101(hub).directory(hub)
    paths = [course.parent, course, course / "source", course / "source" / PS1 / PS1_NOTEBOOK,
             course / "gradebook.db", course / "nbgrader_config.py", course / "release" / PS1 / PS1_NOTEBOOK]
    assert "BEGIN HIDDEN TESTS" in (course / "source" / PS1 / PS1_NOTEBOOK).read_text()  # what is at stake
    seen = _probe(hub, bob(hub), paths)
    assert set(seen.values()) == {"denied"}, seen


def test_a_student_cannot_submit_as_someone_else(hub):
    forger, victim = bob(hub), alice(hub)
    before = sorted(p.name for p in inbound(hub).iterdir())
    # nbgrader's own command, with bob's server's hub token: the hub refuses to tell bob about alice
    env = {k: v for k, v in server_environment(pwd.getpwnam(forger).pw_uid).items()
           if k.startswith("JUPYTERHUB_")}
    claim = run_as(hub, forger, str(hub.bin / "nbgrader"), "submit", PS1, "--course", "ad101", "--student", victim,
                   env=env)
    assert claim.returncode != 0, claim.stdout + claim.stderr
    assert sorted(p.name for p in inbound(hub).iterdir()) == before
    # by hand: a folder named as alice's newest submission, holding bob's blank notebook
    home = pwd.getpwnam(forger).pw_dir
    forged = inbound(hub) / f"{victim}+{PS1}+2099-01-01 00:00:00.000000 UTC+forged"
    made = python_as(hub, forger, f"import os, shutil; os.mkdir({str(forged)!r}); "
                                  f"shutil.copy({home + '/ad101/' + PS1 + '/' + PS1_NOTEBOOK!r}, {str(forged)!r}); "
                                  f"open({str(forged / 'timestamp.txt')!r}, 'w').write('2099-01-01 00:00:00.000000 UTC')")
    assert made.returncode == 0, made.stderr  # the inbound folder takes it; collecting must not
    hub.forged = forged


def test_a_student_cannot_open_another_students_server_or_the_grader_service(hub, people):
    student = people(alice(hub))
    for name, url in [("server", f"{hub.url}/user/{bob(hub)}/lab"), ("service", f"{hub.url}/services/ad101/lab")]:
        response = student.page.goto(url)
        student.page.wait_for_load_state()
        student.shot(f"alice-7-denied-{name}")
        assert response.status == 403, (url, response.status, student.page.url)
        assert student.page.locator(".jp-LabShell").count() == 0
    # nor with her server's token through the API
    token = server_environment(pwd.getpwnam(student.name).pw_uid)["JUPYTERHUB_API_TOKEN"]
    for url in [f"{hub.url}/hub/api/users/{bob(hub)}", f"{hub.url}/user/{bob(hub)}/api/contents"]:
        request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(request, timeout=10)
        assert denied.value.code in (403, 404), (url, denied.value.code)
    own = urllib.request.Request(f"{hub.url}/hub/api/users/{student.name}", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(own, timeout=10) as response:  # the control: her own groups she may read
        assert "nbgrader-ad101" in json.loads(response.read())["groups"]


# --- the instructor: kitgrade on the hub ----------------------------------------------------------------


def test_instructor_collects_autogrades_and_releases_feedback(hub):
    course = ad101(hub)
    collected = kitgrade(hub, course, "collect", PS1)
    assert f"2 submission(s) in submitted/: {alice(hub)}, {bob(hub)}" in collected.stdout, collected.stdout
    assert f"refused {hub.forged.name}" in collected.stderr, collected.stderr
    graded = kitgrade(hub, course, "autograde", PS1, "--quiet")
    scores = dict(re.findall(r"^\s+(\S+)\s+(\d+(?:\.\d+)? / \d+(?:\.\d+)?)", graded.stdout, re.M))
    # every test passes; her two written answers wait for the instructor
    assert scores.get(alice(hub)) == "11 / 16", graded.stdout
    assert re.search(rf"^\s+{alice(hub)}\s+11 / 16\s+not final: 5 point\(s\) await manual grading$", graded.stdout,
                     re.M), graded.stdout
    assert scores.get(bob(hub), "").startswith("0 /"), graded.stdout
    released = kitgrade(hub, course, "feedback", PS1, "--hide-hidden-tests", "--release")
    assert f"released to the exchange: {alice(hub)}, {bob(hub)}" in released.stdout, released.stdout
    (ARTIFACTS / "kitgrade.txt").write_text("\n".join(r.stdout + r.stderr for r in (collected, graded, released)))
    assert len(list((hub.exchange / "ad101" / "feedback").glob("*.html"))) == 2


def test_student_fetches_her_feedback_and_sees_her_score(hub, people):
    student = people(alice(hub))
    student.open_assignments()
    submission = student.assignment_row("submitted", PS1)
    assert "feedback available to fetch" in submission.inner_text()
    submission.get_by_role("button", name="Fetch Feedback").click()
    submission.get_by_text("(view feedback)").wait_for(timeout=60_000)
    student.shot("alice-8-feedback-fetched")
    home = Path(pwd.getpwnam(student.name).pw_dir)
    [feedback] = (home / "ad101" / PS1 / "feedback").glob(f"*/{Path(PS1_NOTEBOOK).stem}.html")
    student.page.goto(f"{student.base}/files/{feedback.relative_to(home)}")
    student.shot("alice-9-feedback")
    text = student.page.locator("body").inner_text()
    assert re.search(r"Score:\s*11(\.0)?\s*/\s*16(\.0)?", text), text[:800]
    assert "BEGIN HIDDEN TESTS" not in feedback.read_text()


def test_formgrader_on_the_grader_service_lists_the_grades(hub, people):
    instructor = people(ad101(hub).instructors[0])
    instructor.log_in("instructor-1")
    page = instructor.page
    # JupyterHub 4.1+ forbids frames across servers: the formgrader opens in its own tab
    page.goto(f"{hub.url}/services/ad101/formgrader/manage_students")
    table = page.locator("table")
    try:
        table.get_by_text(alice(hub)).first.wait_for(timeout=60_000)
    finally:
        instructor.shot("instructor-2-formgrader-students")
    rows = table.locator("tbody tr").all_inner_texts()
    row = next(r for r in rows if alice(hub) in r)
    assert "11" in row, rows
    page.goto(f"{hub.url}/services/ad101/formgrader/gradebook/{PS1}/")
    page.get_by_text(Path(PS1_NOTEBOOK).stem).first.wait_for(timeout=60_000)
    instructor.shot("instructor-3-formgrader-gradebook")
    # and inside the grader service's JupyterLab (Nbgrader > Formgrader), the same origin allows the frame
    page.goto(f"{hub.url}/services/ad101/lab")
    page.locator(".jp-LabShell").wait_for(timeout=60_000)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Nbgrader$")).click()
    page.locator(".lm-Menu-item:visible .lm-Menu-itemLabel", has_text="Formgrader").filter(has_not_text="local").click()
    frame = page.frame_locator("#formgrader-iframe iframe")
    frame.get_by_text(PS1, exact=True).first.wait_for(timeout=60_000)
    instructor.shot("instructor-4-formgrader-in-lab")


# --- a second course on the same hub ------------------------------------------------------------------


def test_a_second_course_keeps_its_students_assignments_and_grades_apart(hub, people):
    other = ad102(hub)
    student = people(other.students[0])
    student.log_in("dave-1")
    student.open_assignments()
    listed = student.page.locator("#assignments").inner_text()
    student.shot("dave-2-assignments")
    assert PS2 in listed and "ad102" in listed and PS1 not in listed and "ad101" not in listed, listed
    # nbgrader's fetch of the other course, with his own server's token: the hub's groups say no
    env = {k: v for k, v in server_environment(pwd.getpwnam(student.name).pw_uid).items()
           if k.startswith("JUPYTERHUB_")}
    fetched = run_as(hub, student.name, str(hub.bin / "nbgrader"), "fetch_assignment", PS1, "--course", "ad101",
                     env=env)
    assert fetched.returncode != 0 and "do not have access" in fetched.stdout + fetched.stderr, fetched.stderr
    # the other course's grader reads nothing of ad101; its gradebook and exchange know no ad101 student
    first = ad101(hub).directory(hub)
    seen = _probe(hub, other.grader, [first, first / "gradebook.db", inbound(hub, "ad101")])
    assert set(seen.values()) == {"denied"}, seen
    # ad101's ps1 (two submissions in ad101's exchange) is no assignment of ad102: refused, nothing collected
    refused = run_as(hub, other.grader, str(hub.bin / "kitgrade"), "collect", PS1, cwd=str(other.directory(hub)))
    assert refused.returncode == 2 and "not released" in refused.stderr, (refused.stdout, refused.stderr)
    collected = kitgrade(hub, other, "collect", PS2)
    assert not any(s in collected.stdout for s in ad101(hub).students), collected.stdout
    assert not (other.directory(hub) / "submitted").exists() or not any(
        (other.directory(hub) / "submitted" / s).exists() for s in ad101(hub).students)
    kitgrade(hub, other, "export")
    grades = (other.directory(hub) / "grades.csv").read_text()
    assert not any(s in grades for s in ad101(hub).students), grades


# --- the whole hub -------------------------------------------------------------------------------------


def _class_processes(hub) -> set[int]:
    """The hub and what it started (proxy, services, servers, kernels), and all of the class's accounts."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError):
                pass
    pids, added = {hub.server.process.pid}, True
    while added:
        children = {pid for pid, parent in parents.items() if parent in pids} - pids
        pids |= children
        added = bool(children)
    for account in hub.accounts():
        pids |= set(kithub.processes_of(pwd.getpwnam(account).pw_uid))
    return pids


def test_the_hub_and_every_server_listen_on_localhost_only(hub):
    sockets = listening_sockets(_class_processes(hub))
    (ARTIFACTS / "listening.txt").write_text("\n".join(f"{a}:{p} pid {pid}" for a, p, pid in sorted(sockets)))
    ports = {port for _, port, _ in sockets}
    expected = {hub.hub_port, hub.hub_api_port, hub.proxy_api_port, *(c.port for c in hub.courses)}
    assert expected <= ports, (expected, sockets)
    assert len(sockets) >= len(expected) + 3, sockets  # and the user servers and their kernels
    assert all(address in ("127.0.0.1", "::1") for address, _, _ in sockets), sockets


def test_memory_of_an_idle_student_server_and_of_one_running_a_lesson(hub, people):
    student = people(ad101(hub).students[2])  # carol: nothing else runs as her
    uid = pwd.getpwnam(student.name).pw_uid
    student.log_in("carol-1")
    time.sleep(5)
    idle = memory_of(uid)
    notebook = student.notebook("lessons/en/02_backward_and_grad.ipynb", "lesson2")
    notebook.run_all()
    assert not notebook.errors()
    busy = memory_of(uid)
    student.shot("carol-2-lesson-ran")
    report = (f"idle student server (jupyterhub-singleuser, JupyterLab open): PSS {idle['pss_mib']:.0f} MiB, "
              f"RSS {idle['rss_mib']:.0f} MiB, {len(idle['processes'])} process(es)\n"
              f"the same student after running lesson 2 (server + kernel): PSS {busy['pss_mib']:.0f} MiB, "
              f"RSS {busy['rss_mib']:.0f} MiB, {len(busy['processes'])} process(es)\n")
    (ARTIFACTS / "memory.txt").write_text(report)
    print("\n" + report)
    assert 20 < idle["pss_mib"] < 1024 and busy["pss_mib"] > idle["pss_mib"] + 10, report
