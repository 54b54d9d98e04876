"""``python -m kithub.lti key|send|roster|serve --state DIR``: the tool's key, grades and roster to the LMS.

As root it acts itself (``key`` and ``serve`` only as root: the key is root's alone); as a course's
grader, ``send`` and ``roster`` ask the hub's grade service (``service.py``), which acts for it.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..errors import SetupError
from ..spec import ClassSpec
from . import service
from .grades import answer, run
from .tool import PassbackError, public_jwk, public_pem, tool_key


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kithub.lti", description="Grades back to the LMS through LTI "
                                     "Assignment and Grade Services, and its roster (the tool's key: root's).")
    parser.add_argument("command", choices=["key", "send", "roster", "serve"])
    parser.add_argument("course", nargs="?")
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--format", choices=["jwk", "pem"], default="jwk",
                        help="key: the public key as a JWK (Canvas) or in PEM (Moodle's \"RSA key\")")
    parser.add_argument("--state", default=os.environ.get("KIT_HUB_STATE", "/srv/autograd-kit-hub"),
                        help="the class's folder (default $KIT_HUB_STATE, else /srv/autograd-kit-hub)")
    args = parser.parse_intermixed_args(argv)  # --state before or after the course, as the guide writes it
    if args.command in ("send", "roster") and (not args.course or (args.command == "send" and not args.assignment)):
        parser.error("say the course (and, to send, the assignment): python -m kithub.lti send ad101 ps1_autograd_basics")
    request = {"command": args.command, "course": args.course, "assignment": args.assignment}
    if os.geteuid() != 0:
        if args.command in ("key", "serve"):
            print(f"kithub.lti: {args.command} runs as root (the tool's key is root's alone)", file=sys.stderr)
            return 1
        return service.ask(Path(args.state), request)  # the course's grader: the hub's grade service sends
    try:
        spec = ClassSpec.load(Path(args.state).resolve())
        if args.command == "key":
            key = tool_key(spec, create=True)
            print(json.dumps(public_jwk(key), indent=1) if args.format == "jwk" else public_pem(key), end="\n")
            return 0
        if args.command == "serve":
            return service.serve(spec.root, spec.python, lambda uid, request, say: answer(spec.root, uid, request, say))
        return run(spec, request)
    except (PassbackError, SetupError) as error:
        print(f"kithub.lti: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a file unreadable, the disk full
        print(f"kithub.lti: {error}", file=sys.stderr)
        return 1


sys.exit(main())
