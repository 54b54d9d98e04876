"""What the hub imports as it runs (``jupyterhub_config.py``): a port for each server, each account's
runtime folder, the lessons given at a server's first start, and the wait for the services' start.
Nothing here sets a class up."""
from __future__ import annotations

import asyncio
import os
import pwd
import ssl
import time
from pathlib import Path
from urllib.parse import urlparse

from grader.hub_exchange.entries import account_of

from .lessons import give_lessons_as
from .spec import ClassSpec


class PortsGiven:
    """A port for each server that is starting or running, no two alike. JupyterHub picks a free
    port for each server when it starts, and two servers started at once could be given the same
    one before either had bound it: the second student's address then led to the first one's server
    (seen with 30 students logging in at once), since the hub takes any answer on the port as the
    server being up."""

    def __init__(self, free_port=None):
        if free_port is None:
            from jupyterhub.utils import random_port as free_port
        self.free_port, self.given = free_port, {}

    def give(self, user: str) -> int:
        taken = {port for name, port in self.given.items() if name != user}
        port = self.free_port()
        while port in taken:
            port = self.free_port()
        self.given[user] = port
        return port

    def take_back(self, user: str) -> None:
        self.given.pop(user, None)


def private_runtime(spec: ClassSpec, account: str) -> Path:
    """The account's runtime folder (``ClassSpec.runtime``), made if missing: its own, mode 700."""
    info = pwd.getpwnam(account)
    (spec.root / "run").mkdir(mode=0o711, exist_ok=True)
    (spec.root / "run").chmod(0o711)  # nobody lists whose folders there are
    folder = spec.runtime(account)
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chown(folder, info.pw_uid, info.pw_gid)
    folder.chmod(0o700)
    return folder


class ServerStarts:
    """The spawner's hook before a server starts: the student's own copy of the lessons (on its first
    start, made by a process of their own account: root never acts in a student's home) and their
    runtime folder (the server's port is the spawner's, ``spawner.py``). The copying (both languages'
    lessons) waits in a thread: in the hub's own loop, thirty students starting at once held the hub
    still long enough for its proxy's and servers' timers to run out."""

    def __init__(self, spec: ClassSpec):
        self.spec = spec

    async def before(self, spawner) -> None:
        failed = await asyncio.to_thread(give_lessons_as, spawner.user.name, self.spec.python, self.spec.lessons_copy)
        if failed:
            spawner.log.warning("%s: %s", spawner.user.name, failed)
        private_runtime(self.spec, spawner.user.name)


#: How long the hub waits for a managed service's first answer when it starts it. A grader service is
#: a JupyterLab: a few seconds on a quiet machine, well past 10 s on a busy one.
SERVICE_START_TIMEOUT = 180.0


def wait_for_services_at_start(timeout: float = SERVICE_START_TIMEOUT) -> None:
    """Run in the hub (jupyterhub_config.py): a managed service's start returns once the service answers
    on its URL, has exited, or ``timeout`` has passed; it fails (and JupyterHub exits) while another
    account than the service's listens on its port, whose answers JupyterHub would take for the
    service's and to which it would then send the instructor (``listening_accounts``).

    JupyterHub gives a managed service 10 s to answer and otherwise exits: in JupyterHub 5.5.4's
    jupyterhub/app.py, ``JupyterHub.start_service`` awaits ``service.start()``, then tries
    ``wait_up(http=True, timeout=1)`` ``tries = 10 if service.managed else 1`` times (lines 3655-3659),
    and ``start`` calls ``self.exit(1)`` when a managed service is not ready (lines 3776-3778). No setting changes it (a configurable
    timeout is jupyterhub/jupyterhub#5138, open). Waiting inside ``Service.start`` leaves JupyterHub's
    own check as it is: it finds the service up at its first try."""
    from jupyterhub.objects import Server
    from jupyterhub.services.service import Service
    from jupyterhub.utils import AnyTimeoutError, make_ssl_context

    if getattr(Service.start, "waits_for_the_first_answer", False):
        return
    start = Service.start

    async def start_and_wait(self):
        await start(self)
        if not self.url:
            return
        app = self.app  # the same TLS as JupyterHub's own check (internal_ssl, if the site turns it on)
        context = make_ssl_context(app.internal_ssl_key, app.internal_ssl_cert, cafile=app.internal_ssl_ca,
                                   purpose=ssl.Purpose.CLIENT_AUTH)
        deadline = time.monotonic() + timeout
        own_uid, port = pwd.getpwnam(self.user).pw_uid, urlparse(self.url).port
        while time.monotonic() < deadline and await self.spawner.poll() is None:
            others = listening_accounts(port) - {own_uid}
            if others:  # then any answer on the port would be taken for the service's: the hub stops here
                raise RuntimeError(f"service {self.name}: port {port} is held by another account ({accounts_named(others)})")
            try:
                await Server.from_orm(self.orm.server).wait_up(http=True, timeout=2, ssl_context=context)
                return
            except AnyTimeoutError:
                continue

    start_and_wait.waits_for_the_first_answer = True
    Service.start = start_and_wait


def listening_accounts(port: int) -> set[int]:
    """The uids of the sockets listening on TCP ``port`` (any address, IPv4 or IPv6), as the kernel
    lists them in /proc/net/tcp and tcp6 (state 0A: listening; the owner's uid, column 8)."""
    uids = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 7 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                uids.add(int(fields[7]))
    return uids


def accounts_named(uids: set[int]) -> str:
    """``uids`` as the accounts' names (the number where an account has none)."""
    return ", ".join(sorted(map(account_of, uids)))
