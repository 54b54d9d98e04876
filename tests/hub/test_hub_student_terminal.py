"""A student of the class in a terminal of their own JupyterLab on the hub, trying what no student may.

kithub (deploy/hub/kithub/) sets up one course (``ad101``, ps1 released) with two students, alice and bob,
real system accounts, and starts the hub once for the module. Each student logs in on the hub's
login page, starts their server through the hub's API and types commands into a terminal of that
server (Jupyter's terminal API, its websocket), as they would in JupyterLab. What they try, and
what must hold:

* bob renames the course's folder of the exchange, to put one of his own in its place;
* bob listens on the ports of alice's kernel on 127.0.0.1 while she runs a cell;
* bob attaches a debugger to alice's kernel after she opened (and closed) JupyterLab's debugger panel;
* alice keeps her submission folder open (her shell's working directory) and changes it after the
  clerk took it in, so that what is graded is not what arrived when it arrived;
* alice submits a folder of 500 MB: the Assignments panel shows the kit's one clear line, not the
  traceback of nbgrader's handler; and Validate still runs her notebook (its kernel over sockets
  in her own folder).

Needs root, ``make hub-env`` and nothing else (no browser); without them the tests skip, except in
CI (``CI=true``), where they fail.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from browser_support import free_port, unavailable
from kit_paths import ROOT
from kithub import set_up
from kithub.accounts import remove_accounts
from kithub.hub_process import Hub
from kithub.runtime import PortsGiven
from kithub.spec import ClassSpec, CourseSpec, new_password
from hub_support import HUB_ENV, PROXY, checkout_closed, require_hub

PS1, PS1_NOTEBOOK = "ps1_autograd_basics", "autograd_basics.ipynb"

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def hub():
    """One course, two students; the hub served for the module; accounts and files removed afterwards."""
    websocket = pytest.importorskip("websocket")  # noqa: F841 (the test extras: hub_client's websockets)
    if os.geteuid() != 0:
        unavailable("the hub test creates system accounts: it runs as root", "CI runs .ci/run as root")
    if not (HUB_ENV / "bin" / "jupyterhub").exists() or not PROXY.exists():
        unavailable("the hub's environment is missing: run `make hub-env`", "`make test` builds .venv-hub")
    tag = secrets.token_hex(2)
    state = Path(tempfile.mkdtemp(prefix="kit-hub-"))
    state.chmod(0o755)
    alice, bob = f"alice-{tag}", f"bob-{tag}"
    course = CourseSpec("ad101", grader=f"grader-{tag}-ad101", port=free_port(), students=[alice, bob],
                               assignments=[PS1], kept_mib_per_student=1)
    spec = ClassSpec(state=str(state), courses=[course],
                            passwords={alice: new_password(), bob: new_password()},
                            hub_port=free_port(), hub_api_port=free_port(), proxy_api_port=free_port(),
                            python=str(HUB_ENV / "bin" / "python"))
    server = Hub(spec)
    with checkout_closed():  # set-up refuses a class whose students could read the course
        try:
            set_up.setup(spec, log=lambda line: None)
            # no instructor here: the grader service (a JupyterLab, slow to start) is left out through the
            # site's own settings (docs/deploy.md); the clerk, which takes the submissions in, stays
            site = state / "jupyterhub_config.d"
            site.mkdir(mode=0o700)
            (site / "90-no-grader-service.py").write_text(
                'c.JupyterHub.services = [s for s in c.JupyterHub.services if not s["name"].startswith("ad101") '
                'or s["name"].endswith("-clerk")]\n')
            # in its place a managed service as slow to answer as a grader service on a busy machine
            slow = probe_script(spec, "slow_service.py", SLOW_SERVICE)
            (site / "91-slow-service.py").write_text(f"c.JupyterHub.services.append({{'name': 'slow-start', 'url': "
                                                     f"'http://127.0.0.1:{free_port()}', 'user': {course.grader!r}, "
                                                     f"'command': [{spec.python!r}, {str(slow)!r}, '{SLOW_SECONDS}']}})\n")
            server.start()
            yield spec
        finally:
            server.stop()
            remove_accounts(state)
            spec.profile.unlink(missing_ok=True)
            shutil.rmtree(state, ignore_errors=True)


#: JupyterHub gives a managed service 10 s to answer at its start, then exits (jupyterhub/app.py,
#: JupyterHub.start_service: ``tries = 10 if service.managed else 1``, each ``wait_up(timeout=1)``,
#: lines 3655-3659 of JupyterHub 5.5.4; kithub.runtime.wait_for_services_at_start has the hub wait longer);
#: this service first answers after 15 s (a margin over JupyterHub's 10 tries on a loaded machine)
SLOW_SECONDS = 15
SLOW_SERVICE = r'''
import http.server, json, os, sys, time, urllib.parse
started = time.monotonic()
time.sleep(float(sys.argv[1]))  # what a grader service's imports take on a busy machine
url = urllib.parse.urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])

class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"first_answer_after": listening - started}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = http.server.HTTPServer((url.hostname, url.port), Answer)
listening = time.monotonic()
server.serve_forever()
'''


@pytest.fixture(scope="module")
def students(hub):
    """Each student logged in on the hub's page, with a token of their own and their server started."""
    from hub_client import Student

    logged_in = {}
    for name in hub.courses[0].students:
        student = Student(hub.url, name, hub.passwords[name])
        student.log_in()
        student.get_token()
        student.start_server()
        logged_in[name.split("-")[0]] = student
    yield logged_in
    for student in logged_in.values():
        student.close()


def in_terminal(student, command: str, timeout: float = 120) -> tuple[int, str]:
    """``command`` typed into a new terminal of the student's server (Jupyter's terminal API and its
    websocket, with the student's own token); (exit status, what the terminal showed)."""
    import websocket

    name = student.request("new terminal", "POST", f"{student.base}/api/terminals").json()["name"]
    socket = websocket.create_connection(f"{student.base.replace('http', 'ws', 1)}/terminals/websocket/{name}",
                                         header=[f"Authorization: token {student.token}"], timeout=timeout)
    out, deadline = "", time.monotonic() + timeout
    try:
        socket.send(json.dumps(["stdin", f'{command}; echo "__KIT_""DONE_$?__"\r']))
        while (done := re.search(r"__KIT_DONE_(\d+)__", out)) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the terminal command did not finish: {command}\n{out[-2000:]}")
            kind, *data = json.loads(socket.recv())
            if kind == "stdout":
                out += data[0]
    finally:
        socket.close()
        student.request("close terminal", "DELETE", f"{student.base}/api/terminals/{name}", expect=(204,))
    return int(done.group(1)), re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r", "", out)


def probe_script(hub, name: str, text: str) -> Path:
    """A script the students may run (in the state folder, readable by all)."""
    folder = hub.root / "probes"
    folder.mkdir(mode=0o755, exist_ok=True)
    (folder / name).write_text(text)
    (folder / name).chmod(0o644)
    return folder / name


# --- the hub's own start ------------------------------------------------------------------------------

def test_the_hub_waits_for_a_managed_service_slower_than_jupyterhubs_ten_seconds(hub):
    """A grader service first answered after JupyterHub's 10 s on a busy machine, and the hub exited
    at its start. The hub of this module started once, with a service that answers after 15 s."""
    import requests

    answer = requests.get(f"{hub.url}/services/slow-start/", timeout=30)
    assert answer.status_code == 200, answer.text[:500]
    assert answer.json()["first_answer_after"] >= SLOW_SECONDS, answer.text
    log = (hub.root / "hub" / "jupyterhub.log").read_text(errors="replace")
    assert "Cannot connect to" not in log and "starting JupyterHub (attempt 2)" not in log, log[-3000:]


# --- the exchange's own folders -----------------------------------------------------------------------

def test_a_student_cannot_rename_the_courses_exchange_folder_and_put_his_own_there(hub, students):
    """The exchange's root must be writable by all (nbgrader's release insists); without the sticky bit
    bob renames ad101 away and makes an ad101 of his own, whose inbound/ every classmate submits into."""
    exchange, course = hub.exchange, hub.exchange / "ad101"
    try:
        status, shown = in_terminal(students["bob"], f"mv '{course}' '{exchange}/ad101-gone' && mkdir -p '{course}/inbound'")
    finally:  # the course's exchange put back if he managed, for the tests after this one
        if (exchange / "ad101-gone").is_dir():
            shutil.rmtree(course, ignore_errors=True)
            (exchange / "ad101-gone").rename(course)
    assert status != 0 and "Operation not permitted" in shown, shown
    assert course.stat().st_uid == pwd.getpwnam(hub.courses[0].grader).pw_uid and not (exchange / "ad101-gone").exists()
    # the control: a student still fetches from it (the released notebook is readable)
    assert students["bob"].nbgrader("fetch", "ad101", PS1)


# --- a classmate's kernel --------------------------------------------------------------------------------

#: Run as bob: for ``seconds``, subscribe to every TCP port ``victim`` listens on (found in /proc/net/tcp,
#: which every account reads) and report whether anything said ``secret``.
EAVESDROP = r'''
import json, pwd, sys, time, zmq
victim, secret, seconds = pwd.getpwnam(sys.argv[1]).pw_uid, sys.argv[2].encode(), float(sys.argv[3])
context, poller, ports, heard = zmq.Context(), zmq.Poller(), set(), False
end = time.time() + seconds
while time.time() < end and not heard:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if fields[3] == "0A" and int(fields[7]) == victim and port not in ports:
                ports.add(port)
                listener = context.socket(zmq.SUB)
                listener.setsockopt(zmq.SUBSCRIBE, b"")
                listener.connect(f"tcp://127.0.0.1:{port}")
                poller.register(listener, zmq.POLLIN)
    for listener, _ in poller.poll(200):
        heard = heard or secret in b"".join(listener.recv_multipart())
print("KIT-EAVESDROP" + json.dumps({"ports": sorted(ports), "heard": heard}) + "KIT-EAVESDROP")
'''


def test_a_student_cannot_listen_to_a_classmates_kernel(hub, students):
    """A kernel on TCP publishes every output on its iopub port to whoever subscribes, and every account
    sees which ports alice's processes listen on: her kernels talk over sockets in her own folder."""
    alice, bob = students["alice"], students["bob"]
    secret = f"alice-answer-{secrets.token_hex(4)}"
    script = probe_script(hub, "eavesdrop.py", EAVESDROP)
    heard = {}
    listening = threading.Thread(target=lambda: heard.update(zip(("status", "shown"), in_terminal(
        bob, f"{hub.python} {script} {alice.name} {secret} 25", timeout=120))))
    listening.start()
    time.sleep(3)  # bob listens before her kernel starts
    alice.save("mine.ipynb", {"type": "notebook", "format": "json", "content": {
        "cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}})
    code = f"import time\nfor _ in range(30):\n    print({secret!r}, flush=True)\n    time.sleep(0.5)"
    [reply] = alice.run_cells("mine.ipynb", [code], timeout=120)
    listening.join(timeout=150)
    assert reply["status"] == "ok", reply  # her kernel ran, and answered her
    assert heard.get("status") == 0, heard
    found = json.loads(heard["shown"].split("KIT-EAVESDROP")[1])
    assert not found["heard"], found
    # what makes it so: her kernel's channels are sockets in her runtime folder, which is hers alone
    # (the ports bob found are her server's, behind the hub's login, and ipykernel's inbound pipe)
    runtime = hub.runtime(alice.name)
    assert runtime.stat().st_uid == pwd.getpwnam(alice.name).pw_uid and runtime.stat().st_mode & 0o077 == 0
    kernel = alice.request("start kernel", "POST", f"{alice.base}/api/kernels", expect=(201,),
                           json={"name": "python3"}).json()
    try:
        connection = json.loads((runtime / f"kernel-{kernel['id']}.json").read_text())
    finally:
        alice.request("stop kernel", "DELETE", f"{alice.base}/api/kernels/{kernel['id']}", expect=(204,))
    assert connection["transport"] == "ipc" and connection["ip"].startswith(f"{runtime}/"), connection


#: Run as bob: to every TCP port ``victim`` listens on, speak the Debug Adapter Protocol as a debugger
#: would (debugpy's adapter asks for no credential): initialize, attach, and evaluate an expression in
#: the debuggee. Reports the ports that answered as a debug adapter and what any evaluation returned.
DEBUG_ATTACH = r'''
import json, pwd, socket, sys
victim = pwd.getpwnam(sys.argv[1]).pw_uid

def listening():
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and int(fields[7]) == victim:
                yield int(fields[1].rsplit(":", 1)[1], 16)

def adapter(port):
    """The replies of a debug adapter on ``port`` to initialize, attach, evaluate; None if it is not one."""
    with socket.create_connection(("127.0.0.1", port), timeout=3) as connection:
        pending, replies = b"", []
        for seq, (command, arguments) in enumerate([
                ("initialize", {"adapterID": "python", "clientID": "bob"}), ("attach", {}),
                ("evaluate", {"expression": "__import__('os').getuid()", "context": "repl"})], 1):
            body = json.dumps({"seq": seq, "type": "request", "command": command, "arguments": arguments}).encode()
            connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            while True:  # DAP: "Content-Length: n" and a blank line, then n bytes of JSON
                try:
                    while b"\r\n\r\n" not in pending:
                        pending += connection.recv(65536) or b"\r\n\r\n"  # closed
                    head, _, rest = pending.partition(b"\r\n\r\n")
                    if not head.startswith(b"Content-Length: "):
                        return replies or None
                    size = int(head.split(b":")[1])
                    while len(rest) < size:
                        rest += connection.recv(65536) or b"\0" * size
                except OSError:
                    return replies or None
                message, pending = json.loads(rest[:size]), rest[size:]
                if message.get("type") == "response" and message.get("request_seq") == seq:
                    replies.append(message)
                    break
        return replies

found = {"ports": [], "adapters": [], "ran": []}
for port in sorted(set(listening())):
    found["ports"].append(port)
    replies = adapter(port)
    if replies:
        found["adapters"].append(port)
        found["ran"] += [r["body"]["result"] for r in replies if r["command"] == "evaluate" and r.get("success")]
print("KIT-DEBUG" + json.dumps(found) + "KIT-DEBUG")
'''


def _debug_request(channel, seq: int, command: str, arguments: dict) -> dict:
    """Request ``seq`` of the Jupyter debug protocol on the kernel's control channel, as JupyterLab's
    debugger panel sends it through the kernel's websocket; the kernel's debug_reply."""
    msg_id, deadline = secrets.token_hex(8), time.monotonic() + 60
    channel.send(json.dumps({
        "header": {"msg_id": msg_id, "msg_type": "debug_request", "username": "", "session": msg_id,
                   "version": "5.3", "date": ""}, "parent_header": {}, "metadata": {}, "channel": "control",
        "content": {"type": "request", "seq": seq, "command": command, "arguments": arguments}}))
    while time.monotonic() < deadline:
        message = json.loads(channel.recv())
        if message.get("parent_header", {}).get("msg_id") == msg_id and message["msg_type"] == "debug_reply":
            return message["content"] or {}
    raise AssertionError(f"the kernel did not answer the debug request {command}")


def test_a_classmate_cannot_reach_a_kernel_whose_owner_opened_the_debugger(hub, students):
    """JupyterLab's debugger panel has ipykernel start debugpy, whose adapter listens on a port of
    127.0.0.1 and asks for no credential: once alice closes the panel, bob, from his terminal, attaches
    to her kernel and runs code as her. The class's kernels have no debugger: JupyterLab offers none
    (the kernel spec says so), and a debug request starts nothing."""
    import websocket

    alice, bob = students["alice"], students["bob"]
    # what JupyterLab asks before it offers the debugger: the kernel spec's "debugger" metadata
    spec = alice.request("kernel specs", "GET", f"{alice.base}/api/kernelspecs").json()["kernelspecs"]["python3"]
    kernel = alice.request("start kernel", "POST", f"{alice.base}/api/kernels", expect=(201,),
                           json={"name": "python3"}).json()
    channel = websocket.create_connection(f"{alice.base.replace('http', 'ws', 1)}/api/kernels/{kernel['id']}/channels",
                                          header=[f"Authorization: token {alice.token}"], timeout=60)
    probe = probe_script(hub, "debug_attach.py", DEBUG_ATTACH)

    def bob_tries() -> dict:
        status, shown = in_terminal(bob, f"{hub.python} {probe} {alice.name}", timeout=120)
        assert status == 0, shown
        return json.loads(shown.split("KIT-DEBUG")[1])

    found = []
    try:
        # the panel opened (JupyterLab's requests), bob tries; the panel closed, bob tries again
        started = [_debug_request(channel, seq, command, arguments).get("success") for seq, (command, arguments) in
                   enumerate([("initialize", {"clientID": "jupyterlab", "adapterID": "python", "pathFormat": "path",
                                              "linesStartAt1": True, "columnsStartAt1": True}),
                              ("attach", {}), ("configurationDone", {})], 1)]
        found.append(bob_tries())
        _debug_request(channel, 4, "disconnect", {"restart": False, "terminateDebuggee": False})
        found.append(bob_tries())
        ran = alice._execute(channel, "print(6 * 7)")  # her kernel still runs her code
    finally:
        channel.close()
        alice.request("stop kernel", "DELETE", f"{alice.base}/api/kernels/{kernel['id']}", expect=(204,))
    assert all(f["ports"] for f in found), found  # bob saw her ports (her server's, ipykernel's inbound pipe)
    assert [f["adapters"] for f in found] == [[], []] and [f["ran"] for f in found] == [[], []], found
    assert not any(started), started
    assert spec["spec"]["metadata"].get("debugger") is False, spec
    assert ran["status"] == "ok", ran


# --- the time of a submission ---------------------------------------------------------------------------

def test_a_submission_cannot_be_changed_after_it_arrived(hub, students):
    """alice hands in a folder and keeps her shell in it; once the clerk has taken it in (out of
    inbound/), she writes her notebook again and plants a file, through the folder she still holds.
    What the grader has is what arrived."""
    alice = students["alice"]
    alice.nbgrader("fetch", "ad101", PS1)
    home = Path(pwd.getpwnam(alice.name).pw_dir)
    arrived = (home / "ad101" / PS1 / PS1_NOTEBOOK).read_bytes()
    inbound = hub.exchange / "ad101" / "inbound"
    entry = f"{alice.name}+{PS1}+2000-01-01 00:00:00.000000 UTC+held"
    status, shown = in_terminal(alice, (
        f"E='{inbound}/{entry}'; mkdir -m 770 \"$E\" && cp ~/ad101/{PS1}/{PS1_NOTEBOOK} \"$E\"/ && cd \"$E\" && "
        "for i in $(seq 60); do [ -e \"$E\" ] || break; sleep 0.5; done; [ ! -e \"$E\" ] && echo TAKEN-IN; "
        f"echo '{{\"changed\": \"after it arrived\"}}' > {PS1_NOTEBOOK}; echo late > planted.ipynb; sleep 2"))
    assert "TAKEN-IN" in shown, shown  # the clerk took it in while she held it
    received = hub.exchange / "ad101" / "received"
    [taken] = [p for p in received.iterdir() if p.name.startswith(f"{alice.name}+{PS1}+")]
    assert sorted(p.name for p in taken.iterdir()) == [PS1_NOTEBOOK, "timestamp.txt"], list(taken.iterdir())
    assert (taken / PS1_NOTEBOOK).read_bytes() == arrived
    # the copy is the grader's: nothing of it is hers to change
    grader = pwd.getpwnam(hub.courses[0].grader).pw_uid
    assert {p.stat().st_uid for p in [taken, *taken.iterdir()]} == {grader}
    assert not [p for p in received.iterdir() if p.name.startswith(".")], list(received.iterdir())


def test_a_student_cannot_fill_the_graders_disk_with_submissions(hub, students):
    """The clerk's copies are the grader's, so the student's own disk quota no longer bounds them: the
    grader keeps at most class.json's kept_mib_per_student of one student's (1 MiB here); the rest stays
    in inbound/, the student's own files, and is reported."""
    bob, inbound, received = students["bob"], hub.exchange / "ad101" / "inbound", hub.exchange / "ad101" / "received"
    entries = [f"{bob.name}+{PS1}+2000-01-01 00:00:00.000000 UTC+fill{n}" for n in range(2)]
    for entry in entries:  # one after the other: the first is taken in before the second is handed in
        status, shown = in_terminal(bob, (
            f"E='{inbound}/{entry}'; mkdir -m 770 \"$E\" && head -c 700000 /dev/urandom > \"$E\"/{PS1_NOTEBOOK} && "
            "for i in $(seq 20); do [ -e \"$E\" ] || break; sleep 0.5; done; ls \"$E\" 2>/dev/null | wc -l"))
        assert status == 0, shown
    kept = [p for p in received.iterdir() if p.name.startswith(f"{bob.name}+")]
    assert len(kept) == 1 and (kept[0] / PS1_NOTEBOOK).stat().st_size == 700_000, kept
    assert (inbound / entries[1]).is_dir() and (inbound / entries[1]).stat().st_uid == pwd.getpwnam(bob.name).pw_uid
    log = (hub.root / "hub" / "jupyterhub.log").read_text(errors="replace")
    assert f"left in inbound/ {entries[1]!r}: not taken in: {bob.name}'s submissions kept already hold 1 MiB" in log, \
        log[-3000:]


# --- the Assignments panel --------------------------------------------------------------------------------

def test_a_submission_of_500_mb_is_refused_with_only_the_clear_line(hub, students):
    """What nbgrader's submit handler answers is what the Assignments panel shows: the kit's line alone."""
    alice = students["alice"]
    if not (Path(pwd.getpwnam(alice.name).pw_dir) / "ad101" / PS1).is_dir():
        alice.nbgrader("fetch", "ad101", PS1)
    status, shown = in_terminal(alice, f"truncate -s 500M ~/ad101/{PS1}/data.bin")
    assert status == 0, shown
    try:
        answer = alice.request("submit", "POST", f"{alice.base}/assignments/submit",
                               data={"course_id": "ad101", "assignment_id": PS1}).json()
    finally:
        in_terminal(alice, f"rm ~/ad101/{PS1}/data.bin")
    assert answer["success"] is False, answer
    line = answer["value"]
    assert line.startswith(f"{PS1} was not submitted: its folder holds 500 MiB, more than the 95 MiB a submission "
                           "may. The largest: data.bin (500 MiB)") and line.endswith("submit again."), line
    assert "\n" not in line and "Traceback" not in line, line


def test_validate_runs_her_notebook_with_its_kernel_in_her_own_folder(hub, students):
    """nbgrader's Validate starts a kernel of its own: over sockets in her runtime folder too, and it works."""
    alice = students["alice"]
    home = Path(pwd.getpwnam(alice.name).pw_dir)
    if not (home / "ad101" / PS1).is_dir():
        alice.nbgrader("fetch", "ad101", PS1)
    result = alice.request("validate", "POST", f"{alice.base}/assignments/validate",
                           data={"path": f"ad101/{PS1}/{PS1_NOTEBOOK}"}, timeout=300).json()
    # her notebook ran: it is blank, so the tests fail (a kernel that did not start is an error instead)
    assert result["success"] is True, str(result)[-2000:]
    assert result["value"].get("failed"), str(result)[-2000:]


# --- the whole file system, as each student ----------------------------------------------------------------

def _course_lines(hub) -> dict[str, list[str]]:
    """ps1's hidden-test lines ("never") and solution lines ("others"), each long and in no public file
    (the lessons, the kit's code, the released notebook)."""
    from hub_support import solution_cells

    public = "\n".join(p.read_text(errors="replace") for folder in (ROOT / "notebooks", ROOT / "grader", ROOT / "autograd_core",
                                                                      hub.exchange / "ad101" / "outbound")
                       for p in folder.rglob("*") if p.suffix in (".py", ".ipynb"))
    source = ROOT / "exercises" / PS1 / PS1_NOTEBOOK
    hidden = [line.strip() for cell in json.loads(source.read_text())["cells"]
              for block in re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", "".join(cell["source"]), re.S)
              for line in block.splitlines()]
    solutions = [line.strip() for text in solution_cells(source).values() for line in text.splitlines()]
    return {kind: sorted({line for line in lines if len(line) >= 30 and line not in public})
            for kind, lines in (("never", hidden), ("others", solutions))}


def test_a_students_walk_of_the_file_system_reaches_shared_memory_and_run_time_files(hub, students):
    """tests/hub/test_hub.py walks the whole file system as each student; the walk also reads shared memory
    (/dev/shm), run-time files (/run) and files without a suffix in scratch places, where a process of
    the class could leave a copy. Here a copy of a hidden test is left in each, readable by all: every
    student's walk, from their own terminal, finds both, and nothing else of the course."""
    from hub_support import WALK

    lines = _course_lines(hub)
    assert len(lines["never"]) >= 5 and len(lines["others"]) >= 5, lines
    grader = pwd.getpwnam(hub.courses[0].grader)
    planted = [Path("/dev/shm") / f"kit-walk-{hub.root.name}", Path("/run") / f"kit-walk-{hub.root.name}"]
    spec = {"never": lines["never"], "others": lines["others"],
            "private_names": ["gradebook.db", "jupyterhub.sqlite", "jupyterhub.log", "jupyterhub_cookie_secret",
                              "class.json", "jupyterhub-proxy.pid"],
            "class_roots": [str(hub.root), str(ROOT)], "skip": [str(hub.root / "probes")], "own_env": str(HUB_ENV)}
    walk, secrets_file = probe_script(hub, "walk.py", WALK), probe_script(hub, "walk.json", json.dumps(spec))
    try:
        for path in planted:
            path.write_text(lines["never"][0] + "\n")
            os.chown(path, grader.pw_uid, grader.pw_gid)
            path.chmod(0o644)
        results = {}
        walks = [threading.Thread(target=lambda who=who: results.update({who: in_terminal(
            students[who], f"{hub.python} {walk} {secrets_file}", timeout=900)})) for who in students]
        for thread in walks:
            thread.start()
        for thread in walks:
            thread.join()
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    uids = {pwd.getpwnam(account).pw_uid for account in hub.accounts()}
    for who, (status, shown) in results.items():
        assert status == 0, shown[-2000:]
        result = json.loads(shown.split("KIT-WALK")[1])
        assert result["files"] > 10_000, result["files"]
        ours = [f for f in result["found"] if f[2] in uids or f[0].startswith((str(hub.root), str(HUB_ENV), str(ROOT)))]
        assert sorted(f[0] for f in ours) == sorted(map(str, planted)), (who, ours)


def test_two_servers_starting_at_once_are_never_given_the_same_port():
    # JupyterHub's free port is free only until a server binds it: with 30 students at once, two
    # servers got the same one and a student's address led to a classmate's server
    free = iter([8001, 8001, 8001, 8002, 8001])
    ports = PortsGiven(lambda: next(free))
    assert ports.give("alice") == 8001
    assert ports.give("bob") == 8002  # 8001 is alice's, though her server has not bound it yet
    ports.take_back("alice")
    assert ports.give("carol") == 8001  # alice's server stopped: her port may be given again


#: Run by the hub's own Python: a server is started by JupyterHub's LocalProcessSpawner and by the
#: class's spawner (kithub/spawner.py) on a port that another account already holds (root's here: a
#: server that answers as a Jupyter server at every address, as a classmate squatting ports could).
#: The student's server cannot bind it and exits; JupyterHub's spawner still returns that port, and
#: the proxy would send the student (their requests, their cookie) to the other server (a classmate's
#: server was reached so once with 30 students starting at once); the class's starts it again on
#: another port and returns once the socket there is the student's and answers as their server.
SPAWNED_ON_A_TAKEN_PORT = r"""
import asyncio, http.server, json, sys, threading, urllib.request
from jupyterhub import orm
from jupyterhub.objects import Hub
from jupyterhub.spawner import LocalProcessSpawner
from jupyterhub.user import User
from jupyterhub.utils import random_port
from kithub.runtime import PortsGiven
from kithub.spawner import OwnPortSpawner

class Classmate(http.server.BaseHTTPRequestHandler):  # one who answers as a Jupyter server at every address
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(json.dumps({"version": "a classmate's"}).encode())
    def log_message(self, *args): pass
classmate = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Classmate)
threading.Thread(target=classmate.serve_forever, daemon=True).start()
taken = classmate.server_address[1]
SERVER = '''
import http.server, json, os, urllib.parse
url = urllib.parse.urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])
class Own(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ours = self.path == url.path + "api"
        self.send_response(200 if ours else 404); self.end_headers()
        own = {"version": "the student's own", "token": os.environ.get("JUPYTERHUB_API_TOKEN")}
        self.wfile.write(json.dumps(own).encode() if ours else b"{}")
    def log_message(self, *args): pass
http.server.HTTPServer((url.hostname, url.port), Own).serve_forever()
'''
db = orm.new_session_factory("sqlite://")()
db.add(orm.User(name="nobody")); db.commit()

async def start(spawner_class):
    user = User(db.query(orm.User).one(), {}, db=db)
    spawner = user._new_spawner("", spawner_class=spawner_class, cmd=[sys.executable, "-c", SERVER], hub=Hub(),
                                notebook_dir="/tmp", http_timeout=60, interrupt_timeout=1, term_timeout=1, kill_timeout=1)
    spawner.orm_spawner.server = orm.Server(base_url="/user/nobody/"); db.commit()
    spawner.api_token = "the hub's token for this start"
    if spawner_class is LocalProcessSpawner:
        spawner.port = taken
    ip, port = await spawner.start()
    await asyncio.sleep(2)
    try:
        answer = json.loads(urllib.request.urlopen(f"http://{ip}:{port}/user/nobody/api", timeout=10).read())
    except Exception as error:
        answer = repr(error)
    running = await spawner.poll() is None
    await spawner.stop()
    return {"port": port, "answer": answer, "running": running}

given = iter([taken])
OwnPortSpawner.ports = PortsGiven(lambda: next(given, None) or random_port())
print(json.dumps({"taken": taken, "jupyterhub": asyncio.run(start(LocalProcessSpawner)),
                  "class": asyncio.run(start(OwnPortSpawner)), "ports_left": OwnPortSpawner.ports.given}))
"""


def test_a_server_whose_port_another_holds_starts_on_another_one_and_the_student_reaches_their_own(tmp_path):
    require_hub("the class's spawner")
    shown = subprocess.run([str(HUB_ENV / "bin" / "python"), "-c", SPAWNED_ON_A_TAKEN_PORT], cwd=tmp_path,
                           capture_output=True, text=True, timeout=180)
    assert shown.returncode == 0, shown.stderr[-3000:]
    result = json.loads(shown.stdout.strip().splitlines()[-1])
    # JupyterHub's own spawner: its server exited, and its port leads to the classmate's server
    assert result["jupyterhub"]["port"] == result["taken"] and not result["jupyterhub"]["running"]
    assert result["jupyterhub"]["answer"] == {"version": "a classmate's"}
    # the class's: started again elsewhere, answering as the student's own; the port given back at stop
    assert result["class"]["port"] != result["taken"] and result["class"]["running"]
    # ... with the hub's token for this start (a server started again without it cannot reach the hub)
    assert result["class"]["answer"] == {"version": "the student's own", "token": "the hub's token for this start"}
    assert result["ports_left"] == {}
    assert "is held by another account (root)" in shown.stderr and "on another port" in shown.stderr
