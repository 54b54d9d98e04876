"""The recipe's command line: ``python -m kithub COMMAND --state DIR`` (as root).

    python -m kithub demo                 # what `make hub` runs: set up, start, print logins
    python -m kithub check --state DIR    # what the machine lacks for a class, with the command for each
    python -m kithub setup --state DIR    # only set up (accounts, courses, releases)
    python -m kithub start --state DIR    # start the hub of a set-up class (foreground)
    python -m kithub dates --state DIR    # apply the due dates and extensions of class.json again
    python -m kithub backup --state DIR --to BACKUPS  # courses, gradebooks, exchange: one archive
    python -m kithub teardown --state DIR # remove the accounts and DIR (the gradebooks kept aside)
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

from . import banner
from .backup import backup_class, teardown
from .dates import apply_dates
from .errors import SetupError
from .hub_process import Hub
from .machine import what_is_lacking
from .set_up import setup
from .spec import CLASS_FILE, DEFAULT_STATE, ClassSpec, demo_class


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kithub", description="A class on one JupyterHub: accounts, courses, "
                                     "the nbgrader exchange, and the hub itself.")
    parser.add_argument("command", choices=["demo", "check", "setup", "start", "dates", "backup", "teardown"])
    parser.add_argument("--state", default=str(DEFAULT_STATE), help=f"the class's folder (default {DEFAULT_STATE})")
    parser.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1 (default 8000)")
    parser.add_argument("--to", help="backup: the folder the archive goes into (root's, mode 700)")
    args = parser.parse_args(argv)
    state = Path(args.state).resolve()
    if args.command == "check":  # reads only: anyone may ask
        lacks = what_is_lacking(state)
        for lack in lacks:
            print(f"missing: {lack.what}\n  fix: {lack.fix}")
        print(f"{len(lacks)} thing(s) missing" if lacks else "nothing the guide needs is missing")
        return 1 if lacks else 0
    try:
        if os.geteuid() != 0:
            raise SetupError("a class on the hub has a system account per person: run this as root (sudo)")
        if args.command == "teardown":
            removed, backup = teardown(state)
            print(f"removed {state}" + (f" and the accounts {', '.join(removed)}" if removed else ""))
            if backup is not None:
                print(f"warning: the class's submissions, grades and feedback are gone; its gradebook(s) are kept "
                      f"in {backup} (restore: copy <course>/gradebook.db back into the course directory)",
                      file=sys.stderr)
            return 0
        if args.command == "backup":
            if not args.to:
                raise SetupError("backup needs --to FOLDER (where the archive goes)")
            print(f"backup: {backup_class(state, Path(args.to).resolve())}")
            return 0
        if args.command == "dates":
            apply_dates(ClassSpec.load(state))
            print(f"due dates and extensions of {state / CLASS_FILE} applied")
            return 0
        if args.command in ("demo", "setup"):
            made = not (state / CLASS_FILE).exists()  # the demo class, where there is no class file yet
            spec = demo_class(state, hub_port=args.port) if made else ClassSpec.load(state)
            setup(spec, demo=True if made else None)
            if args.command == "setup":
                print(banner.text(spec))
                return 0
        spec = ClassSpec.load(state)
        hub = Hub(spec)
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as cleanly as Ctrl-C
        signal.signal(signal.SIGINT, _interrupt)
        hub.start()
        print(banner.text(spec, hub.public_url), flush=True)
        try:
            while hub.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            print("\nstopping the hub and every user server ...")
        finally:
            hub.stop()
        return 0
    except SetupError as error:
        print(f"kithub: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
