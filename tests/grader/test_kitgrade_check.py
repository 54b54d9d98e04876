"""``kitgrade check`` on a learner's copy of the kit's exercises (``autograd-kit workspace``): the whole verdict.

The exercise's hidden tests run too, taken from the installed kit (``course_files``, through
``grader/commands/kit_exercises.py``), never from a file in the learner's folder; a failed hidden part says
only how many of its checks passed, never an input or an expected value; a task still raising
``NotImplementedError`` reads "not answered yet" (English and Chinese); the notebook's code cannot
read the kit's exercises; a test cell that is not the one handed out runs as it is, without hidden
tests, and the check says so; output closed by its reader ends quietly.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import course_files
from kit_paths import ROOT
from grader.commands.check import check_notebook
from learner import workspace

PS1 = "ps1_autograd_basics"
NOTEBOOK = "autograd_basics.ipynb"


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("learner") / "my-notebooks"
    workspace.update(folder)
    return folder


def check(path: Path) -> tuple[int, str]:
    lines = io.StringIO()
    status = check_notebook(path, out=lambda line: print(line, file=lines))
    return status, lines.getvalue()


def lines_of(text: str) -> dict[str, str]:
    return {line.split()[1]: line for line in text.splitlines() if line.split()[:1] in (["PASS"], ["FAIL"], ["PARTIAL"],
                                                                                        ["通过"], ["未通过"], ["部分通过"])}


def solved(copy: Path, exercise: str, folder: Path, **answers: str) -> Path:
    """The learner's copy with every task answered as the exercise's source does (``answers``: other code)."""
    source = nbformat.read(course_files.exercises() / exercise / copy.name, as_version=4)
    model = {c.metadata["nbgrader"]["grade_id"]: "\n".join(line for line in c.source.splitlines() if "### " not in line)
             for c in source.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(copy, as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id in model:
            cell.source = answers.get(grade_id, model[grade_id])
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / copy.name)
    return folder / copy.name


def test_a_blank_exercise_fails_every_task_and_an_unanswered_one_reads_not_answered_yet(mine):
    status, text = check(mine / "en" / "exercises" / PS1 / NOTEBOOK)
    assert status == 1, text
    tests = lines_of(text)
    assert len(tests) == 10 and all(line.startswith("FAIL") for line in tests.values()), text
    assert tests["test_second_derivative"].endswith("0/2  not answered yet: the task still raises NotImplementedError, "
                                                    "as it was handed out"), text
    assert "StudentCodeError" not in text and "as the notebook reports" not in text
    assert text.splitlines()[-1].startswith("total: 0/11 (visible and hidden tests of the kit's exercise "
                                            "ps1_autograd_basics; a hidden check says only how many passed; 5 more"), text


def test_a_blank_chinese_exercise_says_it_in_chinese(mine):
    status, text = check(mine / "zh" / "exercises" / PS1 / NOTEBOOK)
    assert status == 1, text
    assert lines_of(text)["test_second_derivative"].endswith("0/2  尚未作答：这道题仍然抛出 NotImplementedError（保持发下来时的样子）")
    assert text.splitlines()[-1].startswith("合计：0/11（本套件练习 ps1_autograd_basics_zh 的可见测试和隐藏测试"), text


def test_a_solved_exercise_passes_its_visible_and_hidden_tests(mine, tmp_path):
    status, text = check(solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, tmp_path / "solved"))
    assert status == 0, text
    assert all(line.startswith("PASS") for line in lines_of(text).values()) and len(lines_of(text)) == 10, text
    assert text.splitlines()[-1].startswith("total: 11/11 (visible and hidden tests"), text


# Right on the three visible inputs only: the hidden checks (five other functions) catch it.
ONLY_VISIBLE = '''\
def second_derivative(f, x0):
    return {2.0: 12.0, 0.7: -0.644217687237691, 0.5: 16.0}.get(x0, 0.0)
'''


def test_hidden_checks_that_fail_are_counted_and_nothing_of_them_is_shown(mine, tmp_path):
    status, text = check(solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, tmp_path / "partial",
                                second_derivative=ONLY_VISIBLE))
    assert status == 1, text
    assert re.fullmatch(r"FAIL +test_second_derivative +0/2  AssertionError: \d+ of \d+ hidden checks passed",
                        lines_of(text)["test_second_derivative"]), text
    assert text.splitlines()[-1].startswith("total: 9/11 (visible and hidden tests"), text
    source = (course_files.exercises() / PS1 / NOTEBOOK).read_text(encoding="utf-8")
    hidden = source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    assert "exp(2x)" in hidden and "x0" in hidden  # what a leak would show
    for secret in ("exp(2x)", "x * sin(x)", "tanh", "x0=", "expected", "hidden check failed"):
        assert secret not in text, (secret, text)


def test_a_notebooks_own_text_neither_hides_a_note_nor_stands_for_a_hidden_failure(mine, tmp_path, monkeypatch):
    """Failed hidden checks travel apart from the findings (``ExecutionReport.hidden_failures``): a
    note whose text reads like one is shown as any note is, and the real ones reach the result
    (the instructor's side) without ever reaching the learner's lines."""
    from grader.commands.local_grading import LocalGrader

    results = []
    score = LocalGrader.execute_and_score
    monkeypatch.setattr(LocalGrader, "execute_and_score",
                        lambda self, *a: results.append(score(self, *a)) or results[-1])
    forging = ("try:\n    open('/hidden check failed (not shown to the student)', 'w')\n"
               "except OSError:\n    pass\n" + ONLY_VISIBLE)
    status, text = check(solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, tmp_path / "forging",
                                second_derivative=forging))
    assert status == 1, text
    assert re.search(r"note: cell 'second_derivative\w*': denied: .*hidden check failed \(not shown", text), text
    (_, result), = results
    assert result.hidden_failures and all("hidden check failed (not shown to the student)" in f
                                          for f in result.hidden_failures), result
    assert not any("expected" in f and "hidden check failed" in f for f in result.findings), result.findings
    for failure in result.hidden_failures:
        assert failure.split(": ", 2)[-1] not in text, (failure, text)


def test_hidden_tests_come_from_the_installed_kit_not_from_the_learners_folder(mine, tmp_path):
    folder = tmp_path / "partial"
    path = solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, folder, second_derivative=ONLY_VISIBLE)
    # a look-alike "source" beside the notebook, whose hidden tests would let the answer pass
    lenient = json.loads((course_files.exercises() / PS1 / NOTEBOOK).read_text(encoding="utf-8"))
    for cell in lenient["cells"]:
        text = "".join(cell["source"])
        if "### BEGIN HIDDEN TESTS" in text:
            cell["source"] = text.split("### BEGIN HIDDEN TESTS")[0] + "### BEGIN HIDDEN TESTS\npass\n### END HIDDEN TESTS\n"
    for place in (folder / "source" / PS1, folder / "exercises" / PS1, folder / PS1):
        place.mkdir(parents=True)
        (place / NOTEBOOK).write_text(json.dumps(lenient), encoding="utf-8")
    status, text = check(path)
    assert status == 1 and "hidden checks passed" in lines_of(text)["test_second_derivative"], text


def test_a_test_cell_not_as_handed_out_runs_without_hidden_tests_and_the_check_says_so(mine, tmp_path):
    path = solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, tmp_path / "edited", second_derivative=ONLY_VISIBLE)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "test_backward_again":
            cell.source += "\n# my note"
    nbformat.write(nb, path)
    status, text = check(path)
    assert status == 0, text  # only the visible checks ran: the hard-coded answer passes them
    assert "note: the test cells test_backward_again are not those of the kit's exercise ps1_autograd_basics, so its " \
           "hidden tests did not run; `autograd-kit reset` gives you a fresh copy" in text
    assert text.splitlines()[-1].startswith("total: 11/11 (visible tests; hidden tests run when your instructor grades")


def test_where_the_kits_exercises_cannot_be_read_only_the_notebooks_own_tests_run(mine, monkeypatch):
    """A class's server may keep the installed exercises from its students (root's alone): no hidden test then."""
    from grader.commands import kit_exercises

    nb = nbformat.read(mine / "en" / "exercises" / PS1 / NOTEBOOK, as_version=4)
    assert kit_exercises.find(nb).name == PS1

    def unreadable():
        raise PermissionError(13, "Permission denied", str(course_files.exercises()))

    monkeypatch.setattr(course_files, "exercise_list", unreadable)
    assert kit_exercises.find(nb) is None


def test_the_instructors_source_is_named_as_such(tmp_path):
    status, text = check(course_files.exercises() / PS1 / NOTEBOOK)
    assert status == 0, text
    assert "note: this notebook holds solutions and hidden tests: it is an exercise as its instructor writes it" in text
    assert "are not those of the kit's exercise" not in text
    assert text.splitlines()[-1].startswith("total: 11/11 (every test in the notebook, its hidden ones too"), text


def test_the_notebooks_code_cannot_read_the_kits_exercises(mine, tmp_path):
    secret = course_files.exercises() / PS1 / NOTEBOOK
    peeking = ("def second_derivative(f, x0):\n"
               f"    open({str(secret)!r}).read()  # the hidden tests are in there\n"
               "    return {2.0: 12.0, 0.7: -0.644217687237691}.get(x0, 0.0)\n")
    status, text = check(solved(mine / "en" / "exercises" / PS1 / NOTEBOOK, PS1, tmp_path / "peeking",
                                second_derivative=peeking))
    line = lines_of(text)["test_second_derivative"]
    assert status == 1 and line.startswith("FAIL") and "PermissionError" in line, text


def test_check_piped_into_head_ends_quietly(mine, tmp_path):
    env_tmp = tmp_path / "tmp"
    env_tmp.mkdir()
    command = f"{sys.executable} -m grader.cli check {mine / 'en' / 'exercises' / PS1 / NOTEBOOK}"
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(env_tmp), "HOME": str(tmp_path)}
    # head has read its lines (the rest may still fit in the pipe); `true` closes the pipe before the first line
    for reader, shown, statuses in (("head -2", 2, {"1", "141"}), ("true", 0, {"141"})):
        done = subprocess.run(["bash", "-c", f'{command} | {reader}; echo "status ${{PIPESTATUS[0]}}"'],
                              capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
        assert done.stderr == "", done.stderr
        *lines, status = done.stdout.splitlines()
        assert len(lines) == shown and status.split()[1] in statuses, done.stdout
    assert not list(env_tmp.iterdir()) and not list(tmp_path.rglob("kitgrade-error-*"))  # no log of a "bug"


def test_course_files_say_where_each_part_of_the_course_is():
    assert course_files.root() == ROOT / "course_files"
    assert [p.name for p in course_files.lessons("zh")] == [p.name for p in course_files.lessons("en")]
    names = {(e.name, e.language, e.short_name) for e in course_files.exercise_list()}
    assert (PS1, "en", PS1) in names and (PS1 + "_zh", "zh", PS1) in names
    for exercise in course_files.exercise_list():
        assert sorted(p.name for p in exercise.student.glob("*.ipynb")) == sorted(p.name for p in exercise.source.glob("*.ipynb"))


def test_the_exercises_are_hashed_once_a_process_until_a_file_changes(monkeypatch):
    """``exercise_list`` (every ``check``, every learner's command) checks the student versions by
    the exercise files' digests: once, then again only for a file whose time or size changed."""
    import hashlib
    import os

    from course_files import student_versions

    hashed, digest = [], hashlib.sha256

    def sha256(data=b""):
        hashed.append(len(data))
        return digest(data)

    course_files.exercise_list()
    monkeypatch.setattr(student_versions.hashlib, "sha256", sha256)
    course_files.exercise_list()
    assert hashed == []
    path = course_files.exercises() / PS1 / NOTEBOOK
    before = path.stat()
    try:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        course_files.exercise_list()
    finally:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert hashed, "a changed file is hashed again"


def test_an_instructors_version_is_told_by_nbgraders_own_delimiters():
    """nbgrader finds ``BEGIN SOLUTION`` after any comment mark (``ClearSolutions``): so does ``check``."""
    from grader.commands.check import _holds_solutions

    def notebook(source):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])

    assert _holds_solutions(notebook("def f(x):\n    # BEGIN SOLUTION\n    return x\n    # END SOLUTION"))
    assert _holds_solutions(notebook("assert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 2\n### END HIDDEN TESTS"))
    assert not _holds_solutions(notebook("def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"))
