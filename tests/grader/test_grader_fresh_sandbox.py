"""Every submission starts in a sandbox no earlier submission has touched, and nothing of the
instructor's session reaches it (docs/threat-model.md, "State shared by consecutive submissions"
and "The instructor's session"); the honest habits a sandbox once refused work.

One course is graded by ``kitgrade autograde`` on one worker, in the order of the students' names:
a student who, past the audit hook, changes everything of the sandbox it can reach (the modes of
``/``, ``/dev``, ``/dev/shm`` and a folder of the bound site-packages; times and an extended
attribute on ``/dev/shm``; a file, a named semaphore and a POSIX message queue left behind; the
times of ``/dev/null``, which is the grading machine's own), then an honest student, then one who
looks for what the first left. The same run's instructor holds a bait key in the session keyring
the run inherits. Then a long-lived ``dask worker`` grades two separate runs. Last, the worker's
own rules, in this process: a sandbox found changed is replaced before the next notebook, and a
notebook whose sandbox fails under it is graded again in a fresh one.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import pytest

import cluster_support
from course_snapshots import ASSIGNMENT, make_course
from grader.sandbox.bubblewrap import unavailable_because
from grader_fixtures.cases import SOLUTIONS, answered

pytestmark = pytest.mark.skipif(unavailable_because() is not None, reason="the sandbox's walls need bubblewrap")

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
AUDIT_OFF = ("import gc, ctypes, os\n"
             "for hook in [o for o in gc.get_objects() if type(o).__name__ == 'AuditHook']:\n"
             "    hook.active = False\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "libc.syscall.restype = ctypes.c_long\n")
#: POSIX message queues through the C library (``mq_open`` is allowed, as Docker allows it)
MQ = ("librt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
      "class Attr(ctypes.Structure):\n"
      "    _fields_ = [('flags', ctypes.c_long), ('maxmsg', ctypes.c_long), ('msgsize', ctypes.c_long), ('cur', ctypes.c_long)]\n")
# everything of the sandbox a notebook can reach, changed: messages first, then the modes ('/' last)
CHANGES_ITS_SANDBOX = AUDIT_OFF + MQ + r"""
import _multiprocessing, numpy
done = []
def attempt(what, call, *args):
    try:
        call(*args)
        done.append(what)
    except OSError as error:
        done.append(f"{what}: {error.strerror}")
attempt("shm file", lambda: open("/dev/shm/MESSAGE-IN-A-FILE", "w").write("hi"))
attempt("shm xattr", os.setxattr, "/dev/shm", "user.message", b"MESSAGE-IN-AN-XATTR")
attempt("shm utime", os.utime, "/dev/shm", (4242, 4242))
attempt("devnull utime", os.utime, "/dev/null")
attempt("semaphore", _multiprocessing.SemLock, 1, 1, 1, "/kitgrade-left-semaphore", False)
queue = librt.mq_open(b"/kitgrade-left-queue", os.O_CREAT | os.O_WRONLY, 0o666, None)
done.append(f"queue {queue} {librt.mq_send(queue, b'MESSAGE-IN-A-QUEUE', 18, 0)}")
site_packages = os.path.dirname(os.path.dirname(numpy.__file__))
for folder in ("/dev/shm", "/dev", site_packages, "/"):
    attempt(f"chmod {folder}", os.chmod, folder, 0)
print("CHANGED", done)
"""
# what the sandbox looks like, and any message left in it
LOOKS_FOR_MESSAGES = AUDIT_OFF + MQ + r"""
import _multiprocessing, numpy, stat
found = {"modes": {p: stat.filemode(os.stat(p).st_mode) for p in ("/", "/dev", "/dev/shm")},
         "shm": os.listdir("/dev/shm"), "xattrs": os.listxattr("/dev/shm"), "shm_mtime": os.stat("/dev/shm").st_mtime}
try:
    _multiprocessing.SemLock._rebuild(0, 1, 1, "/kitgrade-left-semaphore")
    found["semaphore"] = "found"
except OSError as error:
    found["semaphore"] = error.strerror
queue = librt.mq_open(b"/kitgrade-left-queue", os.O_RDONLY | os.O_NONBLOCK)
found["queue"] = "found" if queue >= 0 else os.strerror(ctypes.get_errno())
print("FOUND", json.dumps(found))
""".replace("import _multiprocessing", "import json, _multiprocessing")
# the habits of an honest notebook: the lab's widgets, a thread pool, a user name, SQLite beside it
HONEST_HABITS = r"""
import getpass, sqlite3
import ipywidgets as widgets
from multiprocessing.dummy import Pool
slider = widgets.IntSlider(value=3)
with Pool(2) as pool:
    squares = pool.map(square, [1, 2, 3])
with sqlite3.connect("notes.db") as db:
    db.execute("create table notes (x)")
    db.execute("insert into notes values (42)")
    kept = db.execute("select x from notes").fetchall()
print("HABITS", slider.value, squares, getpass.getuser(), kept)
"""


def _solved_with(code):
    def build(release):
        nb = answered(release, **SOLUTIONS)
        nb.cells.insert(3, nbformat.v4.new_code_cell(code))  # after the answer to ``square``
        return nb
    return build


#: graded in this order on one worker
STUDENTS = {"a_changes_its_sandbox": _solved_with(CHANGES_ITS_SANDBOX), "b_honest": _solved_with("print('SOLVED', 1 + 1)"),
            "c_looks_for_messages": _solved_with(LOOKS_FOR_MESSAGES), "d_honest_habits": _solved_with(HONEST_HABITS)}


def _printed(course, student) -> str:
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return "".join(o.get("text", "") for o in nb.cells[3].get("outputs", []))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("fresh") / "course")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\nc.KitGrade.cell_timeout = 20\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student, build in STUDENTS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(release), folder / NOTEBOOK)
    devnull = os.stat("/dev/null")
    run = subprocess.run([sys.executable, "-c", GRADED_WITH_A_BAIT_KEY, str(course)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text())
    return course, report, run.stdout, devnull


# ---- the instructor's session: a bait key in the keyring the run inherits -------------------------
#: The instructor's side: a session keyring of its own (as a login with pam_keyinit has) holding a
#: bait key, then ``kitgrade autograde`` in this process, then the key read again.
GRADED_WITH_A_BAIT_KEY = textwrap.dedent(r"""
    import ctypes, platform, sys
    from grader.cli import main as kitgrade
    calls = dict(zip(("add_key", "keyctl"), {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    assert libc.syscall(calls["keyctl"], 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING: a new one
    bait = libc.syscall(calls["add_key"], b"user", b"kitgrade-bait", b"BAIT-OF-THE-INSTRUCTOR", 22, -3)
    assert bait > 0, ctypes.get_errno()
    status = kitgrade(["autograde", "sample_ex", "--course", sys.argv[1], "--quiet"])
    held = ctypes.create_string_buffer(64)
    size = libc.syscall(calls["keyctl"], 11, bait, held, 64)  # KEYCTL_READ
    print("BAIT-AFTER", held.raw[:size].decode())
    sys.exit(status)
""")
#: a notebook that looks for the bait, rewrites it, and leaves a key for the next one; then one that
#: looks for that key
READS_KEYS = AUDIT_OFF + r"""
calls = {"x86_64": (248, 250), "aarch64": (217, 219)}[__import__("platform").machine()]
found = libc.syscall(calls[1], 10, -3, b"user", b"kitgrade-bait", 0)  # KEYCTL_SEARCH the session keyring
held = ctypes.create_string_buffer(64)
read = libc.syscall(calls[1], 11, found, held, 64) if found > 0 else -1  # KEYCTL_READ
updated = libc.syscall(calls[1], 2, found, b"REWRITTEN", 9) if found > 0 else -1  # KEYCTL_UPDATE
left = libc.syscall(calls[0], b"user", b"kitgrade-left", b"LEFT-FOR-THE-NEXT", 17, -4)  # add_key to the user keyring
print("KEYS", found, read, held.raw[:max(read, 0)], updated, left, os.strerror(ctypes.get_errno()))
"""
FINDS_KEYS = AUDIT_OFF + r"""
keyctl = {"x86_64": 250, "aarch64": 219}[__import__("platform").machine()]
print("LEFT-KEY", libc.syscall(keyctl, 10, -4, b"user", b"kitgrade-left", 0), os.strerror(ctypes.get_errno()))
"""
STUDENTS.update({"e_reads_keys": _solved_with(READS_KEYS), "f_finds_keys": _solved_with(FINDS_KEYS)})


def test_what_one_notebook_changes_of_its_sandbox_never_reaches_the_next(graded):
    """The root, the zygote's /dev and the folders bwrap made for the binds are read-only; /dev and
    /dev/shm are the notebook's own: the honest notebook graded next earns every point and the one
    after finds nothing left. (Before: chmod('/', 0) left every later notebook of the worker "not
    graded", and a chmod of site-packages scored them 0.)"""
    course, report, _, _ = graded
    changed = _printed(course, "a_changes_its_sandbox")
    assert "'chmod /: Read-only file system'" in changed, changed
    assert re.search(r"'chmod /\S+/site-packages: Read-only file system'", changed), changed
    assert report["b_honest"]["score"] == 7 and "SOLVED 2" in _printed(course, "b_honest"), report["b_honest"]
    found = json.loads(_printed(course, "c_looks_for_messages").split("FOUND ", 1)[1])
    assert found["modes"] == {"/": "drwxr-xr-x", "/dev": "drwxr-xr-x", "/dev/shm": "drwxrwxrwt"}, found
    assert found["shm"] == [] and found["xattrs"] == [] and found["shm_mtime"] != 4242, found
    assert found["semaphore"] == found["queue"] == "No such file or directory", found
    assert report["c_looks_for_messages"]["score"] == 7


def test_the_machines_own_device_nodes_cannot_be_changed_from_the_sandbox(graded):
    """/dev/null in the sandbox is the grading machine's, and root owns it: bound read-only, its
    times (and so its mode) stay as they were. (Before: a notebook graded by root could chmod it.)"""
    course, _, _, before = graded
    assert "devnull utime: Read-only file system" in _printed(course, "a_changes_its_sandbox")
    after = os.stat("/dev/null")
    assert (after.st_mode, after.st_ctime_ns) == (before.st_mode, before.st_ctime_ns)


def test_no_key_of_the_instructors_session_can_be_read_or_changed_and_none_left_for_the_next(graded):
    """The zygote leaves the session keyring it inherited, and seccomp refuses the keyring calls.
    (Before: the notebook read the bait, rewrote it, and left a key the next one found.)"""
    course, report, printed, _ = graded
    keys = _printed(course, "e_reads_keys")
    assert keys.startswith("KEYS -1 -1 b'' -1 -1 Operation not permitted"), keys
    assert _printed(course, "f_finds_keys").startswith("LEFT-KEY -1 Operation not permitted")
    assert "BAIT-AFTER BAIT-OF-THE-INSTRUCTOR" in printed, printed
    everything = json.dumps(report) + "".join(_printed(course, student) for student in STUDENTS)
    assert "BAIT-OF" not in everything and report["e_reads_keys"]["score"] == 7


def test_honest_habits_work_widgets_a_thread_pool_a_user_name_and_sqlite_beside_the_notebook(graded):
    course, report, _, _ = graded
    assert "HABITS 3 [1, 4, 9] student [(42,)]" in _printed(course, "d_honest_habits"), report["d_honest_habits"]
    assert report["d_honest_habits"]["score"] == 7 and not report["d_honest_habits"]["reasons"], report["d_honest_habits"]


# ---- a long-lived dask worker, two runs -------------------------------------------------------------
#: the identity of the sandbox a notebook runs in: its root, made by bwrap as the zygote started
SANDBOX_IDENTITY = "import os\nroot = os.stat('/')\nprint('SANDBOX', root.st_dev, root.st_ctime_ns)"


def _with_cell(code):
    def build(source, release):
        nb = answered(release, **SOLUTIONS)
        nb.cells.insert(3, nbformat.v4.new_code_cell(code))
        return nb
    return build


@pytest.fixture()
def services(tmp_path):
    services = cluster_support.Services(tmp_path)
    yield services
    services.stop_all_and_check()


def test_a_long_lived_dask_worker_grades_each_run_in_a_sandbox_of_that_run(services, tmp_path):
    """A ``dask worker`` outlives the runs it grades; a sandbox does not. (Before: the worker kept its
    zygote, and a notebook of the first run that broke it left the second run's honest student
    "not graded".)"""
    address = services.scheduler(tls=False)
    services.worker(address, tls=False)
    first = cluster_support.make_course(tmp_path, {"a_changes_its_sandbox": _with_cell(CHANGES_ITS_SANDBOX),
                                                   "b_honest": _with_cell(SANDBOX_IDENTITY)}, name="first")
    second = cluster_support.make_course(tmp_path, {"honest": _with_cell(SANDBOX_IDENTITY)}, name="second")
    sandboxes = []
    for course, student in ((first, "b_honest"), (second, "honest")):
        run = subprocess.run([sys.executable, "-m", "grader.cli", "autograde", ASSIGNMENT, "--course", str(course),
                              "--cluster", address, "--quiet"], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout + run.stderr
        assert cluster_support.scores(course, [student]) == {student: 7.0}
        nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
        sandboxes.append(nb.cells[3].outputs[0]["text"])
    assert sandboxes[0].startswith("SANDBOX") and sandboxes[0] != sandboxes[1], sandboxes


# ---- the worker's own rules, in this process ----------------------------------------------------------
@pytest.fixture()
def worker():
    """This process as a grading worker with no module preloaded; its zygotes ended afterwards."""
    from grader.sandbox import supervisor, workers  # noqa: F401  (imported now: not while a test times its notebook)
    from grader.sandbox.policy import SandboxPolicy, policy_for
    from grader.foundations.settings import KitGrade

    workers._STATE.update(preload=[], zygotes={})
    policy: SandboxPolicy = policy_for(KitGrade())
    yield workers, policy
    workers.close_zygotes()


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


def _outputs(nb) -> str:
    return "".join(o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells for o in c.outputs)


def test_a_sandbox_found_changed_is_replaced_before_the_next_notebook_and_the_report_says_so(worker, monkeypatch):
    """A second wall behind the read-only root: were it missing (taken out here), the zygote finds
    the change after the notebook that made it, says so in that notebook's report, and its worker
    grades the next notebook in a fresh sandbox."""
    from grader.sandbox import bubblewrap

    workers, policy = worker
    with_a_read_only_root = bubblewrap.command

    def without(program):
        arguments = with_a_read_only_root(program)
        at = arguments.index("--")
        assert arguments[at - 2:at] == ["--remount-ro", "/"]
        return arguments[:at - 2] + arguments[at:]

    monkeypatch.setattr(bubblewrap, "command", without)
    site_packages = os.path.dirname(os.path.dirname(nbformat.__file__))
    # (the root first: a venv under /tmp, as in a clone made there, is bound read-only and refuses the second)
    changes = _notebook(AUDIT_OFF + f"os.chmod('/', 0)\ntry:\n    os.chmod({site_packages!r}, 0)\nexcept OSError:\n    pass")
    _, report = workers.grade_in_sandbox(changes, policy, {})
    assert any("this notebook changed its sandbox (/ mode drwxr-xr-x -> d---------" in f for f in report.findings), \
        report.findings
    ran, report = workers.grade_in_sandbox(_notebook("import numpy\nprint('IMPORTED', numpy.ones(2).sum())"), policy, {})
    assert "IMPORTED 2.0" in _outputs(ran) and not report.findings, (_outputs(ran), report.findings)


def _kill_each_sandbox_as_its_notebook_runs(workers, times: int) -> threading.Thread:
    """Kill the sandbox of this thread's zygote (as the machine's OOM killer would) each time a
    notebook's process runs in it, ``times`` times."""
    from grader.sandbox.namespaces import children_of, kill_sandbox

    owner = threading.get_ident()

    def kill():
        killed = set()
        while len(killed) < times:
            for key, zygote in list(workers._STATE["zygotes"].items()):
                bwrap = zygote.process.pid
                if key[0] != owner or bwrap in killed:
                    continue
                inner = [pid for clone in children_of(bwrap) for pid in children_of(clone)]
                if [pid for pid in inner for _ in children_of(pid)]:  # the zygote has forked a notebook
                    time.sleep(0.5)
                    kill_sandbox(bwrap)
                    killed.add(bwrap)
            time.sleep(0.05)

    killer = threading.Thread(target=kill, daemon=True)
    killer.start()
    return killer


def test_a_notebook_whose_sandbox_fails_under_it_is_graded_again_in_a_fresh_one(worker):
    """(Before: the notebook's cells after the failure were "DeadKernelError", and it scored 0.)"""
    workers, policy = worker
    killer = _kill_each_sandbox_as_its_notebook_runs(workers, 1)
    ran, report = workers.grade_in_sandbox(_notebook("import time\ntime.sleep(4)\nprint('SLEPT')"), policy, {})
    killer.join(30)
    assert _outputs(ran) == "SLEPT\n", _outputs(ran)
    assert report.findings[0].startswith("graded again in a fresh sandbox, as its first one failed under it (the "
                                         "grading sandbox failed while the notebook ran"), report.findings


def test_a_notebook_whose_fresh_sandbox_fails_too_is_not_graded_rather_than_scored(worker):
    from grader.sandbox.zygote import ZygoteFailed

    workers, policy = worker
    killer = _kill_each_sandbox_as_its_notebook_runs(workers, 2)
    with pytest.raises(ZygoteFailed, match="again in a fresh sandbox"):
        workers.grade_in_sandbox(_notebook("import time\ntime.sleep(4)\nprint('SLEPT')"), policy, {})
    killer.join(30)
