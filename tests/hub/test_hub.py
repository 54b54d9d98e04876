"""A class on a real JupyterHub, end to end, in a real browser.

kithub (deploy/hub/kithub/) sets up a class the way ``make hub`` does, with real system accounts
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
  from bob's own terminal, what he can do to a classmate's submission (read, replace, rename,
  delete, plant in her name) fails, and what he plants in the exchange (links, a pipe, huge
  files, odd names) is set aside by collect, which collects everyone else;
* ps1's due date passes (class.json, ``python -m kithub dates``): carol submits late in her browser and
  is marked late with the course's penalty; bob's late entry claims a time from 2000 in its
  name, its timestamp.txt and its files' mtimes, and is taken at its arrival, within his extension;
* ``kitgrade`` and ``reset-lesson`` work in the hub's terminals (students' and the grader
  service's), and feedback leaves the hidden tests out by default;
* the second course keeps its students, assignments and grades apart; everything listens on
  127.0.0.1 only. The memory of an idle student server and of one running a lesson is measured;
* at the end, from each student's own terminal, the whole file system is walked: nothing of the
  course (solutions, hidden tests), the gradebook, the hub's log or a classmate's work is
  readable. The kit's checkout is closed to the class for the test, as docs/deploy.md asks.

Screenshots, the hub's log and the memory figures are written to ``artifacts/hub/``; the
gradebooks that ``python -m kithub teardown`` keeps aside are checked and removed. Needs root
(accounts), ``make hub-env`` (.venv-hub and configurable-http-proxy, which ``make test`` builds),
Chromium and Playwright. Without them the tests skip, except in CI (``CI=true``), where they fail.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser_support import IN_CI, artifacts_folder, free_port, launch_chromium, unavailable
from kit_paths import ROOT
from kithub import banner, set_up
from kithub.accounts import account_exists, processes_of, remove_accounts
from kithub.hub_process import Hub
from kithub.spec import CLASS_FILE, TIME_FORMAT, ClassSpec, CourseSpec, new_password
from hub_support import (PROXY, WALK, Person, listening_sockets, memory_of, python_as, run_as, server_environment,
                         solution_cells)

ARTIFACTS = ROOT / "artifacts" / "hub"
HUB_ENV = (ROOT / ".venv-hub").resolve()  # outside the checkout (make hub-env); the link points to it
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


def _test_class(state: Path) -> ClassSpec:
    """Two courses; account names carry a random tag so that runs on one machine never meet (and so
    do the ports, each free when chosen, and the state folder, a new temporary one). ps1 is due
    tomorrow until the test moves its due date; bob has a day's extension; late work scores zero."""
    tag = secrets.token_hex(2)
    name = {who: f"{who}-{tag}" for who in ("teach", "teach2", "alice", "bob", "carol", "dave")}
    tomorrow = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime(TIME_FORMAT)
    courses = [
        CourseSpec("ad101", grader=f"grader-{tag}-ad101", port=free_port(), instructors=[name["teach"]],
                          students=[name["alice"], name["bob"], name["carol"]], assignments=[PS1],
                          due={PS1: tomorrow}, extensions={PS1: {name["bob"]: 24}}, late_penalty="zero"),
        CourseSpec("ad102", grader=f"grader-{tag}-ad102", port=free_port(), instructors=[name["teach2"]],
                          students=[name["dave"]], assignments=[PS2], due={PS2: tomorrow}),
    ]
    return ClassSpec(state=str(state), courses=courses,
                            passwords={person: new_password() for person in name.values()},
                            hub_port=free_port(), hub_api_port=free_port(), proxy_api_port=free_port(),
                            python=str(HUB_ENV / "bin" / "python"))


def _stale_kit() -> list[str]:
    """The kit's files that differ between this checkout and the copy in the hub's environment."""
    [site] = HUB_ENV.glob("lib/python*/site-packages")
    folders = {"grader": ROOT / "grader", "autograd_core": ROOT / "autograd_core", "graph_explorer": ROOT / "graph_explorer",
               "kithub": ROOT / "deploy" / "hub" / "kithub"}
    return [str(path.relative_to(ROOT)) for package, folder in folders.items() for path in sorted(folder.rglob("*.py"))
            if not (site / package / path.relative_to(folder)).is_file()
            or (site / package / path.relative_to(folder)).read_bytes() != path.read_bytes()]


@pytest.fixture(scope="module")
def hub(artifacts):
    """The class, set up and served for the whole module; accounts and files removed afterwards."""
    if os.geteuid() != 0:
        _unavailable("the hub test creates system accounts: it runs as root")
    if not (HUB_ENV / "bin" / "jupyterhub").exists() or not PROXY.exists():
        _unavailable("the hub's environment is missing: run `make hub-env` (.venv-hub and configurable-http-proxy)")
    stale = _stale_kit()
    if stale:
        pytest.fail(f"the hub's environment {HUB_ENV} holds an older copy of the kit ({', '.join(stale[:3])} ...): "
                    "run `make hub-env`", pytrace=False)
    state = Path(tempfile.mkdtemp(prefix="kit-hub-"))
    state.chmod(0o755)
    spec = _test_class(state)
    artifacts.chmod(0o700)  # the hub's log is written there
    server = Hub(spec, log_path=artifacts / "jupyterhub.log")
    checkout_mode = ROOT.stat().st_mode & 0o7777
    ROOT.chmod(checkout_mode & ~0o007)  # the checkout holds the course: closed to the class, as deploy.md asks
    backup = None
    try:
        started = time.monotonic()
        set_up.setup(spec, log=lambda line: None)
        set_up_time = time.monotonic() - started
        server.start()
        (artifacts / "timings.txt").write_text(f"set-up (accounts, 2 courses, 2 releases): {set_up_time:.1f} s\n"
                                               f"hub start: {time.monotonic() - started - set_up_time:.1f} s\n")
        spec.server = server
        yield spec
    finally:
        proxy_pid = state / "hub" / "jupyterhub-proxy.pid"
        proxy = int(proxy_pid.read_text()) if proxy_pid.exists() else None
        server.stop()
        deadline = time.monotonic() + 15  # the proxy ends on SIGTERM, slowly on a busy machine
        while proxy is not None and Path(f"/proc/{proxy}").exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        proxy_left = proxy is not None and Path(f"/proc/{proxy}").exists()
        uids = [pwd.getpwnam(a).pw_uid for a in spec.accounts() if account_exists(a)]
        left = {uid: processes_of(uid) for uid in uids if processes_of(uid)}
        try:
            if (state / CLASS_FILE).exists():  # what `make hub-clean` runs
                removed = subprocess.run([str(spec.python), "-m", "kithub", "teardown", "--state",
                                          str(state)], capture_output=True, text=True, timeout=300)
                backup = next(state.parent.glob(f"{state.name}.backup-*"), None)
            else:  # set-up stopped before the class existed
                shutil.rmtree(state, ignore_errors=True)
        finally:
            ROOT.chmod(checkout_mode)
            if state.exists():
                remove_accounts(state)
                shutil.rmtree(state, ignore_errors=True)
            gradebooks = sorted(str(p.relative_to(backup)) for p in backup.rglob("gradebook.db")) if backup else []
            if backup:
                shutil.rmtree(backup)
        assert not spec.profile.exists(), f"{spec.profile} left behind"
        if hasattr(spec, "server"):  # the class was set up: hub-clean kept its gradebooks and said where
            assert removed.returncode == 0, removed.stderr
            assert gradebooks == ["ad101/gradebook.db", "ad102/gradebook.db"], (gradebooks, removed.stderr)
            assert f"gradebook(s) are kept in {backup}" in removed.stderr and "warning" in removed.stderr, removed.stderr
        assert not left, f"processes left running after the hub stopped: {left}"
        assert not proxy_left, f"configurable-http-proxy (pid {proxy}) left running after the hub stopped"
        assert not any(account_exists(a) for a in spec.accounts()), "accounts left behind"


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


def carol(hub):
    return ad101(hub).students[2]


def inbound(hub, course="ad101") -> Path:
    return hub.exchange / course / "inbound"


def received(hub, course="ad101") -> Path:
    """Where the course's clerk moves each submission as it arrives (grader/hub_exchange/)."""
    return hub.exchange / course / "received"


def arrival(submission: Path) -> datetime.datetime:
    """The arrival time in a received submission's name (the clerk's, from the kernel's ctimes)."""
    return datetime.datetime.strptime(submission.name.rsplit("+", 3)[2], "%Y-%m-%d %H:%M:%S.%f UTC")


def submissions_of(hub, student: str, timeout: float = 20) -> list[Path]:
    """The student's submissions taken in by the clerk (waits for it, a second at most per look)."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(p for p in received(hub).iterdir() if p.name.startswith(f"{student}+{PS1}+"))
        in_inbound = [p for p in inbound(hub).iterdir() if p.name.startswith(f"{student}+") and p.is_dir()
                      and not p.is_symlink() and p.stat().st_uid == pwd.getpwnam(student).pw_uid]
        if (found and not in_inbound) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


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
    assert notebook.page.get_by_text("official Jupyter news").count() == 0, "the news prompt covers the lesson"
    assert prompts and all(p.strip("[]:").isdigit() for p in prompts), prompts
    notebook.save()
    # what ran and was saved is her copy, with her outputs; the original is as it was
    original = (ROOT / "notebooks" / "en" / lesson.name).read_bytes()
    deadline = time.monotonic() + 30
    while lesson.read_bytes() == original and time.monotonic() < deadline:
        time.sleep(0.5)
    assert lesson.read_bytes() != original
    assert '"execution_count": null' not in lesson.read_text()


def test_a_student_resets_a_lesson_in_her_terminal(hub, people):
    """A hub terminal is a login shell, whose /etc/profile sets PATH anew: the class's own
    /etc/profile.d file puts reset-lesson and kitgrade back."""
    student = people(alice(hub))
    home = Path(pwd.getpwnam(student.name).pw_dir)
    original = (ROOT / "notebooks" / "en" / "01_recording_history.ipynb").read_bytes()
    mine = (home / LESSON).read_bytes()
    assert mine != original  # run and saved by the test above
    status, shown = student.in_terminal("shopt -q login_shell && echo LOGIN-SHELL; command -v kitgrade; "
                                        "reset-lesson en/01_recording_history")
    assert status == 0, shown
    assert "LOGIN-SHELL" in shown and f"{hub.bin}/kitgrade" in shown, shown
    assert (home / LESSON).read_bytes() == original
    assert (home / (LESSON + ".mine")).read_bytes() == mine
    status, shown = student.in_terminal("reset-lesson en/99_no_such_lesson")
    assert status == 2 and "no lesson 'en/99_no_such_lesson'" in shown and "Traceback" not in shown, shown


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
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    student.submit(PS1)
    student.shot("alice-6-submitted")
    # the clerk took it out of inbound/, named by its arrival on the server's clock
    [submission] = submissions_of(hub, student.name)
    assert before - datetime.timedelta(seconds=1) <= arrival(submission) <= before + datetime.timedelta(seconds=120)
    assert submission.stat().st_uid == pwd.getpwnam(ad101(hub).grader).pw_uid  # the clerk's copy, not hers


def test_another_student_submits_a_blank_ps1(hub, people):
    student = people(bob(hub))
    student.log_in("bob-1")
    student.open_assignments()
    student.fetch(PS1)
    student.submit(PS1)
    student.shot("bob-2-submitted-blank")
    assert len(submissions_of(hub, student.name)) == 1  # taken in by the clerk


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


def test_a_student_cannot_read_another_students_submission(hub):
    [theirs] = submissions_of(hub, alice(hub))
    paths = [inbound(hub), received(hub), theirs / PS1_NOTEBOOK, theirs / "submission_secret.txt",
             theirs / "timestamp.txt", Path(pwd.getpwnam(alice(hub)).pw_dir) / "ad101"]
    seen = _probe(hub, bob(hub), paths)
    assert set(seen.values()) == {"denied"}, seen
    # the control: the same probe reads what is meant for students, and the grader reads the submission
    released = hub.exchange / "ad101" / "outbound" / PS1 / PS1_NOTEBOOK
    assert _probe(hub, bob(hub), [released]) == {str(released): "read"}
    grader = _probe(hub, ad101(hub).grader, [received(hub), theirs / PS1_NOTEBOOK, theirs / "timestamp.txt"])
    assert set(grader.values()) == {"read"}, grader
    # the modes that make it so: nothing for others in her submission; inbound/ sticky; received/ the grader's
    assert all(p.stat().st_mode & 0o007 == 0 for p in [theirs, *theirs.iterdir()])
    assert inbound(hub).stat().st_mode & 0o1000 and received(hub).stat().st_mode & 0o777 == 0o700


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


def test_memory_of_an_idle_student_server_and_of_one_running_a_lesson(hub, people):
    student = people(ad101(hub).students[2])  # carol: nothing else runs as her
    uid = pwd.getpwnam(student.name).pw_uid
    student.log_in("carol-1")
    idle = settled_memory_of(uid)
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


def settled_memory_of(uid: int, timeout: float = 20) -> dict:
    """``memory_of(uid)`` once it has settled: a just-started server still loads its extensions, so its
    memory is read when two looks half a second apart differ by under 2 MiB (or after ``timeout``)."""
    deadline = time.monotonic() + timeout
    before = memory_of(uid)
    while True:
        time.sleep(0.5)
        now = memory_of(uid)
        if abs(now["pss_mib"] - before["pss_mib"]) < 2 or time.monotonic() > deadline:
            return now
        before = now


# --- classmates: what bob can do to alice's submission from his own terminal ---------------------------

#: what bob plants in ps1's inbound/ from his terminal: (entry name, the shell that makes it)
def _plants(hub) -> list[tuple[str, str]]:
    a, b, c = alice(hub), bob(hub), carol(hub)
    early = "2000-01-01 00:00:00.000000 UTC"
    return [
        (f"{a}+{PS1}+{early}+dangling", "ln -s /nonexistent/at/all \"$E\""),
        (f"{b}+{PS1}+{early}+to-the-source", f"ln -s {ad101(hub).directory(hub) / 'source'} \"$E\""),
        (f"{c}+{PS1}+{early}+pipe", "mkfifo \"$E\""),
        (f"{b}+{PS1}+{early}+huge", "truncate -s 5G \"$E\""),
        (f"{a}+{PS1}+{early}+file", "echo '{}' > \"$E\""),
        (f"{a}+{PS1}+{early}+in-her-name", f"mkdir -m 770 \"$E\" && cp ~/ad101/{PS1}/{PS1_NOTEBOOK} \"$E\"/"),
        (f"{a}+{PS1}\n+{early}+odd", "mkdir \"$E\""),
        (f"../{a}+{PS1}+{early}+x", None),  # a name nbgrader would take as a path: refused by the file system
    ]


def test_a_classmate_cannot_read_replace_rename_or_delete_a_submission(hub, people):
    """alice's submission is in received/, out of everyone's reach but the grader's; an entry of hers in
    inbound/ (a folder she is still writing, as nbgrader's submit does) is hers alone: the sticky bit
    keeps bob from renaming or deleting it, its modes from writing into it."""
    [theirs] = submissions_of(hub, alice(hub))
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in theirs.iterdir()}
    hers = inbound(hub) / f".submitting-{alice(hub)}-probe"
    status, shown = people(alice(hub)).in_terminal(f"mkdir -m 770 '{hers}' && echo mine > '{hers}/x.ipynb'")
    assert status == 0, shown
    student = people(bob(hub))
    attempts = {
        "list inbound": f"ls '{inbound(hub)}'",
        "list received": f"ls '{received(hub)}'",
        "read": f"cat '{theirs}/{PS1_NOTEBOOK}'",
        "replace": f"cp ~/ad101/{PS1}/{PS1_NOTEBOOK} '{theirs}/{PS1_NOTEBOOK}'",
        "rename": f"mv '{theirs}' /tmp/taken",
        "delete": f"rm -rf '{theirs}'",
        "write into her entry": f"echo bob > '{hers}/x.ipynb'",
        "plant in her entry": f"touch '{hers}/planted.ipynb'",
        "rename her entry": f"mv '{hers}' '{inbound(hub)}/.mine'",
        "delete her entry": f"rm -rf '{hers}'",
    }
    for what, command in attempts.items():
        status, shown = student.in_terminal(command)
        assert status != 0 and ("Permission denied" in shown or "Operation not permitted" in shown), (what, shown)
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in theirs.iterdir()} == digest
    assert (hers / "x.ipynb").read_text() == "mine\n" and not (hers / "planted.ipynb").exists()
    assert people(alice(hub)).in_terminal(f"rm -rf '{hers}'")[0] == 0  # she may


def test_the_due_date_passes_and_carol_submits_late(hub, people):
    """The instructor moves ps1's due date to now in class.json and applies it (`python -m kithub dates`); carol
    (no extension) submits her answers in the browser afterwards: late."""
    course = ad101(hub)
    hub.due = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0, tzinfo=None)
    course.due[PS1] = hub.due.strftime(TIME_FORMAT)
    hub.save()
    applied = subprocess.run([str(hub.python), "-m", "kithub", "dates", "--state", str(hub.root)],
                             capture_output=True, text=True, timeout=120)
    assert applied.returncode == 0, applied.stderr
    time.sleep(1.5)
    student = people(carol(hub))
    student.open_assignments()
    student.fetch(PS1)
    # her answers (alice's, typed in the browser above) in her fetched notebook, as she would save them
    home = Path(pwd.getpwnam(student.name).pw_dir)
    mine = home / "ad101" / PS1 / PS1_NOTEBOOK
    shutil.copyfile(Path(pwd.getpwnam(alice(hub)).pw_dir) / "ad101" / PS1 / PS1_NOTEBOOK, mine)
    os.chown(mine, pwd.getpwnam(student.name).pw_uid, pwd.getpwnam(student.name).pw_gid)
    student.open_assignments()
    student.submit(PS1)
    student.shot("carol-3-submitted-late")
    [submission] = submissions_of(hub, student.name)
    assert arrival(submission) > hub.due


def test_a_student_cannot_set_the_time_of_a_submission_or_stop_collect(hub, people):
    """After the due date, bob hands in a folder whose name, timestamp.txt (which he then makes
    unreadable) and files' mtimes all say 2000, holding links and pipes beside his notebook (graded
    all the same: the time is the clerk's); and he plants links, a pipe, a 5 GB file, an
    entry in alice's name and odd names in inbound/ (all from his terminal)."""
    student = people(bob(hub))
    early = "2000-01-01 00:00:00.000000 UTC"
    source = ad101(hub).directory(hub) / "source" / PS1 / PS1_NOTEBOOK
    late = f"{student.name}+{PS1}+{early}+early"
    made = student.in_terminal(
        f"cd '{inbound(hub)}' && mkdir -m 770 '{late}' && cd '{late}' && cp ~/ad101/{PS1}/{PS1_NOTEBOOK} . && "
        f"echo '{early}' > timestamp.txt && echo his-own > submission_secret.txt && "
        f"ln -s '{source}' leak.ipynb && mkfifo pipe.ipynb && "
        "truncate -s 200M huge.ipynb && echo notes > notes.txt && ln notes.txt hard.txt && "
        "touch -h -d '2000-01-01 00:00:00' * . && chmod 000 timestamp.txt && ls -la --time-style=+%Y")
    assert made[0] == 0, made[1]
    for name, shell in _plants(hub):
        if shell is None:
            status, shown = student.in_terminal(f"mkdir '{inbound(hub)}/{name}'")
            assert status != 0, shown
            continue
        status, shown = student.in_terminal(f"E='{inbound(hub)}'/$'{name.replace(chr(10), chr(92) + 'n')}'; {shell}")
        assert status == 0, (name, shown)
    [*_, newest] = sorted(submissions_of(hub, student.name), key=arrival)
    assert arrival(newest) > hub.due  # taken at its arrival, not at 2000


# --- the instructor: kitgrade on the hub ----------------------------------------------------------------


def test_instructor_collects_in_the_grader_services_terminal(hub, people):
    """``kitgrade collect`` typed into the grader service's terminal (a login shell as the grader
    account): every honest submission is collected, every plant reported and set aside."""
    instructor = people(ad101(hub).instructors[0])
    instructor.log_in("instructor-1")
    status, shown = instructor.in_terminal(f"whoami; pwd; kitgrade collect {PS1}", server="/services/ad101",
                                           timeout=600)
    (ARTIFACTS / "collect.txt").write_text(shown)
    assert status == 0, shown
    assert ad101(hub).grader in shown and str(ad101(hub).directory(hub)) in shown
    students = ", ".join(sorted([alice(hub), bob(hub), carol(hub)]))
    assert f"3 submission(s) in submitted/: {students}" in shown, shown
    flat = shown.replace("\n", " ")
    for name, shell in _plants(hub):
        if shell is not None:
            assert f"set aside {name!r}" in flat, (name, shown)
    assert f"set aside {hub.forged.name!r} in inbound/: it claims to be {alice(hub)}'s submission but is owned by " \
           f"{bob(hub)}" in flat, shown
    for name, reason in [("leak.ipynb", "a symbolic link"), ("pipe.ipynb", "not a regular file"),
                         ("huge.ipynb", "larger than"), ("hard.txt", "a hard link")]:
        assert f"set aside in {bob(hub)}'s submission: {name!r}: {reason}" in flat, (name, shown)
    # what was taken: alice's answers whole; bob's notebook without what he linked in; the arrival times
    submitted = ad101(hub).directory(hub) / "submitted"
    [theirs] = submissions_of(hub, alice(hub))
    assert (submitted / alice(hub) / PS1 / PS1_NOTEBOOK).read_bytes() == (theirs / PS1_NOTEBOOK).read_bytes()
    assert sorted(p.name for p in (submitted / bob(hub) / PS1).iterdir()) == [
        PS1_NOTEBOOK, "submission_secret.txt", "timestamp.txt"]
    for student, late in [(alice(hub), False), (bob(hub), True), (carol(hub), True)]:
        stamp = datetime.datetime.strptime((submitted / student / PS1 / "timestamp.txt").read_text().strip(),
                                           "%Y-%m-%d %H:%M:%S.%f UTC")
        assert (stamp > hub.due) == late, (student, stamp, hub.due)


def test_instructor_autogrades_with_the_late_penalty_and_releases_feedback(hub):
    course = ad101(hub)
    graded = kitgrade(hub, course, "autograde", PS1, "--quiet")
    # as the grader account, every notebook in bubblewrap (autograde refuses where it cannot run)
    assert "WITHOUT" not in graded.stdout + graded.stderr, graded.stdout + graded.stderr
    scores = dict(re.findall(r"^\s+(\S+)\s+(\d+(?:\.\d+)? / \d+(?:\.\d+)?)", graded.stdout, re.M))
    # every test passes; her two written answers wait for the instructor
    assert scores.get(alice(hub)) == "11 / 16", graded.stdout
    assert re.search(rf"^\s+{alice(hub)}\s+11 / 16\s+not final: 5 point\(s\) await manual grading$", graded.stdout,
                     re.M), graded.stdout
    assert scores.get(bob(hub), "").startswith("0 /"), graded.stdout
    # the gradebook, as nbgrader keeps lateness: carol late, her 11 points taken by the course's
    # penalty ("zero"); bob's entry arrived after the due date too, within his extension
    late = python_as(hub, course.grader, GRADEBOOK_LATENESS,
                     env={"PS1": PS1, "COURSE": "ad101", "GRADEBOOK": str(course.directory(hub) / "gradebook.db")})
    assert late.returncode == 0, late.stderr
    lateness = json.loads(late.stdout)
    assert lateness[carol(hub)]["late"] > 0 and lateness[carol(hub)]["score"] == 11, lateness
    assert lateness[carol(hub)]["penalty"] == 11, lateness
    assert lateness[bob(hub)]["late"] == 0 and lateness[bob(hub)]["extension_hours"] == 24, lateness
    assert lateness[alice(hub)]["late"] == 0 and lateness[alice(hub)]["penalty"] == 0, lateness
    # the command `make hub` prints for the instructor: the hidden tests left out by default
    assert f"kitgrade feedback {PS1} --release" in banner.text(hub)
    released = kitgrade(hub, course, "feedback", PS1, "--release")
    assert "(hidden tests left out)" in released.stdout, released.stdout
    everyone = ", ".join(sorted([alice(hub), bob(hub), carol(hub)]))
    assert f"released to the exchange: {everyone}" in released.stdout, released.stdout
    (ARTIFACTS / "kitgrade.txt").write_text("\n".join(r.stdout + r.stderr for r in (graded, released)))
    assert len(list((hub.exchange / "ad101" / "feedback").glob("*.html"))) == 3


GRADEBOOK_LATENESS = """
import json, os
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + os.environ["GRADEBOOK"], os.environ["COURSE"]) as gradebook:
    print(json.dumps({s.student.id: {"late": s.total_seconds_late, "penalty": s.late_submission_penalty,
                                     "score": s.score, "extension_hours": (s.extension.total_seconds() / 3600
                                                                           if s.extension else 0)}
                      for s in gradebook.find_assignment(os.environ["PS1"]).submissions}))
"""


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
    assert not [line for line in secret_lines(hub)["never"] if line in feedback.read_text()]


def test_formgrader_on_the_grader_service_lists_the_grades(hub, people):
    instructor = people(ad101(hub).instructors[0])  # logged in to collect, above
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
    # ad101's ps1 (submissions in ad101's exchange) is no assignment of ad102 (its grader was given ps2's
    # exercises only): refused, nothing collected
    refused = run_as(hub, other.grader, str(hub.bin / "kitgrade"), "collect", PS1, cwd=str(other.directory(hub)))
    assert refused.returncode == 2 and f"no assignment '{PS1}'" in refused.stderr, (refused.stdout, refused.stderr)
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
        pids |= set(processes_of(pwd.getpwnam(account).pw_uid))
    return pids


def test_the_hub_and_every_server_listen_on_localhost_only(hub):
    sockets = listening_sockets(_class_processes(hub))
    (ARTIFACTS / "listening.txt").write_text("\n".join(f"{a}:{p} pid {pid}" for a, p, pid in sorted(sockets)))
    ports = {port for _, port, _ in sockets}
    expected = {hub.hub_port, hub.hub_api_port, hub.proxy_api_port, *(c.port for c in hub.courses)}
    assert expected <= ports, (expected, sockets)
    assert len(sockets) >= len(expected) + 3, sockets  # and the user servers and their kernels
    assert all(address in ("127.0.0.1", "::1") for address, _, _ in sockets), sockets


# --- nothing of the course, the grader or a classmate, from any student's terminal ---------------------

def secret_lines(hub) -> dict[str, list[str]]:
    """Lines of the exercises' hidden tests ("never": readable by no student) and of their solutions
    ("others": readable only in a student's own files), each long and found in no public file (the
    released notebooks, the lessons, the kit's code)."""
    public = "\n".join(p.read_text(errors="replace") for folder in (ROOT / "notebooks", ROOT / "grader",
                                                                      ROOT / "autograd_core", hub.exchange / "ad101" /
                                                                      "outbound", hub.exchange / "ad102" / "outbound")
                       for p in folder.rglob("*") if p.suffix in (".py", ".ipynb"))
    found = {"never": [], "others": []}
    for assignment, notebook in [(PS1, PS1_NOTEBOOK), (PS2, "build_your_own.ipynb")]:
        cells = json.loads((ROOT / "exercises" / assignment / notebook).read_text())["cells"]
        for cell in cells:
            source = "".join(cell["source"])
            for hidden in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", source, re.S):
                found["never"] += [line.strip() for line in hidden.splitlines()]
        for text in solution_cells(ROOT / "exercises" / assignment / notebook).values():
            found["others"] += [line.strip() for line in text.splitlines()]
    return {kind: sorted({line for line in lines if len(line) >= 30 and line not in public})
            for kind, lines in found.items()}


def test_no_student_reads_anything_of_the_course_the_grader_or_a_classmate(hub, people):
    """From each student's own terminal (their server, Jupyter's terminal API, their browser), the whole
    file system is walked: no readable file holds a hidden test, another's solutions or written
    answers, or names a classmate's submission folder; no gradebook, hub database, log or secret is
    readable. The walks run side by side. (On a shared developer machine the walk also finds other
    people's copies of the course, in their checkouts and scratch files: it does find what is there.
    Other checkouts and root's Python environments other than the class's, a copy of the kit and
    600 MB each, are listed in walk.json, not read: nothing of the class can be in them.)"""
    secrets_ = secret_lines(hub)
    assert len(secrets_["never"]) >= 10 and len(secrets_["others"]) >= 10, secrets_
    students = [*ad101(hub).students, *ad102(hub).students]
    spec = {"never": secrets_["never"],
            "others": [*secrets_["others"], WRITTEN_ANSWER, *(f"{s}+{PS1}+" for s in students)],
            "private_names": ["gradebook.db", "jupyterhub.sqlite", "jupyterhub.log", "jupyterhub_cookie_secret",
                              "class.json", "jupyterhub-proxy.pid"],
            # where the class's own gradebooks, logs and secrets could be (not the environment, whose
            # packages ship sample files: nbgrader's tests hold an empty gradebook.db)
            "class_roots": [str(hub.root), str(ROOT), tempfile.gettempdir()],
            "skip": [str(ARTIFACTS)], "own_env": str(HUB_ENV)}
    walk = hub.root / "walk"  # the walk's own files: left out of what it reads
    walk.mkdir(mode=0o755, exist_ok=True)
    spec["skip"].append(str(walk))
    (walk / "walk.py").write_text(WALK)
    (walk / "secrets.json").write_text(json.dumps(spec))
    for path in walk.iterdir():
        path.chmod(0o644)
    for name in students:
        people(name).start_in_terminal(f"{hub.python} {walk / 'walk.py'} {walk / 'secrets.json'}", timeout=600)
    results = {}
    for name in students:
        status, shown = people(name).terminal_output()
        assert status == 0, shown[-2000:]
        results[name] = json.loads(shown.split("KIT-WALK")[1])
    (ARTIFACTS / "walk.json").write_text(json.dumps(results, indent=1))
    # What the class made or owns counts everywhere. Other people's files on the same machine (a
    # developer's checkouts, scratch files in /tmp, CI's machine included, which also holds the
    # checkout it was cloned from) are not the class's: they are listed in walk.json, not failed on.
    uids = {pwd.getpwnam(account).pw_uid for account in hub.accounts()}
    places = (str(hub.root), str(HUB_ENV), str(ROOT))
    for name, result in results.items():
        assert result["user"] == pwd.getpwnam(name).pw_uid and result["files"] > 10_000, (name, result["files"])
        ours = [f for f in result["found"] if f[2] in uids or f[0].startswith(places)]
        assert ours == [], (name, ours)
    # the control: the walk finds what is readable (her own submission holds her written answer)
    [theirs] = submissions_of(hub, alice(hub))
    assert WRITTEN_ANSWER in (theirs / PS1_NOTEBOOK).read_text()



# --- the make targets, as a user who is not root --------------------------------------------------------

@pytest.mark.parametrize("target", ["hub", "hub-env", "hub-clean"])
def test_make_hub_as_another_user_stops_with_a_clear_message(target):
    if os.geteuid() != 0:
        _unavailable("the check runs make as another user: it runs as root")
    folder = Path(tempfile.mkdtemp(prefix="kit-make-"))  # a folder the other user can reach
    folder.chmod(0o755)
    shutil.copyfile(ROOT / "Makefile", folder / "Makefile")
    nobody = pwd.getpwnam("nobody")
    try:
        result = subprocess.run(["make", "-C", str(folder), target], capture_output=True, text=True, timeout=60,
                                user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[],
                                env={"PATH": "/usr/bin:/bin", "HOME": str(folder)})
    finally:
        shutil.rmtree(folder)
    assert result.returncode != 0
    assert f"{target}: a class on the hub has a system account per person" in result.stderr, result.stderr
    assert f"run it as root (sudo make {target})" in result.stderr, result.stderr
