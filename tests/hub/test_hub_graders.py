"""Each grader under their own name: two teaching assistants grade one course on a real hub.

One course on a real hub (kithub, deploy/hub/kithub/; real accounts) with an instructor, two teaching
assistants and a student. The student's ps1 is handed in, collected and autograded; then each assistant
logs in on the hub's login page, opens the course's one grader service (the formgrader's HTTP API, with
a token of their own) and changes a manual grade, the second a comment too, and opens a terminal of the
service and runs ``kitgrade`` in it. The course's grading record names each with what they changed,
and so do nbgrader's log and the hub's; the student is refused by the grader service and changes
nothing. No browser: the formgrader's page makes the same requests (tests/test_hub_instructor_pages.py
saves a grade through the page itself).

Needs root and ``make hub-env``; without them the tests skip, except in CI (``CI=true``).
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import websocket

import grading_support
from grading_support import NOTEBOOK, formgrader, grades_of, save_grade
from hub_client import Student
from hub_support import PS1, PS1_NOTEBOOK, one_course_class, require_hub, run_as, served_class
from kithub.grading_record import RECORD, field

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def hub():
    require_hub("the hub's test of several graders")
    spec = one_course_class("kit-graders-", ["alice"], assistants=("ta1", "ta2"))
    with served_class(spec) as served:
        yield served


@pytest.fixture(scope="module")
def graded(hub):
    """alice's ps1 (as released: her written answers wait for a grader), handed in from her account,
    taken in by the clerk, collected and autograded by the course's grader account."""
    course, alice = hub.courses[0], hub.names["alice"]
    released = (hub.exchange / "ad101" / "outbound" / PS1 / PS1_NOTEBOOK).read_text()
    entry = hub.exchange / "ad101" / "inbound" / f"{alice}+{PS1}+2026-01-01 00:00:00.000000 UTC+graders"
    made = run_as(hub, alice, str(hub.python), "-c", "import os, sys; os.umask(0o007); os.mkdir(sys.argv[1]); "
                  "open(os.path.join(sys.argv[1], sys.argv[2]), 'w').write(sys.argv[3])",
                  str(entry), PS1_NOTEBOOK, released)
    assert made.returncode == 0, made.stderr
    for command in (["collect", PS1], ["autograde", PS1, "--quiet"]):
        done = run_as(hub, course.grader, str(hub.bin / "kitgrade"), *command, cwd=str(course.directory(hub)))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    return course


def logged_in(hub, who: str) -> Student:
    return grading_support.logged_in(hub.url, hub.names[who], hub.passwords[hub.names[who]])


@pytest.fixture(scope="module")
def people(hub):
    found = {who: logged_in(hub, who) for who in ("ta1", "ta2", "alice")}
    yield found
    for person in found.values():
        person.close()


def alices_notebook(hub, grader: Student) -> str:
    return grading_support.submitted_notebook(hub.url, grader, hub.names["alice"])


def record_lines(hub) -> list[list[str]]:
    return grading_support.record_lines(hub.courses[0].directory(hub))


def test_each_assistant_changes_a_grade_and_the_record_names_each_with_their_change(hub, graded, people):
    ta1, ta2 = people["ta1"], people["ta2"]
    notebook = alices_notebook(hub, ta1)
    grades = grades_of(hub.url, ta1, notebook)
    # (her answers are blank: autograde scored them, and a grader may change any score)
    first, second = [g for g in grades if g["max_score"]][:2]
    for person, grade, score in ((ta1, first, 1.0), (ta2, second, 0.5)):
        assert save_grade(hub.url, person, grade, score)["manual_score"] == score
    comments = ta2.request("comments", "GET", f"{formgrader(hub.url)}/comments", params={"submission_id": notebook}).json()
    comment = comments[0]  # (a comment is on an answer cell, a grade on a test cell or a written answer)
    ta2.request("save comment", "PUT", f"{formgrader(hub.url)}/comment/{comment['id']}",
                json={"manual_comment": "Right idea;\tthe chain rule\nis missing"})
    # the same grade saved again unchanged (the formgrader saves on every blur): no line
    save_grade(hub.url, ta1, first, 1.0)

    lines = [line for line in record_lines(hub) if line[2] in ("grade", "comment")]
    where = f"{PS1}/{NOTEBOOK}"
    alice = hub.names["alice"]
    assert [line[1:6] for line in lines] == [[hub.names["ta1"], "grade", alice, where, first["name"]],
                                             [hub.names["ta2"], "grade", alice, where, second["name"]],
                                             [hub.names["ta2"], "comment", alice, where, comment["name"]]], lines
    assert lines[0][6] == f"manual_score {field(first['manual_score'])} -> 1.0", lines[0]
    assert lines[1][6] == f"manual_score {field(second['manual_score'])} -> 0.5", lines[1]
    assert lines[2][6] == f'manual_comment {field(comment["manual_comment"])} -> "Right idea;\\tthe chain rule\\nis missing"', lines[2]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", line[0]) for line in lines)
    # the record is the grader account's alone; nbgrader's log and the hub's log (root's) have each line
    record = graded.directory(hub) / RECORD
    assert record.stat().st_mode & 0o777 == 0o600 and record.stat().st_uid == _uid(graded.grader)
    nbgrader_log = (hub.home(graded.grader) / "nbgrader.log").read_text()
    hub_log = hub.server.log_path.read_text(errors="replace")
    for line in lines:
        text = "\t".join(line)
        assert text in nbgrader_log and f"grading record: {text}" in hub_log, text


def test_a_student_is_refused_by_the_grader_service_and_changes_nothing(hub, graded, people):
    ta1, alice = people["ta1"], people["alice"]
    notebook = alices_notebook(hub, ta1)
    grades = grades_of(hub.url, ta1, notebook)
    target = next(g for g in grades if g["max_score"])
    before = record_lines(hub)
    for method, url, body in (("GET", f"{formgrader(hub.url)}/grades?submission_id={notebook}", None),
                              ("PUT", f"{formgrader(hub.url)}/grade/{target['id']}", {"manual_score": target["max_score"] + 7})):
        refused = alice.request("as a student", method, url, json=body, expect=(403,), allow_redirects=False)
        assert refused.status_code == 403
    after = ta1.request("grade", "GET", f"{formgrader(hub.url)}/grade/{target['id']}").json()
    assert after["manual_score"] == target["manual_score"]
    assert record_lines(hub) == before
    assert not any(hub.names["alice"] == line[1] for line in record_lines(hub))


def in_service_terminal(hub, person: Student, command: str, timeout: float = 180) -> tuple[int, str]:
    """``command`` typed into a terminal that ``person`` opens in the grader service (Jupyter's terminal
    API and its websocket, with their token); its exit status and what the terminal showed."""
    service = f"{hub.url}/services/ad101"
    made = person.request("open terminal", "POST", f"{service}/api/terminals").json()
    socket = websocket.create_connection(f"{service.replace('http', 'ws', 1)}/terminals/websocket/{made['name']}",
                                         header=[f"Authorization: token {person.token}"], timeout=timeout)
    out, deadline = "", time.monotonic() + timeout
    try:
        socket.send(json.dumps(["stdin", f'{command}; echo "__KIT_""DONE_$?__"\r']))
        while time.monotonic() < deadline:
            kind, *data = json.loads(socket.recv())
            if kind == "stdout":
                out += data[0]
                done = re.search(r"__KIT_DONE_(\d+)__", out)
                if done:
                    return int(done.group(1)), out
        raise AssertionError(f"the terminal command did not finish:\n{out[-2000:]}")
    finally:
        socket.close()
        person.request("close terminal", "DELETE", f"{service}/api/terminals/{made['name']}", expect=(204,))


def test_kitgrade_in_the_grader_services_terminal_is_recorded_under_who_opened_it(hub, graded, people):
    ta2 = people["ta2"]
    status, shown = in_service_terminal(hub, ta2, f"kitgrade summary {PS1} > /dev/null; echo graded-by=$KIT_GRADED_BY")
    assert status == 0, shown
    assert f"graded-by={hub.names['ta2']}" in shown  # the service named its terminal after who opened it
    runs = [line for line in record_lines(hub) if line[2] == "kitgrade"]
    assert runs and runs[-1][1] == hub.names["ta2"] and runs[-1][3] == f"summary {PS1}", runs
    opened = [line for line in record_lines(hub) if line[2] == "terminal"]
    assert opened and opened[-1][1] == hub.names["ta2"], opened


def _uid(account: str) -> int:
    import pwd

    return pwd.getpwnam(account).pw_uid
