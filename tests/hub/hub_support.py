"""What the hub test needs besides the test itself: the class's set-up code, a person in the browser.

* the class's set-up is ``kithub`` (deploy/hub/kithub/), the code ``make hub`` runs; each test imports
  what it uses of it (``kithub.spec``, ``kithub.accounts``, ...).
* ``Person``: someone of the class in their own browser context: logs in on the hub's login
  page, opens notebooks in their JupyterLab, uses nbgrader's Assignments panel.
* ``run_as``: a command as one of the class's system accounts (what they could do in a terminal).
* ``Person.start_in_terminal`` / ``terminal_output``: a command typed into a terminal of the
  person's own server (or of a grader service) through Jupyter's terminal API, from their browser.
* ``WALK``: the whole file system walked as whoever runs it, listing what of the class it can read.
* ``memory_of``: resident and proportional memory of an account's processes.
* ``require_hub``, ``one_course_class`` and ``served_class``: how a test module gets its hub (below).

How a hub test gets its hub: one hub per test module, from a module-scoped fixture, started once and
shared by the module's tests in the order written (a hub start with its release proof costs a
minute on two cores; thirty students' servers, several)::

    @pytest.fixture(scope="module")
    def hub():
        require_hub("the hub's X test")                  # skips without root or `make hub-env` (fails in CI)
        spec = one_course_class("kit-x-", ["alice", "bob"])   # names tagged, ports free, a new state folder
        with served_class(spec) as served:             # set up, served; stopped and removed afterwards
            yield served

A module of tests/hub/ is in the ``hub`` group and, named in ``ONE_AT_A_TIME`` (tests/hub/conftest.py),
runs with ``make test``'s two workers in the one worker that takes every module making system accounts, one
at a time (tests/conftest.py), so its accounts, ports and the checkout's mode meet no other module's. Start
only the servers a test needs: thirty at once are tests/hub/test_hub_load.py's, which measures them.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from browser_support import Notebook, free_port, unavailable
from kit_paths import ROOT
from kithub import set_up
from kithub.accounts import account_exists, as_account, processes_of, remove_accounts
from kithub.backup import teardown
from kithub.hub_process import Hub
from kithub.spec import CLASS_FILE, TIME_FORMAT, ClassSpec, CourseSpec, new_password

HUB_ENV = (ROOT / ".venv-hub").resolve()  # outside the checkout (make hub-env); the link points to it
PS1, PS1_NOTEBOOK = "ps1_autograd_basics", "autograd_basics.ipynb"


PROXY = HUB_ENV / "bin" / "configurable-http-proxy"  # make hub-env puts it there


def require_hub(what: str) -> None:
    """Skip ``what`` (fail it in CI) where no hub can be served: not root, or no ``make hub-env``."""
    in_ci = f"CI must run {what} (.ci/run runs as root; `make test` builds .venv-hub)"
    if os.geteuid() != 0:
        unavailable(f"{what} creates system accounts: it runs as root", in_ci)
    if not (HUB_ENV / "bin" / "jupyterhub").exists() or not PROXY.exists():
        unavailable("the hub's environment is missing: run `make hub-env` (.venv-hub and configurable-http-proxy)",
                    in_ci)


def one_course_class(prefix: str, students: list[str], state: Path | None = None, assistants: tuple[str, ...] = (),
                     **course) -> ClassSpec:
    """Course ``ad101`` with ps1 released (due tomorrow), an instructor ``teach``, teaching ``assistants``
    (none unless given) and ``students``;
    every account name carries a random tag (``alice-1f2e``) so that runs on one machine never meet,
    and so do the ports (each free when chosen) and the state folder (a new one, ``prefix``...).
    ``spec.names`` maps the given names to the accounts; ``course`` overrides the CourseSpec's fields."""
    tag = secrets.token_hex(2)
    names = {who: f"{who}-{tag}" for who in ["teach", *assistants, *students]}
    if state is None:
        state = Path(tempfile.mkdtemp(prefix=prefix))
        state.chmod(0o755)
    due = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).strftime(TIME_FORMAT)
    fields = {"grader": f"grader-{tag}-ad101", "port": free_port(), "instructors": [names["teach"]],
              "assistants": [names[who] for who in assistants], "students": [names[who] for who in students], "assignments": [PS1], "due": {PS1: due}, **course}
    spec = ClassSpec(state=str(state), courses=[CourseSpec("ad101", **fields)],
                            passwords={account: new_password() for account in names.values()},
                            hub_port=free_port(), hub_api_port=free_port(), proxy_api_port=free_port(),
                            python=str(HUB_ENV / "bin" / "python"))
    spec.names, spec.tag = names, tag
    return spec


@contextmanager
def served_class(spec, log_path: Path | None = None, before_start=None, set_up_by=None):
    """The class of ``spec`` set up as ``make hub`` sets it up and served (``spec.server``); afterwards
    the hub stopped, the class torn down, its accounts and folders removed (asserted).
    ``before_start(spec)``: what to do between the set-up and the start (a site's settings);
    ``set_up_by(spec)``: the set-up itself, if not ``kithub.set_up.setup`` called here (a guide's commands)."""
    server = Hub(spec, log_path=log_path)
    state = spec.root
    with checkout_closed():
        yield from _served(spec, server, state, before_start, set_up_by or (lambda spec: set_up.setup(spec, log=lambda line: None)))
    assert not any(account_exists(a) for a in spec.accounts()), "accounts left behind"


@contextmanager
def checkout_closed():
    """The kit's checkout closed to other accounts while a class exists (it holds the course: set-up refuses
    a class whose students could read it, as docs/deploy.md says), its mode put back afterwards."""
    mode = ROOT.stat().st_mode & 0o7777
    ROOT.chmod(mode & ~0o007)
    try:
        yield
    finally:
        ROOT.chmod(mode)


def _served(spec, server, state, before_start, set_up_by):
    try:
        started = time.monotonic()
        set_up_by(spec)
        if before_start is not None:
            before_start(spec)
        spec.set_up_seconds = time.monotonic() - started
        server.start()
        spec.server = server
        yield spec
    finally:
        server.stop()
        if (state / CLASS_FILE).exists():
            teardown(state)
        if state.exists():
            remove_accounts(state)
            shutil.rmtree(state, ignore_errors=True)
        for backup in state.parent.glob(f"{state.name}.backup-*"):  # the gradebooks teardown keeps aside
            shutil.rmtree(backup)


def solution_cells(source_notebook: Path, cell_type: str = "code") -> dict[int, str]:
    """Cell index -> the instructor's solution without nbgrader's markers, for each solution cell of
    ``cell_type`` ("markdown": the written answers, which hold the model answer and its rubric)."""
    cells = json.loads(source_notebook.read_text())["cells"]
    answers = {}
    for index, cell in enumerate(cells):
        if cell["metadata"].get("nbgrader", {}).get("solution") and cell["cell_type"] == cell_type:
            lines = "".join(cell["source"]).splitlines()
            answers[index] = "\n".join(line for line in lines if not re.match(r"\s*### (BEGIN|END) SOLUTION", line))
    return answers


class HubNotebook(Notebook):
    """A notebook opened in a person's JupyterLab on the hub (``base`` is ``<hub>/user/<name>``)."""

    def __init__(self, page, base: str, path: str, workspace: str):
        self.page, self.path = page, path
        page.goto(f"{base}/lab/workspaces/{workspace}/tree/{path}")
        self.panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
        self.panel.locator(".jp-Cell").first.wait_for(timeout=60_000)
        self.wait_for_kernel_idle()

    def type_into_cell(self, index: int, text: str) -> None:
        """Replace a code cell's text as a student does: click into it, select all, type."""
        editor = self.panel.locator(".jp-Cell").nth(index).locator(".cm-content")
        editor.scroll_into_view_if_needed()
        editor.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.press("Delete")
        self.page.keyboard.insert_text(text)

    def write_into_markdown_cell(self, index: int, text: str) -> None:
        """Replace a markdown cell's text as a student does: double-click it to edit, select all, type,
        then Shift+Enter to render it."""
        cell = self.panel.locator(".jp-Cell").nth(index)
        cell.scroll_into_view_if_needed()
        cell.dblclick()
        editor = cell.locator(".cm-content")
        editor.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.press("Delete")
        self.page.keyboard.insert_text(text)
        self.page.keyboard.press("Shift+Enter")

    def save(self) -> None:
        self.page.keyboard.press("Control+S")
        self.page.wait_for_function(
            """() => { const t = document.querySelector('.jp-mod-current .lm-TabBar-tabLabel, .lm-TabBar-tab.jp-mod-current');
                       return t && !document.querySelector('.lm-TabBar-tab.jp-mod-current.jp-mod-dirty'); }""")


class Person:
    """One person of the class in their own browser context (cookies of their own)."""

    def __init__(self, browser, hub_url: str, name: str, password: str, artifacts: Path):
        self.hub_url, self.name, self.password, self.artifacts = hub_url, name, password, artifacts
        self.context = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US")
        self.context.set_default_timeout(30_000)
        self.page = self.context.new_page()

    @property
    def base(self) -> str:
        return f"{self.hub_url}/user/{self.name}"

    def shot(self, name: str, full: bool = False) -> None:
        self.page.screenshot(path=str(self.artifacts / f"{name}.png"), full_page=full)

    def log_in(self, step: str, lands_on: str | None = None) -> None:
        """The hub's login page; then JupyterHub starts the server and opens JupyterLab."""
        page = self.page
        page.goto(f"{self.hub_url}/hub/login")
        page.locator("#username_input").fill(self.name)
        page.locator("#password_input").fill(self.password)
        self.shot(f"{step}-login-page")
        page.locator("#login_submit").click()
        page.wait_for_url(lands_on or f"**/user/{self.name}/lab**", timeout=120_000)
        if lands_on is None:
            page.locator(".jp-LabShell").wait_for(timeout=60_000)
            self.shot(f"{step}-lab")

    def notebook(self, path: str, workspace: str) -> HubNotebook:
        return HubNotebook(self.page, self.base, path, workspace)

    # ---- nbgrader's Assignments panel ----------------------------------------------------------
    def open_assignments(self) -> None:
        page = self.page
        if not page.url.startswith(self.base + "/lab"):
            page.goto(f"{self.base}/lab")
            page.locator(".jp-LabShell").wait_for(timeout=60_000)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Nbgrader$")).click()
        page.locator(".lm-Menu-item:visible .lm-Menu-itemLabel", has_text="Assignment List").click()
        page.locator("#assignments").wait_for()
        self.refresh_assignments()

    def refresh_assignments(self) -> None:
        page = self.page
        page.locator("#refresh_assignments_list").click()
        # The panel may start loading a moment after the click (and it loads on opening too): the
        # lists are read only once no section has shown "Loading" for two looks half a second apart.
        loading = [page.locator(f"#{section}_assignments_list_loading") for section in ("released", "fetched", "submitted")]
        deadline, quiet = time.monotonic() + 60, 0
        while quiet < 2:
            quiet = quiet + 1 if not any(indicator.is_visible() for indicator in loading) else 0
            if time.monotonic() > deadline:
                raise AssertionError("the Assignments panel was still loading after 60 s")
            page.wait_for_timeout(500)

    def section(self, name: str):
        """``released``, ``fetched`` (Downloaded) or ``submitted``: the panel's list of that name."""
        return self.page.locator(f"#{name}_assignments_list")

    def assignment_row(self, section: str, assignment: str):
        return self.section(section).locator(":scope > .list_item", has_text=assignment)

    def fetch(self, assignment: str) -> None:
        self.assignment_row("released", assignment).get_by_role("button", name="Fetch").click()
        self.assignment_row("fetched", assignment).wait_for(timeout=60_000)

    def submit(self, assignment: str) -> None:
        before = self.assignment_row("submitted", assignment).locator(".nested_list_item").count()
        self.assignment_row("fetched", assignment).get_by_role("button", name="Submit").click()
        self.assignment_row("submitted", assignment).locator(".nested_list_item").nth(before).wait_for(timeout=60_000)

    # ---- a terminal of their server: Jupyter's terminal API, from their own page --------------------
    def start_in_terminal(self, command: str, server: str | None = None, timeout: float = 300) -> None:
        """Open a terminal on ``server`` (a path such as ``/user/alice`` or ``/services/ad101``; their own
        server by default) from the person's page there, and type ``command``; ``terminal_output`` waits."""
        server = server or f"/user/{self.name}"
        if not self.page.url.startswith(f"{self.hub_url}{server}/lab"):  # (a /files/ page is sandboxed)
            self.page.goto(f"{self.hub_url}{server}/lab")
            self.page.locator(".jp-LabShell").wait_for(timeout=60_000)
        self.page.evaluate(TERMINAL_JS, [server, command, int(timeout * 1000)])

    def terminal_output(self) -> tuple[int, str]:
        """(exit status, what the terminal showed, without its control sequences) of the command."""
        result = self.page.evaluate("() => window.kitTerminal")
        text = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r", "", result["out"])
        if result.get("error") or result.get("status") is None:
            raise AssertionError(f"the terminal command did not finish: {result.get('error')}\n{text[-3000:]}")
        return result["status"], text

    def in_terminal(self, command: str, server: str | None = None, timeout: float = 300) -> tuple[int, str]:
        self.start_in_terminal(command, server, timeout)
        return self.terminal_output()

    def close(self) -> None:
        self.context.close()


#: Opens a terminal through Jupyter's REST API (with the page's own cookies and XSRF token, as
#: JupyterLab does), types the command on its websocket and keeps what comes back until the
#: command's end marker; ``window.kitTerminal`` is a promise of {out, status}.
TERMINAL_JS = """([server, command, timeout]) => {
  window.kitTerminal = (async () => {
    const xsrf = decodeURIComponent((document.cookie.match(/(?:^|;\\s*)_xsrf=([^;]*)/) || [])[1] || "");
    const made = await fetch(`${server}/api/terminals`, {method: "POST", headers: {"X-XSRFToken": xsrf}});
    if (!made.ok) return {out: "", error: `POST ${server}/api/terminals: ${made.status}`};
    const {name} = await made.json();
    const socket = new WebSocket(`${location.origin.replace(/^http/, "ws")}${server}/terminals/websocket/${name}`);
    let out = "";
    const result = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve({out, error: "timed out"}), timeout);
      socket.onopen = () => socket.send(JSON.stringify(["stdin", `${command}; echo "__KIT_""DONE_$?__"\\r`]));
      socket.onerror = () => { clearTimeout(timer); resolve({out, error: "the terminal's websocket failed"}); };
      socket.onmessage = (event) => {
        const [kind, data] = JSON.parse(event.data);
        if (kind !== "stdout") return;
        out += data;
        const done = out.match(/__KIT_DONE_(\\d+)__/);
        if (done) { clearTimeout(timer); resolve({out, status: Number(done[1])}); }
      };
    });
    socket.close();
    await fetch(`${server}/api/terminals/${name}`, {method: "DELETE", headers: {"X-XSRFToken": xsrf}});
    return result;
  })();
}"""


#: Run as a student (``python WALK.py SECRETS.json``): every file of the machine it can read, checked
#: for what belongs to the course, the grader or a classmate. Prints one JSON line between markers.
WALK = r'''
import json, os, stat, sys
me = os.getuid()
spec = json.load(open(sys.argv[1]))
never = [m.encode() for m in spec["never"]]      # hidden tests: not even in one's own files
others = [m.encode() for m in spec["others"]]    # solutions, a classmate's work: only in one's own files
private_names = set(spec["private_names"])       # gradebook, the hub's database, log and secrets
class_roots = tuple(spec["class_roots"])
skip = set(spec["skip"])
own_env = spec["own_env"]                        # the class's Python environment: walked like the rest
TEXT = (".ipynb", ".py", ".txt", ".html", ".json", ".md", ".log", ".csv", ".cfg", ".toml", ".sh", ".yaml", ".db", ".sqlite")
# scratch places (shared memory, run-time files, temporary folders): files without a suffix read too
scratch = ("/tmp/", "/var/tmp/", "/dev/shm/", "/run/", *(root + "/" for root in class_roots))
found, other_copies, files = [], [], 0
walks = [os.walk(top, onerror=lambda error: None) for top in ("/", "/dev/shm", "/run")]
for top, folders, names in (step for walk in walks for step in walk):
    if top == "/":
        folders[:] = [f for f in folders if f not in ("proc", "sys", "dev", "run")]
    if top in skip:
        folders[:] = []
        continue
    if "exercises" in folders and ".git" in os.listdir(top) and os.path.isdir(os.path.join(top, "exercises", "_src")):
        other_copies.append(top)  # another checkout of the kit on this machine, not this class's
        folders[:] = []
        continue
    if "pyvenv.cfg" in names and top != own_env and os.lstat(top).st_uid == 0:
        # another checkout's Python environment (each `make hub-env` makes one, 600 MB): root's, so no
        # account of the class wrote in it, and outside the class's places, so nothing in it is failed on
        other_copies.append(top)
        folders[:] = []
        continue
    for name in names:
        path = os.path.join(top, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or not os.access(path, os.R_OK):
            continue
        files += 1
        mine = info.st_uid == me
        if name in private_names and path.startswith(class_roots):
            found.append([path, "a private file of the class is readable", info.st_uid])
            continue
        if not (name.endswith(TEXT) or ("." not in name and path.startswith(scratch))) or info.st_size > 4_000_000:
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if any(m in data for m in never):
            found.append([path, "holds a hidden test", info.st_uid])
        elif not mine and any(m in data for m in others):
            found.append([path, "holds a solution or a classmate's work", info.st_uid])
print("KIT-WALK" + json.dumps({"user": me, "files": files, "found": found, "other_copies": other_copies}) + "KIT-WALK")
'''


def run_as(spec, account: str, *command: str, role: str | None = None, env: dict | None = None,
           cwd: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``command`` as the class's system account ``account`` (its home, the class's Python first on PATH)."""
    options = as_account(account, spec)
    options["env"].update(env or {})
    if cwd:
        options["cwd"] = cwd
    return subprocess.run(list(command), capture_output=True, text=True, timeout=timeout, **options)


def python_as(spec, account: str, code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_as(spec, account, str(spec.python), "-c", code, env=env)


def memory_of(uid: int) -> dict:
    """RSS and PSS (shared pages divided among their users) in MiB, over every process of ``uid``."""
    rss = pss = 0
    processes = []
    for pid in processes_of(uid):
        try:
            fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        rss += int(fields["Rss"].split()[0])
        pss += int(fields["Pss"].split()[0])
        processes.append(command.strip()[:120])
    return {"rss_mib": rss / 1024, "pss_mib": pss / 1024, "processes": processes}


def server_environment(uid: int) -> dict:
    """The environment of the Jupyter server running as ``uid`` (its hub token, user name, API URL)."""
    for pid in processes_of(uid):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"jupyterhub-singleuser" not in command:
                continue
            raw = Path(f"/proc/{pid}/environ").read_bytes()
        except (FileNotFoundError, ProcessLookupError):
            continue
        return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
    raise LookupError(f"no jupyterhub-singleuser runs as uid {uid}")


def listening_sockets(pids: set[int]) -> list[tuple[str, int, int]]:
    """(address, port, pid) of every listening TCP socket of ``pids``."""
    inodes = {}
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    target = fd.readlink().as_posix()
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = pid
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    found = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            if state != "0A" or inode not in inodes:  # 0A: LISTEN
                continue
            address, port = local.split(":")
            found.append((_address(address, v6), int(port, 16), inodes[inode]))
    return found


def _address(hex_address: str, v6: bool) -> str:
    import ipaddress

    raw = bytes.fromhex(hex_address)
    if not v6:
        return str(ipaddress.IPv4Address(raw[::-1]))
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return str(ipaddress.IPv6Address(words))


def start_as(spec, account: str, *command: str) -> subprocess.Popen:
    """``command`` started as the class's system account ``account``, in the background (lines on stdout)."""
    options = as_account(account, spec)
    return subprocess.Popen(list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)


#: Run as a student (``python SWAPPER FOLDER SUB BAIT WHEN [NAME]``): what a student with a shell in a folder
#: they hand in can do while root or the grader reads it. It watches FOLDER's sub-folder SUB (inotify); when
#: SUB is next opened (its listing) by anyone, it renames SUB away and puts a link to BAIT in its place, then
#: prints SWAPPED and exits. WHEN ``after-move``: first it renames FOLDER to NAME (handing it in), and swaps
#: only once FOLDER has been moved again (the clerk taking it out of inbound/) and SUB is then opened:
#: during the copy, not during the looks before the move. Its working folder is FOLDER, so it reaches SUB
#: wherever FOLDER is moved to. Prints WATCHING once it watches; NOT SWAPPED after two minutes without.
SWAPPER = r'''
import ctypes, os, select, struct, sys, time
folder, sub, bait, when = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
IN_ACCESS, IN_OPEN, IN_MOVE_SELF = 0x1, 0x20, 0x800
watch = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
os.chdir(folder)
moves = libc.inotify_add_watch(watch, b".", IN_MOVE_SELF)
opens = libc.inotify_add_watch(watch, sub.encode(), IN_OPEN)
assert moves >= 0 and opens >= 0, ctypes.get_errno()
print("WATCHING", flush=True)
moved = when != "after-move"
if not moved:
    os.rename(folder, sys.argv[5])  # handed in: its own move, seen below as the first
    seen_moves = 0
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if not select.select([watch], [], [], 1)[0]:
        continue
    data, offset = os.read(watch, 65536), 0
    while offset < len(data):
        wd, mask, cookie, length = struct.unpack_from("iIII", data, offset)
        offset += 16 + length
        if wd == moves and mask & IN_MOVE_SELF and not moved:
            seen_moves += 1
            moved = seen_moves >= 2
        elif wd == opens and mask & IN_OPEN and moved:
            os.rename(sub, sub + ".away")
            os.symlink(bait, sub)
            print("SWAPPED", flush=True)
            sys.exit(0)
print("NOT SWAPPED", flush=True)
'''
