"""The hub's grade service: the course's grader sends grades to the LMS without the tool's key.

The tool's private key lets whoever holds it set any grade in every LMS course the tool is placed
in, and the grader account is the one that runs the students' notebooks at autograde (sandboxed,
but still their code): so the key stays root's alone, and the hub runs this small service as root
(a JupyterHub managed service, ``python -m kithub.lti serve``). It listens on ``<state>/lti-grades.sock``;
the kernel says which account is asking (``SO_PEERCRED``, nothing the caller can claim), and the
service sends, or reads the roster of, only a course whose grader that account is (root: any).
What it can do for a grader is what the grader could do with the gradebook anyway: its own course's
grades, nothing of another course, never the key.

The course's grader asks with ``lti-grades send ad101 ps1_autograd_basics`` (``lti-grades roster
ad101``): the command the service puts in ``<state>/bin`` (on the PATH of the hub's terminals) runs
``main`` below from the class's environment, with nothing but the standard library.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import struct
import sys
import threading
from pathlib import Path

SOCKET = "lti-grades.sock"
COMMAND = "lti-grades"
WAIT = 900  # seconds a client waits for a send to finish (a class of hundreds, a slow LMS)


def serve(root: Path, python: str, handle) -> int:
    """Answer the graders' requests until stopped: ``handle(uid, request, say)`` does the work."""
    path = root / SOCKET
    path.unlink(missing_ok=True)  # the hub's previous run left it
    _install_client(root, python)
    locks: dict[str, threading.Lock] = {}

    class Request(socketserver.StreamRequestHandler):
        def handle(self):
            _, uid, _ = struct.unpack("3i", self.connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                      struct.calcsize("3i")))

            def say(line: str, kind: str = "line") -> None:
                self.wfile.write((json.dumps({kind: line}) + "\n").encode())
                self.wfile.flush()

            try:
                request = json.loads(self.rfile.readline(4096) or b"{}")
                if not isinstance(request, dict):
                    raise ValueError("not an object")
            except ValueError:
                return say("the request is not what lti-grades sends", "error")
            with locks.setdefault(str(request.get("course")), threading.Lock()):  # one send per course at a time
                code = handle(uid, request, say)
            self.wfile.write((json.dumps({"exit": code}) + "\n").encode())

    with socketserver.ThreadingUnixStreamServer(str(path), Request) as server:
        path.chmod(0o666)  # anyone may ask; who asks is the kernel's word, checked per request
        print(f"lti-grades: listening on {path}", file=sys.stderr, flush=True)
        server.serve_forever()
    return 0


def _install_client(root: Path, python: str) -> None:
    folder = root / "bin"
    folder.mkdir(mode=0o755, exist_ok=True)
    (folder / "lti_service.py").unlink(missing_ok=True)  # the copy a kit before the package kept here
    script = folder / COMMAND
    script.write_text(f"#!/bin/sh\nexec {python} -I -m kithub.lti.service \"$@\"\n")
    script.chmod(0o755)


def ask(state: Path, request: dict) -> int:
    """Send ``request`` to the hub's grade service and print what it says; its exit status."""
    path = state / SOCKET
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(WAIT)
        client.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        print(f"{COMMAND}: the hub's grade service is not running ({path} does not answer); it runs with the hub "
              "when class.json's logins.method is lti13: ask the hub's administrator", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"{COMMAND}: cannot reach the hub's grade service ({path}: {error.strerror})", file=sys.stderr)
        return 1
    code = 1
    try:
        with client, client.makefile("rwb") as stream:
            stream.write((json.dumps(request) + "\n").encode())
            stream.flush()
            for raw in stream:
                answer = json.loads(raw)
                if "line" in answer:
                    print(answer["line"], flush=True)
                elif "error" in answer:
                    print(f"{COMMAND}: {answer['error']}", file=sys.stderr)
                elif "exit" in answer:
                    code = answer["exit"]
    except (OSError, ValueError) as error:
        print(f"{COMMAND}: the hub's grade service stopped answering ({type(error).__name__}); what it said above "
              "was done; run the same command again for the rest", file=sys.stderr)
        return 1
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Grades to the LMS, and its roster, through the hub's "
                                     "grade service (as the course's grader).")
    parser.add_argument("command", choices=["send", "roster"])
    parser.add_argument("course")
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--state", default=os.environ.get("KIT_HUB_STATE", "/srv/autograd-kit-hub"),
                        help="the class's folder (default $KIT_HUB_STATE)")
    args = parser.parse_args(argv)
    if args.command == "send" and not args.assignment:
        parser.error("say the assignment: lti-grades send ad101 ps1_autograd_basics")
    return ask(Path(args.state), {"command": args.command, "course": args.course, "assignment": args.assignment})


if __name__ == "__main__":
    sys.exit(main())
