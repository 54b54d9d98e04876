"""What one student hands in costs that student's grade at most, and shows them no hidden test
(docs/threat-model.md, "One student stops or stalls the class"), through ``kitgrade autograde`` and
``kitgrade feedback`` on a course of three students, the attacker between two honest classmates.

Text a student controls that Python can hold but UTF-8 cannot write: a lone surrogate (a JSON
``\\ud800`` escape in the notebook, or printed by the notebook's code) and a file name that is not
UTF-8; a file beside the notebook of 100 GiB that takes no room on the disk (all holes); folders
1,500 levels deep."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

import cluster_support

from course_snapshots import ASSIGNMENT, make_course
from grader.sandbox.bubblewrap import unavailable_because
from grader_fixtures.cases import SOLUTIONS, answered

pytestmark = pytest.mark.skipif(unavailable_because() is not None, reason="the sandbox's walls need bubblewrap")

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
HONEST = ("a_honest", "c_honest")


def _solved(release):
    return answered(release, **SOLUTIONS)


def surrogate_in_a_markdown_cell_and_a_malformed_saved_output(release) -> dict:
    """A markdown cell holding ``\\ud800`` (valid JSON, valid nbformat) and a saved output nbformat
    refuses (which the kit clears, and so writes the notebook again)."""
    nb = _solved(release)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("my notes \ud800"))
    code = next(c for c in nb.cells if c.cell_type == "code")
    code.outputs = [{"output_type": "stream", "name": "stdwhat", "text": "x"}]
    return {NOTEBOOK: json.dumps(nb, ensure_ascii=True).encode()}


def a_file_whose_name_is_not_utf8(release) -> dict:
    """Beside the notebook, a file named in Latin-1 (``données.csv`` as an old system writes it)."""
    return {NOTEBOOK: nbformat.writes(_solved(release)).encode(), os.fsdecode(b"donn\xe9es.csv"): b"x,y\n1,2\n"}


def _course(root, attack):
    course = make_course(root)
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student in ("a_honest", "b_attacker", "c_honest"):
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        files = attack(release) if student == "b_attacker" else {NOTEBOOK: nbformat.writes(_solved(release)).encode()}
        for name, data in files.items():
            if isinstance(data, Nested):
                _nest(folder, int(data))
                continue
            with open(os.path.join(os.fsencode(folder), os.fsencode(name)), "wb") as handle:
                if isinstance(data, Sparse):
                    handle.truncate(int(data) * 1024 ** 3)
                else:
                    handle.write(data)
    return course


def _autograde(course, *extra):
    return subprocess.run([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--course", str(course),
                           "--quiet", *extra], capture_output=True, text=True, timeout=600)


class Sparse(bytes):
    """A file of this many GiB of holes: nothing written to the disk."""


def a_sparse_file_of_100_gib(release) -> dict:
    """Beside the notebook, ``dataset.bin``: 100 GiB long, all of it a hole (no block on the disk)."""
    return {NOTEBOOK: nbformat.writes(_solved(release)).encode(), "dataset.bin": Sparse(b"100")}


class Nested(bytes):
    """Folders this many levels deep, one inside the other."""


def folders_1500_levels_deep(release) -> dict:
    """Beside the notebook, ``a/a/a/…``: 1,500 folders one inside the other (3,000 characters, within
    ``PATH_MAX``)."""
    return {NOTEBOOK: nbformat.writes(_solved(release)).encode(), "a": Nested(b"1500")}


def _nest(folder, levels: int) -> None:
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("a", dir_fd=fd)
        inner = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def a_shell_line_holding_a_lone_surrogate(release) -> dict:
    """A ``!`` line (skipped while grading, and named in the report's note) holding ``\\ud800``."""
    nb = _solved(release)
    nb.cells.insert(3, nbformat.v4.new_code_cell("get_ipython().system('echo \\ud800')"))
    return {NOTEBOOK: nbformat.writes(nb).encode()}


ATTACKS = [surrogate_in_a_markdown_cell_and_a_malformed_saved_output, a_file_whose_name_is_not_utf8,
           a_sparse_file_of_100_gib, folders_1500_levels_deep, a_shell_line_holding_a_lone_surrogate]


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.__name__)
def test_one_submissions_files_cost_the_classmates_nothing(tmp_path, attack):
    """(Before: the run stopped with an internal error before it graded anyone, UnicodeEncodeError
    or, for the sparse file, MemoryError: the ledger reads every file of a submission whole to
    fingerprint it; for the folders, RecursionError: the ledger walks them with ``Path.rglob``; for
    the shell line, every notebook was graded, then the report's UTF-8 CSV failed on the note that
    names the line: exit 3, and no report of the class.)"""
    course = _course(tmp_path / "course", attack)
    try:
        run = _autograde(course)
    finally:  # pytest's own clean-up of old temporary folders recurses too, and would stop at the nested ones
        subprocess.run(["rm", "-rf", str(course / "submitted" / "b_attacker" / ASSIGNMENT / "a")], check=True)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: report[s]["score"] for s in HONEST} == {s: 7 for s in HONEST}, report
    assert "b_attacker" in report, report


def surrogate_in_a_markdown_cell(release) -> dict:
    nb = _solved(release)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("my notes \ud800"))
    return {NOTEBOOK: json.dumps(nb, ensure_ascii=True).encode()}


def prints_a_surrogate(release) -> dict:
    nb = _solved(release)
    nb.cells.insert(3, nbformat.v4.new_code_cell("print('\\ud800 printed')"))
    return {NOTEBOOK: nbformat.writes(nb).encode()}


#: a hidden test of the sample assignment (in source/, never in release/)
HIDDEN_TEST = "assert square(-2.5) == 6.25"


def test_a_lone_surrogate_in_a_notebook_shows_its_student_no_hidden_test(tmp_path):
    """The instructor's copy of the notebook (nbgrader put the hidden tests back into its cells)
    cannot be written as UTF-8; the whole copy was in the error's text, and that text in the
    student's not-graded page. (Before: ``feedback/b_attacker/sample_ex/not_graded.html`` showed the
    source of the hidden tests, "### BEGIN HIDDEN TESTS" and all, without ``--show-hidden-tests``.)"""
    course = _course(tmp_path / "course", surrogate_in_a_markdown_cell)
    assert HIDDEN_TEST not in (course / "release" / ASSIGNMENT / NOTEBOOK).read_text()
    _autograde(course)
    feedback = subprocess.run([sys.executable, "-m", "grader.cli", "feedback", ASSIGNMENT, "--course", str(course)],
                              capture_output=True, text=True, timeout=600)
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    pages = {page.name: page.read_text(encoding="utf-8", errors="replace")
             for page in (course / "feedback" / "b_attacker").rglob("*") if page.is_file()}
    assert pages, "no page for the student"
    assert not any(HIDDEN_TEST in text or "HIDDEN TESTS" in text for text in pages.values()), pages.keys()


def test_a_notebook_that_prints_a_lone_surrogate_is_graded_not_left_for_the_next_run(tmp_path):
    """What a notebook prints is the student's to choose: ``print('\\ud800')`` made nbgrader's copy
    of the autograded notebook fail, and the notebook was "not graded ... run autograde again" at
    every run, so a student could keep any grade out of the gradebook."""
    course = _course(tmp_path / "course", prints_a_surrogate)
    run = _autograde(course)
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert report["b_attacker"]["score"] == 7, report["b_attacker"]
    assert {s: report[s]["score"] for s in HONEST} == {s: 7 for s in HONEST}, report
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.fixture()
def services(tmp_path):
    services = cluster_support.Services(tmp_path)
    yield services
    services.stop_all_and_check()


def test_a_lone_surrogate_in_one_notebook_does_not_stop_a_dask_run(services, tmp_path):
    """With ``--cluster`` each task is prepared in the instructor's process, where the UTF-8 copy of
    the sanitized notebook fails. (Before: the run stopped there, for the class.)"""
    address = services.scheduler(tls=False)
    services.worker(address, tls=False)
    course = _course(tmp_path / "course", surrogate_in_a_markdown_cell)
    run = _autograde(course, "--cluster", address)
    assert "internal error" not in run.stdout + run.stderr, run.stdout + run.stderr
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {s: report[s]["score"] for s in HONEST} == {s: 7 for s in HONEST}, report


def test_one_students_oversized_folder_in_the_exchange_does_not_stop_collect_for_the_class(tmp_path):
    """nbgrader's exchange (``c.Exchange.root``): a student's folder in ``inbound/`` holding a file of
    1 GiB of holes (no room taken on the disk) is over nbgrader's ``max_dir_size``. It is that
    student's to lose; the classmates who handed in beside it are collected. (Before: ``kitgrade
    collect`` exited 2, "nbgrader collect failed: [ERROR] Directory size is too big", and a
    classmate was not collected at all.)"""
    course = make_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    (exchange / "ad101" / "inbound").mkdir(parents=True)
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student in ("alice", "mallory", "zed"):
        folder = exchange / "ad101" / "inbound" / f"{student}+{ASSIGNMENT}+2026-12-07 20:00:00.000000 UTC+1f2e"
        folder.mkdir()
        nbformat.write(_solved(release), folder / NOTEBOOK)
        (folder / "timestamp.txt").write_text("2026-12-07 20:00:00.000000 UTC")
        if student == "mallory":
            with open(folder / "dataset.bin", "wb") as handle:
                handle.truncate(1024 ** 3)
    run = subprocess.run([sys.executable, "-m", "grader.cli", "collect", ASSIGNMENT, "--course", str(course)],
                         capture_output=True, text=True, timeout=600)
    collected = {s for s in ("alice", "zed") if (course / "submitted" / s / ASSIGNMENT / NOTEBOOK).is_file()}
    assert collected == {"alice", "zed"}, run.stdout + run.stderr


def test_links_handed_in_through_nbgrader_s_exchange_collect_nothing_of_the_instructor_s(tmp_path):
    """nbgrader's plain exchange (students write their own folders in ``inbound/``): nbgrader's collect
    copies with ``shutil.copytree``, which follows links, as the instructor. mallory hands in her
    notebook as a link to the instructor's source notebook (the solutions) and a file linked to a
    secret of the instructor's; eve's whole entry is a link to the instructor's source folder. Neither
    gets anything of the instructor's into the submissions (before: mallory's "notebook" was the source,
    graded full marks as hers); the classmates are collected; the log names each link."""
    course = make_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    inbound = exchange / "ad101" / "inbound"
    inbound.mkdir(parents=True)
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    secret = tmp_path / "instructor-secret.txt"
    secret.write_text("the instructor's canary 7f3a")
    source = course / "source" / ASSIGNMENT
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    stamp = "2026-12-07 20:00:00.000000 UTC"
    for student in ("alice", "eve", "mallory", "zed"):
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+1f2e"
        if student == "eve":
            folder.symlink_to(source, target_is_directory=True)
            continue
        folder.mkdir()
        (folder / "timestamp.txt").write_text(stamp)
        if student == "mallory":
            (folder / NOTEBOOK).symlink_to(source / NOTEBOOK)
            (folder / "notes.txt").symlink_to(secret)
        else:
            nbformat.write(_solved(release), folder / NOTEBOOK)
            (folder / ".ipynb_checkpoints").mkdir()  # what nbgrader's copy leaves out (CourseDirectory.ignore)
            nbformat.write(_solved(release), folder / ".ipynb_checkpoints" / "x-checkpoint.ipynb")
    oscar = inbound / f"oscar+{ASSIGNMENT}+not a time+1f2e"  # nbgrader's collect stopped for the class on it
    oscar.mkdir()
    nbformat.write(_solved(release), oscar / NOTEBOOK)
    run = subprocess.run([sys.executable, "-m", "grader.cli", "collect", ASSIGNMENT, "--course", str(course)],
                         capture_output=True, text=True, timeout=600)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    assert f"set aside 'oscar+{ASSIGNMENT}+not a time+1f2e' in inbound/: its time cannot be read" in said, said
    assert not list((course / "submitted").rglob(".ipynb_checkpoints")), said
    submitted = course / "submitted"
    assert all((submitted / s / ASSIGNMENT / NOTEBOOK).is_file() for s in ("alice", "zed")), said
    solutions = (source / NOTEBOOK).read_bytes()
    for path in submitted.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert data != solutions and b"canary 7f3a" not in data, path
    assert not (submitted / "mallory" / ASSIGNMENT / NOTEBOOK).exists()
    assert not (submitted / "eve" / ASSIGNMENT / NOTEBOOK).exists()
    assert f"mallory's submission: '{NOTEBOOK}': a symbolic link; not followed" in said, said
    assert "mallory's submission: 'notes.txt': a symbolic link; not followed" in said, said
    assert "not collected: eve's submission" in said and "a symbolic link; not followed" in said, said


def test_an_entry_a_classmate_made_in_a_students_name_does_not_replace_their_submission(tmp_path):
    """nbgrader's plain exchange on a machine where the students have accounts: any student can make an
    entry named for a classmate in ``inbound/``; nbgrader's collect only warns ("cheating attempt?") and
    collects the newest, so a blank notebook handed in under the classmate's name, a minute later,
    replaced their honest work (graded 0). Two accounts every Debian machine has stand in for the two
    students: ``daemon`` hands in, ``nobody`` hands in a blank notebook named for ``daemon``."""
    if os.geteuid() != 0:
        pytest.skip("entries of two other accounts are made by root (CI runs as root)")
    import pwd
    course = make_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    inbound = exchange / "ad101" / "inbound"
    inbound.mkdir(parents=True)
    inbound.chmod(0o733)
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    entries = {"2026-12-07 19:00:00.000000 UTC": ("daemon", _solved(release)),
               "2026-12-07 21:00:00.000000 UTC": ("nobody", release)}
    for stamp, (account, notebook) in entries.items():
        folder = inbound / f"daemon+{ASSIGNMENT}+{stamp}+1f2e"
        folder.mkdir()
        nbformat.write(notebook, folder / NOTEBOOK)
        (folder / "timestamp.txt").write_text(stamp)
        uid = pwd.getpwnam(account).pw_uid
        for path in (folder, folder / NOTEBOOK, folder / "timestamp.txt"):
            os.chown(path, uid, -1)
    run = subprocess.run([sys.executable, "-m", "grader.cli", "collect", ASSIGNMENT, "--course", str(course)],
                         capture_output=True, text=True, timeout=600)
    said = run.stdout + run.stderr
    assert run.returncode == 0, said
    collected = nbformat.read(course / "submitted" / "daemon" / ASSIGNMENT / NOTEBOOK, as_version=4)
    assert collected == _solved(release), said
    assert "named for daemon but nobody made it" in said, said
