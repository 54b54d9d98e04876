"""A determined student against the sandbox, end to end through ``kitgrade autograde`` on one
shared course (docs/threat-model.md, "Walls around the student's process").

Each notebook answers every task right and adds one cell of a student who first switches off the
audit hook (a courtesy inside their own process) and calls the C library through ``ctypes``:
memory that ``RLIMIT_AS`` does not count (memfds, SysV shared memory), IPC objects left for the
next notebook graded on the same worker, a thread bomb (root's threads are not counted by
``RLIMIT_NPROC``; 30,000 of them take every pid of a machine with the default ``pid_max``; a
what it takes of the machine's pids is read from outside), and services listening on the machine's
loopback. Two more learn what the sandbox does not hide: where its allow-list is on the machine
(``/proc/self/mountinfo``), and that CPU time is bounded only by the cell's limit (a cell that
spins and ignores the interrupt). Two more hand in edited nbgrader metadata: a copied
test cell (JupyterLab copies its metadata) and a test cell of their own worth 100 points. Last,
the zero-to-jupyterhub values give the grader's pod what bubblewrap needs, and students' pods
nothing more.
"""

from __future__ import annotations

import copy
import io
import json
import os
import re
import socket
import sysconfig
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import nbformat
import pytest

from course_snapshots import ASSIGNMENT, make_course
from grader.cli import main as kitgrade
from grader.sandbox.bubblewrap import SANDBOX_TMP, kit_root, readable_paths
from grader.sandbox.namespaces import EXTRA_TASKS
from grader.sandbox.supervisor import NOTES_LIMIT
from grader_fixtures.cases import SOLUTIONS, answered, cell

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
MEMORY_MB = 768
#: a cell's limit: long enough for any honest cell here on a loaded machine; the spinning cell spends it all
CELL_TIMEOUT = 5
AUDIT_OFF = ("import gc, ctypes, os\n"
             "for hook in [o for o in gc.get_objects() if type(o).__name__ == 'AuditHook']:\n"
             "    hook.active = False\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "libc.shmat.restype = ctypes.c_void_p\n")
# SysV shared memory, a message queue and a semaphore, left behind for whoever is graded next
LEAVE_IPC = AUDIT_OFF + r"""
segment = libc.shmget(0x4B495400, 1 << 20, 0o1000 | 0o666)
if segment >= 0:
    address = libc.shmat(segment, None, 0)
    ctypes.memmove(address, b"LEFT-IN-SHM", 11)
    libc.shmdt(ctypes.c_void_p(address))
queue = libc.msgget(0x4B495401, 0o1000 | 0o666)
libc.msgsnd(queue, b"\1\0\0\0\0\0\0\0LEFT-IN-MSG", 11, 0)
semaphore = libc.semget(0x4B495402, 1, 0o1000 | 0o666)
libc.semctl(semaphore, 0, 16, 4242)  # SETVAL
print("LEFT", segment, queue, semaphore)
"""
FIND_IPC = AUDIT_OFF + r"""
found = []
segment = libc.shmget(0x4B495400, 0, 0)
if segment >= 0:
    found.append(ctypes.string_at(libc.shmat(segment, None, 0), 11))
queue = libc.msgget(0x4B495401, 0)
message = ctypes.create_string_buffer(64)
if queue >= 0 and libc.msgrcv(queue, message, 50, 0, 0o4000) > 0:
    found.append(message.raw[8:19])
semaphore = libc.semget(0x4B495402, 1, 0)
if semaphore >= 0:
    found.append(libc.semctl(semaphore, 0, 12))  # GETVAL
print("FOUND", found)
"""
# memory written into memfds is never mapped: RLIMIT_AS does not see it
HOARD_MEMORY = AUDIT_OFF + f"""
held = 0
try:
    for i in range({MEMORY_MB + 64} // 32):
        fd = os.memfd_create(f"hoard{{i}}")
        for _ in range(32):
            os.write(fd, bytes(1 << 20))
            held += 1
except OSError as error:
    print("REFUSED", error)
print("HELD-MiB", held)
"""
# threads as fast as Python starts them (no wait for each to run), on the smallest stacks it allows,
# under a name the test's sampler finds it by
THREAD_BOMB = AUDIT_OFF + r"""
import _thread, time
libc.prctl(15, b"kg-thread-bomb", 0, 0, 0)  # PR_SET_NAME
time.sleep(1)  # long enough for the sampler to find the process
_thread.stack_size(32768)
started = 0
try:
    for _ in range(30000):
        _thread.start_new_thread(time.sleep, (60,))
        started += 1
finally:
    print("THREADS", started)
"""
# a cell that keeps one core busy and ignores the interrupt
SPIN = r"""
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
"""
# what the process can learn of the machine's paths: its mounts, and the kit's checkout seen from inside
READ_MOUNTS = r"""
import json, os, sys
with open("/proc/self/mountinfo") as mounts:
    fields = [line.split(" - ")[0].split() for line in mounts]
try:
    checkout = sorted(os.listdir({checkout!r}))
except OSError as error:
    checkout = type(error).__name__
print("MOUNTS", json.dumps({{"mounts": [(f[3], f[4]) for f in fields], "sys_path": sys.path, "checkout": checkout}}))
"""
ONE_PLUS_ONE = "print('SOLVED', 1 + 1)"
# services on the grading machine's loopback (a hub, a dask scheduler), past the audit hook and
# Landlock's TCP rule (UDP and Unix sockets are not Landlock's): the network namespace alone stops them
REACH_OUT = AUDIT_OFF + r"""
import socket
for family, kind, address in [(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", {tcp})),
                              (socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", {udp})),
                              (socket.AF_UNIX, socket.SOCK_STREAM, {unix!r}),
                              (socket.AF_INET, socket.SOCK_STREAM, ("1.1.1.1", 80))]:
    try:
        with socket.socket(family, kind) as connection:
            connection.settimeout(3)
            connection.connect(address)
            connection.sendall(b"REACHED")
            print("SENT", address)
    except OSError as error:
        print("REFUSED", address, error)
"""


def _student(code):
    def build(release):
        nb = answered(release, **SOLUTIONS)
        nb.cells.insert(1, nbformat.v4.new_code_cell(code))
        return nb
    return build


def _copies_a_test_cell(release):
    """JupyterLab's copy and paste keeps a cell's metadata: a second cell with the test's grade id."""
    nb = answered(release, **SOLUTIONS)
    test = cell(nb, "test_square")
    copied = nbformat.v4.new_code_cell("print(square(4))", metadata=copy.deepcopy(test.metadata))
    nb.cells.insert(nb.cells.index(test) + 1, copied)
    return nb


def _claims_a_bonus(release):
    """A blank notebook with a test cell of its own making, worth 100 points."""
    nb = copy.deepcopy(release)
    bonus = nbformat.v4.new_code_cell("pass")
    bonus.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 100, "grade_id": "bonus",
                                  "schema_version": 3}
    nb.cells.append(bonus)
    return nb


def _floods_notes(source):
    """150 cells of 25 refused reads of the course's source/ each (every refusal is a note in the
    instructor's report), then an answer that patches the test's helper while the test runs."""
    def build(release):
        nb = answered(release, **{**SOLUTIONS, "derivative": "def derivative(f, x, h=1e-6):\n"
                                  "    np.testing.assert_allclose = lambda *args, **kwargs: None\n    return 1.0"})
        flood = f"for i in range(25):\n    try:\n        open({str(source)!r} + f'/x{{i}}')\n    except OSError:\n        pass"
        nb.cells[1:1] = [nbformat.v4.new_code_cell(flood) for _ in range(150)]
        return nb
    return build


#: graded in this order on one worker: a_leaves_ipc's process ends before b_finds_ipc's starts, and
#: zz_graded_after_them after the spinning notebook and the thread bomb
STUDENTS = {"a_leaves_ipc": _student(LEAVE_IPC), "b_finds_ipc": _student(FIND_IPC),
            "hoards_memory": _student(HOARD_MEMORY), "thread_bomb": _student(THREAD_BOMB),
            "honest": _student(ONE_PLUS_ONE), "copies_a_test_cell": _copies_a_test_cell,
            "claims_a_bonus": _claims_a_bonus, "reads_mounts": _student(READ_MOUNTS.format(checkout=kit_root())),
            "spins_on_the_cpu": _student(SPIN), "zz_graded_after_them": _student(ONE_PLUS_ONE)}
#: the process the test watches from outside (``THREAD_BOMB`` names itself so)
BOMB_NAME = "kg-thread-bomb"


@pytest.fixture(scope="module")
def listening():
    """A TCP, a UDP and an abstract Unix socket listening on this machine, as a hub or a scheduler would."""
    tcp, udp = socket.socket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp.bind(("127.0.0.1", 0))
    unix.bind(f"\0kitgrade-redteam-{os.getpid()}")
    unix.listen()
    for listener in (tcp, udp, unix):
        listener.setblocking(False)
    yield tcp, udp, unix
    for listener in (tcp, udp, unix):
        listener.close()


def _process_called(name: str) -> str | None:
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and Path(f"/proc/{entry.name}/comm").read_text().strip() == name:
                return entry.name
        except OSError:
            continue
    return None


def _last_pid() -> int:
    return int(Path("/proc/sys/kernel/ns_last_pid").read_text())


def _watch_the_bomb(name: str, seen: dict, stop: threading.Event) -> None:
    """What the process called ``name`` took of the machine: the most threads seen in it at once
    (sampled as often as this thread gets a core: a lower bound, as the burst's own threads crowd
    the sampler out), and the pids handed out from just before its burst to just after its end (an
    upper bound: other processes started meanwhile count too)."""
    pid = None
    while pid is None and not stop.is_set():
        pid = _process_called(name)
        stop.wait(0.01)
    base, before = None, None
    while not stop.is_set():
        last = _last_pid()
        try:
            with open(f"/proc/{pid}/status") as status:
                threads = next(int(line.split()[1]) for line in status if line.startswith("Threads:"))
        except (OSError, StopIteration, ValueError):  # it ended
            pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
            seen["pids"] = (_last_pid() - before) % pid_max if before is not None else 0
            return
        base = threads if base is None else base
        if threads > base:
            base = 1 << 30  # it grew: the burst has begun, and ``before`` stays the last look ahead of it
        elif threads == base:
            before = last
        seen["threads"] = max(seen.get("threads", 0), threads)
        time.sleep(0.0002)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, listening):
    tcp, udp, unix = listening
    course = make_course(tmp_path_factory.mktemp("redteam") / "course")
    students = {**STUDENTS, "reaches_out": _student(REACH_OUT.format(
        tcp=tcp.getsockname()[1], udp=udp.getsockname()[1], unix=unix.getsockname())),
        "floods_notes": _floods_notes(course / "source")}
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write(f"\nc.KitGrade.workers = 1\nc.KitGrade.cell_timeout = {CELL_TIMEOUT}\n"
                     f"c.KitGrade.notebook_timeout = 90\n"
                     f"c.KitGrade.memory_limit_mb = {MEMORY_MB}\nc.KitGrade.scratch_size_limit_mb = 32\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    for student, build in students.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(build(release), folder / NOTEBOOK)
    out, err = io.StringIO(), io.StringIO()
    bomb, stop = {}, threading.Event()
    sampler = threading.Thread(target=_watch_the_bomb, args=(BOMB_NAME, bomb, stop), daemon=True)
    sampler.start()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = kitgrade(["autograde", ASSIGNMENT, "--course", str(course), "--quiet"])
    finally:
        stop.set()
        sampler.join()
    assert status == 0, err.getvalue()
    return course, json.loads((course / "reports" / f"{ASSIGNMENT}.json").read_text()), bomb


def _printed(course, student) -> str:
    """What the student's own cell printed (its outputs, not its source)."""
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / NOTEBOOK, as_version=4)
    return json.dumps(nb.cells[1].get("outputs", []))


def test_an_honest_notebook_beside_them_earns_every_point(graded):
    course, report, _ = graded
    assert report["honest"]["score"] == 7 and "SOLVED 2" in _printed(course, "honest"), report["honest"]


def test_a_copied_test_cell_costs_nothing_and_a_made_up_one_earns_nothing(graded):
    _, report, _ = graded
    assert report["copies_a_test_cell"]["score"] == 7, report["copies_a_test_cell"]
    assert report["claims_a_bonus"]["score"] == 0 and report["claims_a_bonus"]["max_score"] == 7, report["claims_a_bonus"]
    assert any("unknown id 'bonus'" in reason for reason in report["claims_a_bonus"]["reasons"])


def test_no_service_of_the_grading_machine_or_beyond_can_be_reached(graded, listening):
    course, report, _ = graded
    printed = "".join(output.get("text", "") for output in json.loads(_printed(course, "reaches_out")))
    tcp, udp, unix = listening
    # a UDP datagram may be sent: into the namespace's own loopback, where nothing listens (below)
    for refused in (f"('127.0.0.1', {tcp.getsockname()[1]})", "kitgrade-redteam-", "('1.1.1.1', 80)"):
        assert re.search(f"^REFUSED .*{re.escape(refused)}", printed, re.M), (refused, printed)
    for listener in (tcp, unix):
        with pytest.raises(BlockingIOError):
            listener.accept()
    with pytest.raises(BlockingIOError):
        udp.recv(100)
    assert report["reaches_out"]["score"] == 7


def test_a_flood_of_notes_keeps_the_report_short_and_the_tests_notes_in_it(graded):
    _, report, _ = graded
    reasons = report["floods_notes"]["reasons"]
    assert len(reasons) <= NOTES_LIMIT + 10 and any("more note(s)" in r for r in reasons), len(reasons)
    assert any("test_derivative" in r and "while it ran; test failed" in r for r in reasons), reasons[-5:]
    assert report["floods_notes"]["score"] == 5


def test_ipc_objects_left_by_one_notebook_are_gone_for_the_next(graded):
    course, report, _ = graded
    assert "LEFT" in _printed(course, "a_leaves_ipc") and "FOUND []" in _printed(course, "b_finds_ipc"), \
        _printed(course, "b_finds_ipc")
    assert report["a_leaves_ipc"]["score"] == report["b_finds_ipc"]["score"] == 7


def test_memory_outside_the_address_space_limit_cannot_be_held(graded):
    course, report, _ = graded
    printed = _printed(course, "hoards_memory")
    assert "REFUSED" in printed and "HELD-MiB 0" in printed, printed
    assert report["hoards_memory"]["score"] == 7


def _text(course, student) -> str:
    return "".join(output.get("text", "") for output in json.loads(_printed(course, student)))


def test_a_thread_bomb_is_stopped_with_its_reason_and_the_next_notebook_is_graded(graded):
    """Root's process is stopped by the namespace parent, which counts its threads every 20 ms; an
    unprivileged account's cannot start more than ``RLIMIT_NPROC`` allows. Between two counts a
    burst starts what the machine's speed allows, at most what the address space holds of the
    smallest stacks (32 KiB each): what it took is printed (docs/threat-model.md)."""
    course, report, bomb = graded
    printed, limit = _printed(course, "thread_bomb"), (os.cpu_count() or 1) + EXTRA_TASKS
    started = re.search(r"THREADS (\d+)", printed)
    if started is None:  # stopped before it could say
        assert any("more threads than a notebook may hold" in r for r in report["thread_bomb"]["reasons"]), report
    else:
        assert int(started.group(1)) <= limit, printed
    print(f"\nthe thread bomb (stopped past {limit} threads): {bomb.get('threads')} threads seen at once, "
          f"{bomb.get('pids')} pids handed out meanwhile")
    assert 0 < bomb["threads"] and bomb["pids"] <= MEMORY_MB * 2**20 // 32768, bomb
    assert report["zz_graded_after_them"]["score"] == 7 and "SOLVED 2" in _text(course, "zz_graded_after_them")


def test_a_cell_spinning_until_its_timeout_costs_its_own_notebook_only(graded):
    """CPU time has no limit of its own: a cell that spins (and ignores the interrupt) holds one core
    until its cell limit, then its process is stopped; the notebook graded next on the same worker
    earns every point."""
    course, report, _ = graded
    reasons = report["spins_on_the_cpu"]["reasons"]
    assert any(f"ran longer than {CELL_TIMEOUT} s and was interrupted" in r for r in reasons), reasons
    assert any("ignored the interrupt; its process was stopped" in r for r in reasons), reasons
    assert report["spins_on_the_cpu"]["score"] == 0, report["spins_on_the_cpu"]
    assert report["zz_graded_after_them"]["score"] == 7 and "SOLVED 2" in _text(course, "zz_graded_after_them")


#: mounts of the sandbox's own making: its root, /dev, its /proc and its /tmp (docs/threat-model.md)
OWN_MOUNTS = ("/", "/dev", "/proc", "/tmp", SANDBOX_TMP)


def test_the_mounts_a_process_sees_name_the_allow_lists_paths_and_show_nothing_beside_them(graded):
    """``/proc/self/mountinfo`` names where the allow-list's files are on the machine, the kit's
    checkout and the Python environment among them (the folders its own ``sys.path`` names too; not
    defended, docs/threat-model.md): every mount is the sandbox's own or a path of the allow-list,
    and nothing of the checkout but the allow-list's entries can be seen."""
    course, report, _ = graded
    seen = json.loads(re.search(r"^MOUNTS (.*)$", _text(course, "reads_mounts"), re.M).group(1))
    allowed = {os.path.realpath(path) for path in readable_paths()} | set(readable_paths())
    # the standard library is bound whole (each of its entries is on the allow-list), its
    # site-packages covered by an empty read-only folder (bubblewrap.mount_arguments)
    stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    assert {os.path.join(stdlib, name) for name in os.listdir(stdlib)
            if name not in ("site-packages", "dist-packages")} <= allowed
    allowed |= {stdlib, os.path.join(stdlib, "site-packages"), os.path.join(stdlib, "dist-packages")}
    points = {point for _, point in seen["mounts"]}
    strange = {point for point in points if point not in allowed
               and not any(point == own or point.startswith(own.rstrip("/") + "/") for own in OWN_MOUNTS[1:])
               and point != "/"}
    assert not strange, strange
    assert {os.path.join(kit_root(), "autograd_core"), os.path.join(kit_root(), "grader", "checks.py")} <= points
    assert kit_root() in seen["sys_path"] and sysconfig.get_paths()["purelib"] in seen["sys_path"], seen["sys_path"]
    # (a checkout under /tmp is listed: the allow-list's entries bound into the sandbox's own /tmp)
    bound_there = {os.path.relpath(path, kit_root()).split(os.sep)[0] for path in readable_paths()
                   if path.startswith(kit_root() + os.sep)}
    assert seen["checkout"] == "PermissionError" or set(seen["checkout"]) <= bound_there, seen["checkout"]
    assert report["reads_mounts"]["score"] == 7


# ---- the grader's pod on Kubernetes ---------------------------------------------------------------
#: What docs/deploy.md ("In a pod") says the grader's container needs for bubblewrap, as the chart's values spell it.
GRADER_POD_NEEDS = {"seccompProfile": {"type": "Unconfined"}, "appArmorProfile": {"type": "Unconfined"},
                    "procMount": "Unmasked"}


def test_the_chart_values_give_the_grader_pod_what_the_sandbox_needs_and_students_the_defaults():
    """zero-to-jupyterhub runs the hub's managed services, the grader services, in the hub's pod:
    the guide's values give that pod a user namespace, an unmasked /proc and no seccomp or AppArmor
    profile that refuses bwrap's calls, keep its other defaults (no privilege, no capability), and
    leave the students' pods as the chart makes them; all of it valid under the chart's schema."""
    import yaml

    from test_deploy_guide import GUIDE, SCHEMA, _schema_validator, guide_blocks, over

    defaults = yaml.safe_load((SCHEMA.parent / "chart-values.yaml").read_text())
    values = over(defaults, yaml.safe_load(guide_blocks()["z2jh-values.yaml"]))
    assert not list(_schema_validator().iter_errors(values))
    hub = values["hub"]
    container = hub["containerSecurityContext"]
    assert {key: container.get(key) for key in GRADER_POD_NEEDS} == GRADER_POD_NEEDS, container
    assert hub["extraPodSpec"].get("hostUsers") is False  # procMount: Unmasked is allowed only in a pod's own user namespace
    assert container["allowPrivilegeEscalation"] is False and container["capabilities"] == {"drop": ["ALL"]}
    assert not container.get("privileged") and hub["podSecurityContext"]["runAsNonRoot"] is True
    advice = " ".join(GUIDE.read_text().split())
    for key, value in GRADER_POD_NEEDS.items():
        spelt = f"{key}: {{type: {value['type']}}}" if isinstance(value, dict) else f"{key}: {value}"
        assert f"`{spelt}`" in advice, f"docs/deploy.md no longer advises {spelt}"
    students = yaml.safe_load(guide_blocks()["z2jh-values.yaml"])["singleuser"]
    assert not {"extraPodConfig", "allowPrivilegeEscalation", "uid", "cmd"} & set(students), students
