"""Faults of the machine, made for real: a full disk (a small tmpfs), a gradebook locked by another
process or damaged, a read-only course (a read-only bind mount), another user's course (a throw-away
system account), a submission deleted since the last run.

Never a student's zero for a machine's fault, one clear line, the right exit status, and nothing
half-written: each test checks what the gradebook (nbgrader's ``Gradebook`` API), the report and
the exports hold, what was printed, the exit status, and that no process or temporary file is left.
Every fault a test makes is undone in a ``finally`` (mounts, the lock's process, the account). The
faults need root and mount(8): without them the tests skip, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from browser_support import unavailable
from kit_paths import ROOT
from course_snapshots import ASSIGNMENT, copy_course, make_course, snapshot
from grader.cli import main as kitgrade
from grader.sandbox.workers import alive
from test_grader_faults import _grading_processes, _solution, _wait_until_gone

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
# one autograded notebook of the sample exercise takes 2 pages of a tmpfs: 3 pages hold one student's
AUTOGRADED_ROOM = "12k"


# ---- the faults, each undone however the test ends ----------------------------------------------
@pytest.fixture(scope="module")
def root():
    """Root and a kernel that mounts a tmpfs here (a container may forbid it)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        unavailable("making real disk and permission faults needs root and mount(8)", "CI runs the tests as root")
    probe = Path(tempfile.mkdtemp())
    try:
        made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(probe)], capture_output=True)
        if made.returncode != 0:
            unavailable(f"cannot mount a tmpfs here ({made.stderr.decode().strip()})", "CI must allow mount(8)")
        subprocess.run(["umount", str(probe)], check=True)
    finally:
        probe.rmdir()


def _unmount(path: Path) -> None:
    if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(path)], check=True)  # still busy: detach it now, freed once unused


@contextmanager
def small_disk(path: Path, size: str):
    """A tmpfs of ``size`` mounted on ``path`` (what was there is hidden, not touched)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=755", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        _unmount(path)


def grow(path: Path, size: str) -> None:
    """Free space on the tmpfs at ``path`` (what is written there stays)."""
    subprocess.run(["mount", "-o", f"remount,size={size}", str(path)], check=True)


@contextmanager
def read_only(path: Path):
    """``path`` as a read-only bind mount of itself: even root cannot write there."""
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True)
        yield path
    finally:
        _unmount(path)


@contextmanager
def gradebook_locked(gradebook: Path, seconds: float = 600):
    """Another process holding the gradebook's exclusive lock (``BEGIN EXCLUSIVE``) for ``seconds``."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
         "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(float(sys.argv[2]))\n"
         "db.execute('ROLLBACK')", str(gradebook), str(seconds)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait(timeout=30)


@contextmanager
def throwaway_account(home_parent: Path):
    """A system account made for one test, removed with its home afterwards (``userdel -r``)."""
    useradd, userdel = (shutil.which(tool, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
                        for tool in ("useradd", "userdel"))
    if not (useradd and userdel):
        unavailable("useradd and userdel are missing", "CI images have the passwd tools")
    name = f"kitfault{os.getpid() % 100000}"
    subprocess.run([useradd, "--system", "--create-home", "--home-dir", str(home_parent / name),
                    "--shell", "/usr/sbin/nologin", name], check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)  # the account's own processes only
        subprocess.run([userdel, "-r", name], check=True, capture_output=True)
        assert subprocess.run(["id", name], capture_output=True).returncode != 0


def python_for_anyone(folder: Path) -> Path:
    """A Python another account can run with this worktree's packages: a venv of the system's Python
    (the test's own may live under /root) that reads .venv's site-packages and the kit's checkout.

    A checkout in a private folder (mode 0700, as ``mktemp -d`` and many home folders are) is out of
    the account's reach: its packages and the kit are then linked (or copied) into ``folder``."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"  # the same minor version: .venv's packages fit it
    system = shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")
    if system is None:
        unavailable(f"no system Python {version} another account can run", "CI images have the system's Python")
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = next((folder / "lib").glob("python*/site-packages"))
    packages = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "nbgrader").is_dir())
    kit = ROOT
    if not _open_to_anyone(packages):
        packages = _linked_copy(packages, folder / "packages")
    if not _open_to_anyone(ROOT):
        for package in ("grader", "autograd_core", "course_files"):  # (grader imports course_files)
            _linked_copy(ROOT / package, folder / "kit" / package)
        kit = folder / "kit"
    (site / "kit.pth").write_text(f"import site; site.addsitedir({str(packages)!r})\n{kit}\n")
    return folder / "bin" / "python"


def _open_to_anyone(path: Path) -> bool:
    """Whether any account can read ``path`` (every folder on the way to it open to others)."""
    return all(p.stat().st_mode & 0o005 == 0o005 for p in [path, *path.parents])


def _linked_copy(source: Path, target: Path) -> Path:
    """``source``'s tree at ``target``, its files hard links where the file system allows (fast), else copies."""
    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link,
                    ignore=shutil.ignore_patterns("__pycache__", "__editable__*"))
    return target


# ---- courses -------------------------------------------------------------------------------------
def hand_in(course: Path, students) -> None:
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student in students:
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_solution(release, source), folder / NOTEBOOK)


def resubmit(course: Path, student: str) -> None:
    """A new version of ``student``'s submission (an autograde run would grade it again)."""
    path = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(path, as_version=4)
    nb.metadata["resubmitted"] = True
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A released course with three correct submissions, not graded yet."""
    course = make_course(tmp_path_factory.mktemp("template") / "course")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 2\n")
    hand_in(course, ["alice", "bob", "carol"])
    return course


@pytest.fixture(scope="module")
def graded_template(template, tmp_path_factory) -> Path:
    course = copy_course(template, tmp_path_factory.mktemp("graded") / "course")
    assert kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"]) == 0
    return course


@pytest.fixture
def course(template, tmp_path) -> Path:
    return copy_course(template, tmp_path / "course")


@pytest.fixture
def graded(graded_template, tmp_path) -> Path:
    return copy_course(graded_template, tmp_path / "course")


def run(course: Path, tmp: Path, *args: str, python=sys.executable, user: str | None = None):
    """``kitgrade`` as an instructor starts it, with a temporary folder of its own to inspect afterwards."""
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    account = {}
    if user:  # as that account logs in: its own ids and groups only, its home, a plain environment
        env = {"PATH": "/usr/bin:/bin", "HOME": str(Path(tmp, "..", user).resolve()), "TMPDIR": str(tmp), "LANG": "C.UTF-8"}
        account = {"user": user, "group": user, "extra_groups": []}
    return subprocess.run([str(python), "-m", "grader.cli", *args, "--course", str(course)], capture_output=True,
                          text=True, timeout=600, env=env, cwd="/", **account)


def scores(course: Path) -> dict[str, float | None]:
    """Each student's score in the gradebook (None: no submission recorded), as nbgrader's API gives it."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "ad101") as gradebook:
        found = {}
        for student in gradebook.students:
            try:
                found[student.id] = gradebook.find_submission(ASSIGNMENT, student.id).score
            except MissingEntry:
                found[student.id] = None
        return found


def report(course: Path) -> dict:
    return json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())


def one_line(err: str) -> str:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def refused(argv: list[str], capsys, *watched: Path) -> str:
    """In-process kitgrade: exit status 2, nothing changed under ``watched``, one line on stderr."""
    before = snapshot(*watched)
    status = kitgrade(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert snapshot(*watched) == before
    return one_line(err)


def left_behind(tmp: Path, course: Path) -> list[str]:
    """Temporary files and folders a run left: in its TMPDIR, the course's run folder, half-written files."""
    return ([str(p) for p in tmp.iterdir()] + [str(p) for p in course.glob(".kitgrade/runs")]
            + [str(p) for p in course.rglob("*.tmp")] + [str(p) for p in course.glob(".kitgrade/downloaded/*")])


# ---- a full disk ---------------------------------------------------------------------------------
def test_a_full_disk_under_autograded_leaves_students_not_graded_and_the_next_run_grades_them(root, course, tmp_path,
                                                                                              capsys):
    before = _grading_processes()
    with small_disk(course / "autograded", AUTOGRADED_ROOM):
        first = run(course, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
        assert first.returncode == 1, first
        graded = {s for s, r in report(course).items() if r["score"] is not None}
        struck = {"alice", "bob", "carol"} - graded
        assert len(graded) == 1 and len(struck) == 2, report(course)
        for student in struck:
            why = f"not graded, because the disk is full ({course / 'autograded' / student / ASSIGNMENT})"
            assert why in first.stdout and any(why in r for r in report(course)[student]["reasons"]), first.stdout
            assert not (course / "autograded" / student).exists()  # nothing half-written left to feedback
        assert "Traceback" not in first.stderr and "2 submission(s) not graded" in first.stderr
        # the gradebook holds the one grade and no zero: nbgrader's record of the others was undone
        assert scores(course) == {graded.pop(): 7.0}
        assert not left_behind(tmp_path / "tmp", course)
        assert not _wait_until_gone(before, 10)

        # the export says so rather than giving them a 0 in the LMS
        assert kitgrade(["export", "--course", str(course)]) == 0
        assert f"{ASSIGNMENT}: submitted but not graded: {', '.join(sorted(struck))}" in capsys.readouterr().out
        lms = {row["Student"]: row[ASSIGNMENT] for row in csv.DictReader((course / "grades_lms.csv").open())
               if row["Student"] != "Points Possible"}
        assert {s: v for s, v in lms.items()} == {s: "" if s in struck else "7" for s in lms}

        grow(course / "autograded", "4m")  # space freed: the next run grades the two, and only them
        kept = {p: p.stat().st_mtime_ns for p in (course / "autograded").rglob("*.ipynb")}
        second = run(course, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
        assert second.returncode == 0, second
        assert {p: p.stat().st_mtime_ns for p in kept} == kept
        assert scores(course) == {"alice": 7.0, "bob": 7.0, "carol": 7.0}
        assert {s: r["score"] for s, r in report(course).items()} == {"alice": 7, "bob": 7, "carol": 7}
        assert not left_behind(tmp_path / "tmp", course)


def test_a_regrade_struck_by_a_full_disk_leaves_the_earlier_grade_as_it_was(root, graded, tmp_path, capsys):
    blank = nbformat.read(graded / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nbformat.write(blank, graded / "submitted" / "carol" / ASSIGNMENT / NOTEBOOK)  # would score 0
    with small_disk(graded / "autograded", "4k"):  # not even one autograded notebook fits
        struck = run(graded, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
        assert struck.returncode == 1, struck
        assert "not graded, because the disk is full" in struck.stdout
        assert "the gradebook keeps the grade of the earlier run" in struck.stdout
        assert report(graded)["carol"]["score"] is None
        assert scores(graded) == {"alice": 7.0, "bob": 7.0, "carol": 7.0}  # carol's earlier grade, as it was
        assert kitgrade(["export", "--course", str(graded)]) == 0
        assert f"{ASSIGNMENT}: submitted again since graded: carol (exported with the grade of the earlier " \
               "submission)" in capsys.readouterr().out
    assert not left_behind(tmp_path / "tmp", graded)


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own session, used as nbgrader does
def test_what_a_failed_grading_changed_in_the_gradebook_is_put_back(graded):
    """What nbgrader's Autograde may have written before the machine failed (the automatic scores, the
    timestamp, the late penalty; a new student and submission) is undone; the instructor's manual
    score stays."""
    from grader.autograde import GradebookRecords
    from grader.course import Course

    url = f"sqlite:///{graded / 'gradebook.db'}"
    with Gradebook(url, "ad101") as gradebook:
        carol = gradebook.find_submission(ASSIGNMENT, "carol")
        carol.notebooks[0].grades[0].manual_score = 1.5
        gradebook.db.commit()
        before = [(g.name, g.auto_score, g.manual_score, g.needs_manual_grade) for g in carol.notebooks[0].grades]
        stamp = carol.timestamp
    records = GradebookRecords(Course(graded), ASSIGNMENT, ["carol", "dan"])
    with Gradebook(url, "ad101") as gradebook:  # as a grading that stopped halfway leaves it
        carol = gradebook.find_submission(ASSIGNMENT, "carol")
        carol.timestamp = datetime.datetime(2030, 1, 1)
        carol.notebooks[0].late_submission_penalty = 3.0
        for grade in carol.notebooks[0].grades:
            grade.auto_score, grade.needs_manual_grade = 0.0, True
        gradebook.update_or_create_student("dan")
        gradebook.update_or_create_submission(ASSIGNMENT, "dan")
        gradebook.db.commit()
    records.restore("carol")
    records.restore("dan")
    with Gradebook(url, "ad101") as gradebook:
        carol = gradebook.find_submission(ASSIGNMENT, "carol")
        assert [(g.name, g.auto_score, g.manual_score, g.needs_manual_grade) for g in carol.notebooks[0].grades] == before
        assert carol.timestamp == stamp and not carol.notebooks[0].late_submission_penalty
        assert "dan" not in {s.id for s in gradebook.students}


def test_a_full_disk_under_reports_keeps_the_grades_and_the_next_run_writes_the_report(root, graded, tmp_path):
    shutil.rmtree(graded / "reports")
    book = (graded / "gradebook.db").read_bytes()
    with small_disk(graded / "reports", "4k") as reports:
        (reports / "filler").write_bytes(b"x" * 4096)
        stopped = run(graded, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
        assert stopped.returncode == 1, stopped
        assert "the grades are in the gradebook, but the report could not be written, because the disk is full (" \
               in one_line(stopped.stderr)
        assert "alice         7 / 7" in stopped.stdout  # the run's table is still shown
        assert sorted(p.name for p in reports.iterdir()) == ["filler"]  # no half-written report
        assert (graded / "gradebook.db").read_bytes() == book
        (reports / "filler").unlink()
        grow(reports, "1m")
        again = run(graded, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
        assert again.returncode == 0, again
        assert {s: r["score"] for s, r in report(graded).items()} == {"alice": 7, "bob": 7, "carol": 7}
    assert not left_behind(tmp_path / "tmp", graded)


def test_collect_onto_a_full_disk_stages_no_truncated_notebook(root, course, tmp_path):
    downloads = tmp_path / "downloads"
    submitted = nbformat.read(course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student in ("dan", "eve", "fay"):
        (downloads / student).mkdir(parents=True)
        nbformat.write(submitted, downloads / student / NOTEBOOK)
    expected = (downloads / "dan" / NOTEBOOK).read_bytes()
    with small_disk(course / "submitted", "12k") as folder:  # 2 pages a notebook: one fits, the next is cut
        first = run(course, tmp_path / "tmp", "collect", ASSIGNMENT, "--from", str(downloads))
        assert first.returncode == 1, first
        assert "Traceback" not in first.stderr + first.stdout
        whole = {p.parent.parent.name for p in folder.glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")}
        assert all(p.read_bytes() == expected for p in folder.rglob("*.ipynb"))  # every file there is whole
        assert whole and whole < {"dan", "eve", "fay"}, whole
        for student in {"dan", "eve", "fay"} - whole:
            assert f"{student}: not collected, because the disk is full ({folder}" in first.stdout, first.stdout
            assert not (folder / student / ASSIGNMENT).exists()
        assert not left_behind(tmp_path / "tmp", course)
        grow(folder, "1m")
        again = run(course, tmp_path / "tmp", "collect", ASSIGNMENT, "--from", str(downloads))
        assert again.returncode == 0, again
        assert {p.parent.parent.name for p in folder.glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")} == {"dan", "eve", "fay"}


def test_collect_from_the_exchange_onto_a_full_disk_keeps_only_whole_copies(root, course, tmp_path):
    """``kitgrade collect`` through nbgrader's exchange (``nbgrader submit``'s inbound folders), with
    ``submitted/`` filling up: no cut-short notebook stays for autograde to blame on the student."""
    submitted = (course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK).read_bytes()
    inbound = course / "exchange" / "ad101" / "inbound"
    for number, student in enumerate(("dan", "eve", "fay")):
        stamp = f"2026-12-01 10:0{number}:00.000000 UTC"
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+random{number}"
        folder.mkdir(parents=True)
        (folder / NOTEBOOK).write_bytes(submitted)
        (folder / "timestamp.txt").write_text(stamp)
    exchange = snapshot(course / "exchange")
    with small_disk(course / "submitted", "12k") as folder:  # 2 pages a notebook: one fits, the next is cut
        first = run(course, tmp_path / "tmp", "collect", ASSIGNMENT)
        assert first.returncode == 1, first
        assert "Traceback" not in first.stderr + first.stdout
        whole = {p.parent.parent.name for p in folder.glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")}
        assert all(p.read_bytes() == submitted for p in folder.rglob("*.ipynb")), "a cut-short notebook was left"
        assert whole < {"dan", "eve", "fay"}, whole
        cut = {"dan", "eve", "fay"} - whole
        assert not any((folder / student).exists() for student in cut), sorted(map(str, folder.rglob("*")))
        # nbgrader stops at the first copy it cannot finish: that one is made aside (exchange_collect.py)
        # and never put in place, the rest not begun
        said = one_line(first.stderr)
        assert f"kitgrade collect: not collected, because the disk is full ({folder}): {', '.join(sorted(cut))} " \
            "(the exchange keeps their submissions); what arrived whole is kept; collect again once this is put " \
            "right" in said, said
        assert snapshot(course / "exchange") == exchange  # the students' submissions are all still there
        assert not left_behind(tmp_path / "tmp", course)
        grow(folder, "1m")
        again = run(course, tmp_path / "tmp", "collect", ASSIGNMENT)
        assert again.returncode == 0, again
        assert {p.parent.parent.name for p in folder.glob(f"*/{ASSIGNMENT}/{NOTEBOOK}")} == {"dan", "eve", "fay"}
        assert all(p.read_bytes() == submitted for p in folder.rglob("*.ipynb"))


def test_release_onto_a_full_disk_leaves_the_exchange_as_it_was(root, course, tmp_path):
    exchange = snapshot(course / "exchange")
    with small_disk(course / "release", "4k"):
        stopped = run(course, tmp_path / "tmp", "release", ASSIGNMENT)
        assert stopped.returncode == 1, stopped
        assert f"{ASSIGNMENT}: not released, because the disk is full ({course / 'release'}" in one_line(stopped.stderr)
        assert "the exchange was not changed" in stopped.stderr
    assert snapshot(course / "exchange") == exchange
    assert not left_behind(tmp_path / "tmp", course)


def test_feedback_and_export_onto_a_full_disk_write_no_part_of_a_file(root, graded, capsys, tmp_path):
    with small_disk(graded / "feedback", "8k"):
        assert kitgrade(["feedback", ASSIGNMENT, "--course", str(graded)]) == 1
        err = one_line(capsys.readouterr().err)
        assert f"no feedback for alice, bob, carol, because the disk is full ({graded / 'feedback'}" in err, err
        assert list((graded / "feedback").iterdir()) == []
    assert kitgrade(["export", "--course", str(graded)]) == 0
    capsys.readouterr()
    exports = tmp_path / "exports"
    for name in ("grades.csv", "grades_lms.csv"):  # the last export, on a disk that has filled up since
        shutil.copy(graded / name, tmp_path / name)
    with small_disk(exports, "12k"):  # the two files, and a page that fills it
        for name in ("grades.csv", "grades_lms.csv"):
            shutil.copy(tmp_path / name, exports / name)
        (exports / "filler").write_bytes(b"x" * 4096)
        last = snapshot(exports)
        status = kitgrade(["export", "--course", str(graded), "--csv", str(exports / "grades.csv"),
                           "--lms-csv", str(exports / "grades_lms.csv")])
        assert status == 2
        assert f"nothing was exported, because the disk is full ({exports}" in one_line(capsys.readouterr().err)
        assert snapshot(exports) == last


# ---- the gradebook -------------------------------------------------------------------------------
def test_a_locked_gradebook_is_one_line_after_a_short_wait_and_nothing_is_written(root, graded, capsys):
    resubmit(graded, "carol")  # autograde would grade it
    with gradebook_locked(graded / "gradebook.db"):
        for command in (["autograde", ASSIGNMENT], ["export"], ["summary", ASSIGNMENT]):
            started = time.monotonic()
            err = refused([*command, "--course", str(graded)], capsys, graded)
            assert f"the gradebook {graded / 'gradebook.db'} is locked by another process (waited 5 s)" in err, err
            assert time.monotonic() - started < 30


def test_a_gradebook_locked_for_a_moment_is_waited_for(root, graded, capsys):
    with gradebook_locked(graded / "gradebook.db", seconds=1.5):
        assert kitgrade(["export", "--course", str(graded)]) == 0
    assert "wrote" in capsys.readouterr().out


def test_a_gradebook_locked_halfway_through_a_run_leaves_the_rest_not_graded_and_the_next_run_grades_them(
        root, course, tmp_path):
    """The lock is taken once the run has begun recording grades (the gradebook's file changed):
    whoever is recorded after that is "not graded", not a zero; nothing is left running; once the
    lock is gone the next run grades exactly those students."""
    graded = course
    book, tmp, processes = graded / "gradebook.db", tmp_path / "tmp", _grading_processes()
    tmp.mkdir()
    written = book.stat().st_mtime_ns
    grading = subprocess.Popen([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--quiet",
                                "--course", str(graded)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp)})
    try:
        deadline = time.monotonic() + 300
        while book.stat().st_mtime_ns == written and grading.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert grading.poll() is None, "the run ended before the lock could be taken"
        with gradebook_locked(book):
            out, err = grading.communicate(timeout=300)
    finally:
        if grading.poll() is None:
            grading.kill()
    assert grading.returncode == 1, (out, err)
    assert "Traceback" not in out + err
    locked = f"the gradebook {book} is locked by another process"
    # the student being recorded is "not graded"; the next step that needs the gradebook (the report
    # reads it) stops the run; if none does, the run ends with the struck students "not graded"
    if (graded / "reports" / f"{ASSIGNMENT}.json").exists():
        entries = report(graded)
        assert all(e["score"] == 7 or e["score"] is None and any(f"not graded, because {locked}" in r
                                                                 for r in e["reasons"])
                   for e in entries.values()), (entries, out, err)
    else:
        assert f"kitgrade autograde: stopped, because {locked}; what was done before it is kept" in err, (out, err)
    assert not _wait_until_gone(processes, 10)
    assert not left_behind(tmp, graded)
    # a grading struck while the lock was held could not be undone either: the gradebook may hold part
    # of it (a zero, say); the ledger marks it, export leaves it out and says so
    from grader.autograde import Ledger
    from grader.course import Course

    ledger, held = Ledger(Course(graded), ASSIGNMENT), scores(graded)
    halfway = {s for s in ("alice", "bob", "carol") if ledger.unfinished(s)}
    assert halfway, (held, out, err)
    assert all(score in (None, 7.0) for s, score in held.items() if s not in halfway), held
    exported = run(graded, tmp, "export")
    assert exported.returncode == 0, exported
    recorded = {s for s, score in held.items() if score is not None}  # a submission in the gradebook
    if halfway & recorded:  # marked, and in the gradebook: not exported as a grade
        assert f"{ASSIGNMENT}: grading stopped halfway for {', '.join(sorted(halfway & recorded))} (the machine " \
            "failed" in exported.stdout, exported.stdout
    if {"alice", "bob", "carol"} - recorded:
        assert f"{ASSIGNMENT}: submitted but not graded: " \
            f"{', '.join(sorted({'alice', 'bob', 'carol'} - recorded))}" in exported.stdout, exported.stdout
    with open(graded / "grades_lms.csv") as handle:
        # no column for the assignment when the lock struck before anyone's grade was recorded: no cell to fill
        canvas = {row["Student"]: row.get(ASSIGNMENT, "") for row in csv.DictReader(handle)}
    for student in held:  # every student the gradebook knows has a row: a grade, or an empty cell
        assert canvas[student] == ("7" if held[student] == 7.0 and student not in halfway else ""), (student, canvas)
    again = run(graded, tmp, "autograde", ASSIGNMENT, "--quiet")
    assert again.returncode == 0, again
    assert scores(graded) == {"alice": 7.0, "bob": 7.0, "carol": 7.0}
    assert {s: r["score"] for s, r in report(graded).items()} == {"alice": 7, "bob": 7, "carol": 7}


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's own session, used as nbgrader does
def test_a_grading_cut_short_after_nbgrader_wrote_part_of_it_is_shown_nowhere_as_a_grade(root, graded, tmp_path, capsys):
    """As a run killed (SIGKILL, the machine going down) between nbgrader's first and last write leaves
    it: the ledger's mark is on, the gradebook holds a zero. Summary, report and export do not show
    that zero as carol's grade; the next plain run grades her again, and only her."""
    from grader.autograde import Ledger
    from grader.course import Course

    Ledger(Course(graded), ASSIGNMENT).begin("carol")
    with Gradebook(f"sqlite:///{graded / 'gradebook.db'}", "ad101") as gradebook:
        for grade in gradebook.find_submission(ASSIGNMENT, "carol").notebooks[0].grades:
            grade.auto_score = 0.0
        gradebook.db.commit()
    assert scores(graded)["carol"] == 0.0
    assert kitgrade(["summary", ASSIGNMENT, "--course", str(graded)]) == 0
    out = capsys.readouterr().out
    assert "carol        not graded" in out, out
    assert report(graded)["carol"]["score"] is None
    assert kitgrade(["export", "--course", str(graded)]) == 0
    assert f"{ASSIGNMENT}: grading stopped halfway for carol" in capsys.readouterr().out
    with open(graded / "grades_lms.csv") as handle:
        assert {row["Student"]: row[ASSIGNMENT] for row in csv.DictReader(handle)} == {
            "Points Possible": "7", "alice": "7", "bob": "7", "carol": ""}
    alice = (graded / "autograded" / "alice" / ASSIGNMENT / NOTEBOOK).stat().st_mtime_ns
    again = run(graded, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
    assert again.returncode == 0, again
    assert (graded / "autograded" / "alice" / ASSIGNMENT / NOTEBOOK).stat().st_mtime_ns == alice  # not again
    assert scores(graded) == {"alice": 7.0, "bob": 7.0, "carol": 7.0}
    assert not Ledger(Course(graded), ASSIGNMENT).unfinished("carol")
    assert {s: r["score"] for s, r in report(graded).items()} == {"alice": 7, "bob": 7, "carol": 7}
    assert not any("stopped halfway" in r for r in report(graded)["carol"]["reasons"])


@pytest.mark.parametrize("damage", ["garbage", "truncated", "emptied"])
def test_a_damaged_gradebook_is_refused_and_left_as_it_is(root, graded, capsys, damage):
    book = graded / "gradebook.db"
    data = book.read_bytes()
    book.write_bytes({"garbage": os.urandom(8192), "truncated": data[:len(data) // 2], "emptied": b""}[damage])
    for command in (["autograde", ASSIGNMENT], ["export"], ["summary", ASSIGNMENT], ["collect", ASSIGNMENT]):
        err = refused([*command, "--course", str(graded)], capsys, graded)
        assert f"the gradebook {book} is damaged" in err and "kitgrade did not change it" in err, err


# ---- permissions ---------------------------------------------------------------------------------
def test_a_read_only_course_is_refused_by_every_command_that_writes(root, graded, capsys):
    with read_only(graded):
        for command in (["autograde", ASSIGNMENT], ["collect", ASSIGNMENT], ["release", ASSIGNMENT],
                        ["feedback", ASSIGNMENT], ["summary", ASSIGNMENT], ["export"]):
            err = refused([*command, "--course", str(graded)], capsys, graded)
            assert f"{graded}" in err and "the file system is read-only" in err and "remount it" in err, err
        assert kitgrade(["export", "--dry-run", "--course", str(graded)]) == 0  # reads only
        capsys.readouterr()


def test_a_read_only_reports_folder_or_exchange_is_refused_before_grading(root, graded, capsys):
    resubmit(graded, "carol")  # a run would grade it
    with read_only(graded / "reports"):
        err = refused(["autograde", ASSIGNMENT, "--course", str(graded)], capsys, graded)
        assert f"cannot write in {graded / 'reports'}: the file system is read-only" in err
    with read_only(graded / "exchange"):
        err = refused(["release", ASSIGNMENT, "--course", str(graded)], capsys, graded)
        assert f"cannot create {graded / 'exchange' / 'ad101' / 'outbound'}" in err and "read-only" in err


def test_another_users_course_is_refused_with_what_to_do(root, template, tmp_path):
    shared = Path(tempfile.mkdtemp(prefix="kitgrade-faults-"))  # pytest's own tmp is private to root
    try:
        shared.chmod(0o755)
        course = copy_course(template, shared / "course")
        python = python_for_anyone(shared / "venv")
        downloads = shared / "downloads" / "dan"
        downloads.mkdir(parents=True)
        shutil.copy(course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK, downloads)
        before, processes = snapshot(course), _grading_processes()
        with throwaway_account(shared) as user:
            tmp = shared / "tmp"
            tmp.mkdir()
            tmp.chmod(0o1777)
            for command in (["autograde", ASSIGNMENT], ["export"], ["collect", ASSIGNMENT, "--from", str(downloads.parent)]):
                refusal = run(course, tmp, *command, python=python, user=user)
                assert refusal.returncode == 2, refusal
                err = one_line(refusal.stderr)
                assert f"permission denied for {user}" in err and f"belongs to root); run kitgrade {command[0]} as " \
                    f"root, or give {user} write access to the course" in err, err
                assert str(course) in err
            assert snapshot(course) == before
            assert list(tmp.iterdir()) == []
        assert not _wait_until_gone(processes, 10)
    finally:
        shutil.rmtree(shared)


# ---- a submission deleted since the last run -----------------------------------------------------
def test_a_deleted_submission_keeps_its_grade_and_every_output_says_so(root, graded, tmp_path, capsys):
    shutil.rmtree(graded / "submitted" / "alice")
    rerun = run(graded, tmp_path / "tmp", "autograde", ASSIGNMENT, "--quiet")
    assert rerun.returncode == 0, rerun
    assert "in the gradebook but no longer submitted: alice" in rerun.stderr
    assert f"{ASSIGNMENT}: 2 submission(s)" in rerun.stdout
    assert scores(graded) == {"alice": 7.0, "bob": 7.0, "carol": 7.0}  # the gradebook keeps it ...
    entry = report(graded)["alice"]
    assert entry["score"] == 7 and any("in the gradebook but no longer submitted" in r for r in entry["reasons"])
    assert kitgrade(["summary", ASSIGNMENT, "--course", str(graded)]) == 0
    assert "alice        no longer submitted" in capsys.readouterr().out
    assert kitgrade(["export", "--course", str(graded)]) == 0
    assert f"{ASSIGNMENT}: in the gradebook but no longer submitted: alice (exported with the grade the gradebook " \
           "holds)" in capsys.readouterr().out
    with open(graded / "grades.csv") as handle:  # ... and so do both exports, as the gradebook says
        scores_of = {row["student_id"]: row["score"] for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT}
        assert float(scores_of["alice"]) == 7.0  # (an assignment of the course nobody submitted: empty scores)
    with open(graded / "grades_lms.csv") as handle:
        assert {row["Student"]: row[ASSIGNMENT] for row in csv.DictReader(handle)}["alice"] == "7"
    assert not left_behind(tmp_path / "tmp", graded)


# ---- two runs at once, and a run killed --------------------------------------------------------
def _slow(course: Path, students, seconds: float = 5) -> None:
    """Hand in solutions that take ``seconds`` each to run (a run that is still grading when looked at)."""
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student in students:
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_solution(release, source, f"import time\ntime.sleep({seconds})"), folder / NOTEBOOK)


def _start(course: Path, tmp: Path) -> subprocess.Popen:
    tmp.mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--course", str(course),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp)}, start_new_session=True)


def _wait_for_a_grade(course: Path, process: subprocess.Popen, seconds: float = 180) -> None:
    """Until the run has recorded a first grade (it is halfway through)."""
    ledger = course / ".kitgrade" / "graded" / f"{ASSIGNMENT}.json"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if ledger.exists() and any(not e.get("unfinished") for e in json.loads(ledger.read_text() or "{}").values()):
            return
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"the run recorded no grade: {process.communicate()}")


def test_a_second_run_on_the_same_course_refuses_at_once_and_the_first_grades_everyone(course, tmp_path):
    _slow(course, ["dan", "eve", "fay"])
    processes = _grading_processes()
    first = _start(course, tmp_path / "tmp")
    _wait_for_a_grade(course, first)
    for assignment in (ASSIGNMENT, "build_your_own"):  # the same assignment or another: one gradebook
        second = run(course, tmp_path / "tmp2", "autograde", assignment, "--quiet")
        if assignment == "build_your_own" and second.returncode == 2 and "not released" in second.stderr:
            continue  # the other assignment of the sample course is not released: nothing to lock against
        assert second.returncode == 2, second
        assert "another kitgrade autograde is grading the course" in one_line(second.stderr)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, (out, err)
    assert scores(course) == {s: 7.0 for s in ["alice", "bob", "carol", "dan", "eve", "fay"]}
    assert "unable to open database file" not in out + err
    again = run(course, tmp_path / "tmp2", "autograde", ASSIGNMENT, "--quiet")
    assert again.returncode == 0, again
    assert not left_behind(tmp_path / "tmp", course) and not left_behind(tmp_path / "tmp2", course)
    assert not _wait_until_gone(processes, 10)


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_the_course_is_free_as_soon_as_the_command_is_killed_though_its_workers_end_a_moment_later(
        course, tmp_path):
    """The workers are forked from the command (``spare_zygotes``) and end within a second of it: the
    course's lock is the command's alone, so the next run starts at once (it was refused as "busy"
    while the workers held the lock the command had when it forked them)."""
    import fcntl

    _slow(course, ["dan", "eve", "fay"])
    processes = _grading_processes()
    killed = _start(course, tmp_path / "tmp")
    _wait_for_a_grade(course, killed)
    command = Path(f"/proc/{killed.pid}/cmdline").read_bytes()
    workers = [pid for pid in _grading_processes() - processes if pid != killed.pid and _command_line(pid) == command]
    assert workers, "no worker forked from the command (nothing was tested)"
    os.kill(killed.pid, signal.SIGKILL)  # the command only: its workers notice within a second
    killed.wait(timeout=30)  # (not its output: the workers hold its pipes until they end)
    killed.stdout.close()
    killed.stderr.close()
    assert any(alive(pid) for pid in workers), "the workers ended before the lock was tried (nothing was tested)"
    descriptor = os.open(course, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: the workers do not hold it
    finally:
        os.close(descriptor)
    rerun = run(course, tmp_path / "tmp2", "autograde", ASSIGNMENT, "--quiet")
    assert "another kitgrade autograde is grading the course" not in rerun.stderr
    assert rerun.returncode == 0, rerun
    assert scores(course) == {s: 7.0 for s in ["alice", "bob", "carol", "dan", "eve", "fay"]}
    assert not _wait_until_gone(processes, 20)


def test_a_temporary_folder_too_deep_for_a_socket_still_grades_and_leaves_nothing(course, tmp_path):
    # the workers' forkserver listens on a Unix socket in multiprocessing's folder: a path of at most 107 bytes
    deep = tmp_path / ("d" * (100 - len(str(tmp_path))))
    graded = run(course, deep, "autograde", ASSIGNMENT, "--quiet", "--student", "alice")
    assert graded.returncode == 0, graded
    assert scores(course)["alice"] == 7.0
    assert not left_behind(deep, course)


def test_a_run_killed_with_sigkill_leaves_nothing_in_the_temporary_folder_after_the_next_command(course, tmp_path):
    _slow(course, ["dan", "eve", "fay"])
    processes = _grading_processes()
    tmp = tmp_path / "tmp"
    killed = _start(course, tmp)
    _wait_for_a_grade(course, killed)
    os.killpg(killed.pid, signal.SIGKILL)  # the run and its workers, at once: as a machine that goes down
    killed.communicate(timeout=30)
    assert not _wait_until_gone(processes, 20)
    assert [p.name for p in tmp.iterdir()], "the killed run left nothing to clean (nothing was tested)"
    rerun = run(course, tmp, "autograde", ASSIGNMENT, "--quiet")  # the next command clears what it left
    assert rerun.returncode == 0, rerun
    assert scores(course) == {s: 7.0 for s in ["alice", "bob", "carol", "dan", "eve", "fay"]}
    assert not left_behind(tmp, course)
