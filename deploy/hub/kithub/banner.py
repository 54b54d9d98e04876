"""What the hub prints when it starts: who logs in, and how; the instructor's first commands; and which of
the production guide's walls the machine has (``docs/deploy.md``, step 8)."""
from __future__ import annotations

import re
import socket
import urllib.parse
from pathlib import Path

from .machine import processes_hidden, quotas_on
from .spec import DEFAULT_STATE, ClassSpec

#: the hub's environment as ``make hub-env`` names it by default (one per checkout)
MAKE_HUB_ENV = re.compile(r"/opt/autograd-kit-hub/env-\d+")


def machine_name() -> str:
    """This machine's name as people reach it (its fully qualified name where it has one)."""
    name = socket.getfqdn()
    return name if name not in ("localhost", "localhost.localdomain") else socket.gethostname()


def served_at(public_url: str) -> str:
    """The hub's address as people type it: what it said it serves, with this machine's name where it
    listens on every address (``https://0.0.0.0:443/`` -> ``https://hub.uni.example:443``)."""
    parts = urllib.parse.urlsplit(public_url)
    host = parts.hostname or ""
    if host in ("", "0.0.0.0", "::"):
        host = machine_name()
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "") + parts.path.rstrip("/")


def text(spec: ClassSpec, public_url: str | None = None) -> str:
    """What ``make hub`` and ``python -m kithub start`` print (``public_url``: what the started hub
    serves, ``Hub.public_url``; None: set up, not started); nothing destructive is offered but for the demo."""
    if public_url is None:
        lines = ["JupyterHub: set up, not started (python -m kithub start, or the guide's systemd unit)", ""]
        base = "<the hub's address>"
    else:
        base = served_at(public_url)
        local = urllib.parse.urlsplit(public_url).hostname in ("127.0.0.1", "localhost", "::1")
        reach = "this machine only" if local else "every address of this machine"
        lines = [f"JupyterHub: {base}/hub/login   ({reach}; stop with Ctrl-C, or `systemctl stop jupyterhub` "
                 "under the guide's unit)", ""]
    method = (spec.logins or {}).get("method", "pam")

    def login(person: str) -> str:  # a class on the university's logins has no password of the hub
        return f"password {spec.passwords.get(person, '(none)')}" if method == "pam" else f"logs in with {method}"

    for course in spec.courses:
        lines.append(f"course {course.course_id}: assignments {', '.join(course.assignments)} released")
        for person in course.instructors:
            lines.append(f"  instructor  {person:<12} {login(person)}   "
                         f"grader service: {base}/services/{course.course_id}/lab")
        for person in course.assistants:
            lines.append(f"  assistant   {person:<12} {login(person)}   "
                         f"grader service: {base}/services/{course.course_id}/lab")
        for person in course.students:
            lines.append(f"  student     {person:<12} {login(person)}")
    dates = [f"{a} due {d}" for c in spec.courses for a, d in c.due.items()]
    if dates:
        lines += ["", "due: " + "; ".join(dates) + " (class.json: due, extensions, late_penalty; "
                  "`python -m kithub dates` applies a change)"]
    lines += ["", f"the graders grade in the grader service's terminal, as {', '.join(c.grader for c in spec.courses)}, "
              "each recorded under their own name (<course>/grading-record.log):",
              "  kitgrade collect ps1_autograd_basics && kitgrade autograde ps1_autograd_basics "
              "&& kitgrade feedback ps1_autograd_basics --release     # feedback hides the hidden tests"]
    if spec.is_demo():  # a class of the production guide is never offered its own removal
        lines.append("remove the demo's accounts and files: " + clean_command(spec))
    lines += ["", "the machine's own walls (docs/deploy.md, \"In production\", step 8):", *machine_walls(spec)]
    return "\n".join(lines)


def clean_command(spec: ClassSpec) -> str:
    """``make hub-clean`` with what this demo was made with, where it is not the Makefile's default."""
    command = "make hub-clean"
    if spec.root != DEFAULT_STATE:
        command += f" HUB_STATE={spec.root}"
    environment = str(Path(spec.python).parent.parent)
    if not MAKE_HUB_ENV.fullmatch(environment):
        command += f" HUB_ENV={environment}"
    return command


def machine_walls(spec: ClassSpec, mounts: str = "/proc/mounts") -> list[str]:
    """What of the production guide's hardening this machine and hub have, and what they leave out: the
    hub cannot set the first two (they are the whole machine's), so the demo says which are missing."""
    hidden, quotas = processes_hidden(mounts), quotas_on(spec.root, mounts)
    site = spec.root / "jupyterhub_config.d"
    spawner = site.is_dir() and any("spawner_class" in p.read_text(errors="replace") for p in site.glob("*.py"))
    return [("  processes: each account sees its own (/proc mounted with hidepid)" if hidden else
             "  processes: every account sees every other's and their command lines (/proc without hidepid)"),
            ("  disk: a quota per account on the file system of the class" if quotas else
             f"  disk: no quota per account on the file system of {spec.root}: a student can fill it"),
            ("  memory and CPU: as the site's spawner limits them (jupyterhub_config.d)" if spawner else
             "  memory and CPU: no limit per server (LocalProcessSpawner; the guide's systemdspawner sets them)")]
