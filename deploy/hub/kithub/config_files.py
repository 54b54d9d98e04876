"""The configuration files of the class: nbgrader's and Jupyter's for the students' servers and the
grader services, the class's kernel spec, and the commands of the hub's terminals."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from .kernel import BOOTSTRAP
from .spec import ClassSpec

# nbgrader's lab extensions a student does not use (they are the grader's tools)
STUDENT_DISABLED_EXTENSIONS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                               "@jupyter/nbgrader:course-list"]

NBGRADER_CONFIG = '''\
# nbgrader on the hub, for the {role} of this class (kithub writes it).
c = get_config()
c.Exchange.root = {exchange!r}
c.Exchange.path_includes_course = True        # one exchange, a folder per course
{extra}'''

STUDENT_EXCHANGE = '''\
# A student's courses are their hub groups nbgrader-<course> (read with their server's token).
from nbgrader.auth import JupyterHubAuthPlugin
c.Authenticator.plugin_class = JupyterHubAuthPlugin
# Submissions arrive whole, readable by the course's grader group only (not by other students).
c.ExchangeFactory.submit = "grader.hub_exchange.PrivateSubmit"
# Validate's kernel talks over sockets in the student's own runtime folder, not ports on 127.0.0.1
# (where any account could listen to it); nbgrader names no connection file, so a prefix is given.
import os
if os.environ.get("JUPYTER_RUNTIME_DIR"):
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = os.path.join(os.environ["JUPYTER_RUNTIME_DIR"], "validate")
'''

SERVER_CONFIG = '''\
c = get_config()
# No language servers here: the extension only slows every server's start.
c.ServerApp.jpserver_extensions = {"jupyter_lsp": False}
# Kernels talk over sockets in the account's own runtime folder (JUPYTER_RUNTIME_DIR, mode 700), not
# over ports on 127.0.0.1, where any account could subscribe to a kernel's outputs.
c.KernelManager.transport = "ipc"
# No "get notified about official Jupyter news?" box over the lessons and no update check: the class's
# JupyterLab is the one its environment installed (make lab's learner lab does the same).
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
'''

#: JupyterLab's settings that ask about news and updates, off (its notification extension's defaults)
NO_NEWS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}

STUDENT_SERVER_CONFIG = SERVER_CONFIG + '''\
# The Assignments panel shows a refusal of the exchange as its one clear line, not nbgrader's traceback.
c.ServerApp.jpserver_extensions["grader.hub_exchange.panel"] = True
'''

GRADER_SERVER_CONFIG = SERVER_CONFIG + '''\
# JupyterLab's formgrader tab is a frame of the same server; JupyterHub 4.1+ forbids frames by default.
c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}
# What a student wrote stays text in the instructor's browser: notebooks rendered sanitized, and every
# page with a Content-Security-Policy that lets no inline script of theirs run (grader/hub_exchange/pages.py).
c.HTMLExporter.sanitize_html = True
c.ServerApp.jpserver_extensions["grader.hub_exchange.pages"] = True
# Who graded or changed what, under each grader's hub name: the formgrader's changes, the terminals
# opened and the kitgrade commands run in them (kithub/grading_record.py)
c.ServerApp.jpserver_extensions["kithub.grading_record"] = True
'''

GRADER_NBGRADER = '''\
# nbgrader's own log, as its documentation advises on JupyterHub: the grader account's, in its home,
# with the grading record's lines (who changed which grade) among nbgrader's
import os
c.NbGrader.logfile = os.path.join(os.path.expanduser("~"), "nbgrader.log")
'''

COURSE_HUB_SETTINGS = '''
# On the hub (kithub): the shared exchange has a folder per course; collect takes each
# submission at the time it arrived (the clerk's, not the student's) and sets aside anything
# not owned by the student it names (grader/hub_exchange/).
c.Exchange.path_includes_course = True
c.ExchangeFactory.collect = "grader.hub_exchange.GuardedCollect"
# what late work costs: "none" (marked late only) or "zero" (class.json's late_penalty)
c.LateSubmissionPlugin.penalty_method = {penalty!r}
# what the grader keeps of one student's submissions; beyond it they stay in inbound/, reported
# (class.json's kept_mib_per_student; the course's clerk has the same)
c.GuardedCollect.kept_mib = {kept}
'''


def write_kernel_spec(spec: ClassSpec) -> Path:
    """``python3`` for every server and service of the class (``JUPYTER_PATH`` comes before the
    environment's own kernel spec and the account's): the kernel without a debugger (``kernel.py``),
    the same name, display name and logos as ipykernel's, so notebooks open unchanged."""
    folder = spec.jupyter_data / "kernels" / "python3"
    folder.mkdir(parents=True, exist_ok=True)
    for logo in (Path(spec.python).parent.parent / "share" / "jupyter" / "kernels" / "python3").glob("logo-*"):
        shutil.copyfile(logo, folder / logo.name)
    (folder / "kernel.json").write_text(json.dumps({
        "argv": [spec.python, "-c", BOOTSTRAP, "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python", "metadata": {"debugger": False}}, indent=1))
    for path in [spec.root / "jupyter", *spec.root.joinpath("jupyter").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder / "kernel.json"


def write_jupyter_config(spec: ClassSpec) -> None:
    for role in ("student", "grader"):
        folder = spec.jupyter_config(role)
        (folder / "labconfig").mkdir(parents=True, exist_ok=True)
        extra = STUDENT_EXCHANGE if role == "student" else GRADER_NBGRADER
        whose = "students' servers" if role == "student" else "grader services (each serves one course)"
        (folder / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(role=whose, exchange=str(spec.exchange),
                                                                          extra=extra))
        disabled = {name: True for name in STUDENT_DISABLED_EXTENSIONS} if role == "student" else {}
        (folder / "labconfig" / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}, indent=1))
        (folder / "labconfig" / "default_setting_overrides.json").write_text(json.dumps(NO_NEWS, indent=1))
        (folder / "jupyter_server_config.py").write_text(GRADER_SERVER_CONFIG if role == "grader" else STUDENT_SERVER_CONFIG)
    write_kernel_spec(spec)


def write_commands(spec: ClassSpec) -> None:
    """``reset-lesson`` and the lessons it puts back, in the state folder (nothing is read from the
    checkout: the command is the class's environment's ``kithub.lessons``), the grader services'
    ``kitgrade`` that records who runs it, and this class's PATH for the login shells of its terminals."""
    folder = spec.root / "bin"
    folder.mkdir(exist_ok=True)
    (folder / "lessons.py").unlink(missing_ok=True)  # the copy a kit before the package kept here
    script = folder / "reset-lesson"
    script.write_text(f"#!/bin/sh\nexec {spec.python} -I -m kithub.lessons \"$@\"\n")
    graders = folder / "grader"  # first on the PATH of the grader services only
    graders.mkdir(exist_ok=True)
    recorded = graders / "kitgrade"
    recorded.write_text(f"#!/bin/sh\nexec {spec.python} -I -m kithub.grading_record \"$@\"\n")
    update_lessons(spec)
    for path in [folder, *folder.iterdir(), *graders.iterdir(), spec.lessons_copy, *spec.lessons_copy.rglob("*")]:
        # a command another part wrote here (lti-grades) stays a command when set-up runs again
        command = path in (script, recorded) or (path.parent == folder and path.stat().st_mode & 0o100)
        path.chmod(0o755 if path.is_dir() or command else 0o644)
    spec.profile.write_text(f"# the autograd kit's hub in {spec.root}: its commands in the terminals of its servers\n"
                            f"if [ \"${{KIT_HUB_STATE:-}}\" = \"{spec.root}\" ]; then\n"
                            f"  PATH=\"{spec.bin}:{spec.root / 'bin'}:$PATH\"\n"
                            f"  # a grader service's terminal: its kitgrade records who runs it\n"
                            f"  if [ -n \"${{KIT_COURSE:-}}\" ]; then PATH=\"{graders}:$PATH\"; fi\n"
                            f"  export PATH\nfi\n")
    spec.profile.chmod(0o644)


def _digests(folder: Path) -> dict[str, str]:
    """Each lesson file under ``folder`` (both languages) -> its SHA-256."""
    import hashlib

    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for language in ("en", "zh") for path in sorted((folder / language).rglob("*"))
            if path.is_file() and not set(path.relative_to(folder).parts) & {".ipynb_checkpoints", "__pycache__"}}


def update_lessons(spec: ClassSpec) -> bool:
    """The class's copy of the lessons (``<state>/lessons``, what a first start gives and ``reset-lesson``
    puts back) made, or made again where the kit's lessons differ from it (an upgrade of the kit): the
    new copy is made beside it and put in its place whole. The students' own copies are theirs and are
    never touched. True if it was (re)made."""
    source = Path(spec.lessons)
    if spec.lessons_copy.exists() and _digests(source) == _digests(spec.lessons_copy):
        return False
    fresh, old = spec.root / "lessons.partial", spec.root / "lessons.old"
    for leftover in (fresh, old):
        shutil.rmtree(leftover, ignore_errors=True)
    for language in ("en", "zh"):
        shutil.copytree(source / language, fresh / language,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    if spec.lessons_copy.exists():
        spec.lessons_copy.rename(old)
    fresh.rename(spec.lessons_copy)
    shutil.rmtree(old, ignore_errors=True)
    return True


#: the hub's API address, from class.json, for what runs beside the hub and asks its API (the guide's idle
#: culler reads it as its ``EnvironmentFile``: jupyterhub-idle-culler takes ``JUPYTERHUB_API_URL``)
HUB_API_ENV = "hub-api.env"


def write_hub_api_address(spec: ClassSpec) -> Path:
    """``<state>/hub-api.env``, written again at each set-up and start: a port changed in class.json
    reaches the culler with the hub's next restart, and no unit names a port."""
    path = spec.root / HUB_API_ENV
    path.write_text(f"JUPYTERHUB_API_URL=http://127.0.0.1:{spec.hub_api_port}/hub/api\n")
    path.chmod(0o644)  # an address, no secret
    return path
