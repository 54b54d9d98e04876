"""A grader of a course on the hub, as the formgrader's page acts: its HTTP API through the hub, with the
grader's own token (tests/hub/test_hub_graders.py, and the guide's test, tests/hub/test_deploy_guide.py);
and the course's grading record (deploy/hub/kithub/grading_record.py) read back as lines."""
from __future__ import annotations

from pathlib import Path

from hub_client import Student
from hub_support import PS1, PS1_NOTEBOOK
from kithub.grading_record import RECORD

NOTEBOOK = Path(PS1_NOTEBOOK).stem


def logged_in(hub_url: str, name: str, password: str, cafile: str | None = None) -> Student:
    """``name`` logged in on the hub's login page, with a token of their own (the permissions of their groups)."""
    person = Student(hub_url, name, password, cafile=cafile)
    person.log_in()
    person.get_token()
    return person


def formgrader(hub_url: str, course: str = "ad101") -> str:
    """The address of the formgrader's HTTP API in the course's grader service."""
    return f"{hub_url}/services/{course}/formgrader/api"


def submitted_notebook(hub_url: str, grader: Student, student: str) -> str:
    """The id of ``student``'s submitted ps1 notebook, as the formgrader lists it to ``grader``."""
    listed = grader.request("submitted notebooks", "GET", f"{formgrader(hub_url)}/submitted_notebooks/{PS1}/{NOTEBOOK}").json()
    return next(n["id"] for n in listed if n["student"] == student)


def grades_of(hub_url: str, grader: Student, notebook: str) -> list[dict]:
    """The grades of a submitted notebook (nbgrader's ``Grade.to_dict``), as the formgrader shows them."""
    return grader.request("grades", "GET", f"{formgrader(hub_url)}/grades", params={"submission_id": notebook}).json()


def save_grade(hub_url: str, grader: Student, grade: dict, score: float) -> dict:
    """``score`` saved as the manual score of ``grade`` by ``grader``, as the formgrader's page saves it."""
    return grader.request("save grade", "PUT", f"{formgrader(hub_url)}/grade/{grade['id']}",
                          json={"manual_score": score, "extra_credit": None}).json()


def record_lines(course_directory: Path) -> list[list[str]]:
    """The course's grading record, each line split at its tabs (none while nobody changed anything)."""
    record = course_directory / RECORD
    return [line.split("\t") for line in record.read_text().splitlines()] if record.exists() else []
