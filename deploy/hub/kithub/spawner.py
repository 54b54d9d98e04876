"""The spawner of the students' servers (``jupyterhub_config.py``): JupyterHub's LocalProcessSpawner,
with a port of its own for each server (``runtime.PortsGiven``) and a start that is over only once
the server on that port answers as this student's.

JupyterHub takes any answer below 500 on a server's port as the server being up (``jupyterhub/utils.py``
``wait_for_http_server``: "Any non-5XX response code will do, even 404"), and the proxy then sends the
student to whatever answered. A port is free only until something binds it: if anything else took it
between the moment it was given and the moment the student's server bound it (a classmate's server
starting at the same moment, any process of the machine), the student's server exits (a single-user
server never moves to another port) and the student would be sent to the other one, with their
requests and cookies: a classmate who keeps a server of their own listening on many ports gets them.
Here the start waits until the socket listening on the port is the student's account's (the kernel's
table of sockets says whose each one is) and their server answers at their own address; when the
server has exited (its port taken, or any failure at start, such as a hub too busy to answer it) or
anything else holds the port, it starts again on another port, with the same token from the hub.
"""
from __future__ import annotations

import asyncio
import json
import pwd
import time

from jupyterhub.spawner import LocalProcessSpawner
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from .runtime import PortsGiven, accounts_named, listening_accounts

#: how many ports a server is started on before its start fails
PORTS_TRIED = 3
#: how often the start asks the server whether it is up
ASKED_EVERY_S = 0.5


class OwnPortSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose servers each have a port no other server of the hub was given, and
    whose start returns once the server on it is the student's own (or the hub's wait decides)."""

    ports = PortsGiven()  # one per hub: every server that is starting or running

    async def start(self):
        token = self.api_token  # the hub's token for this start: LocalProcessSpawner's poll() and stop()
        for _ in range(PORTS_TRIED):  # clear it when a server exits, and a server without it cannot start
            self.api_token = token
            self.port = self.ports.give(self.user.name)
            ip, port = await super().start()
            problem = await self.own_server_problem(ip, port)
            if problem is None:
                return ip, port
            self.log.warning("%s: the server on port %s %s; starting it on another port", self.user.name, port, problem)
            await super().stop(now=True)
        self.ports.take_back(self.user.name)
        raise RuntimeError(f"{self.user.name}'s server could not start on any of {PORTS_TRIED} ports (see the hub's log)")

    async def stop(self, now=False):
        await super().stop(now=now)
        self.ports.take_back(self.user.name)

    async def own_server_problem(self, ip: str, port: int) -> str | None:
        """None once the server answers at the student's own address on ``port`` (or when
        ``http_timeout`` has passed: then JupyterHub's own wait decides, as for any slow server);
        otherwise what is wrong: the server exited, another account listens on the port, or something
        else answers at the student's address."""
        url = f"http://{ip}:{port}{self.server.base_url}api"
        client = AsyncHTTPClient()
        own_uid = pwd.getpwnam(self.user.name).pw_uid
        deadline = time.monotonic() + self.http_timeout
        while time.monotonic() < deadline:
            status = await self.poll()
            if status is not None:
                return f"exited (status {status}; its log above says why)"
            others = listening_accounts(port) - {own_uid}
            if others:
                return f"is held by another account ({accounts_named(others)})"
            try:
                response = await client.fetch(url, request_timeout=10, follow_redirects=False)
            except HTTPClientError as error:
                if error.code != 599:  # 599: no answer yet
                    return f"is not this student's: {url} answered {error.code}"
            except OSError:  # connection refused: not listening yet
                pass
            else:
                if listening_accounts(port) == {own_uid}:  # the socket that answered is the student's
                    try:
                        return None if "version" in json.loads(response.body) else f"is not a Jupyter server ({url})"
                    except ValueError:
                        return f"is not a Jupyter server ({url} answered {response.code} with no JSON)"
            await asyncio.sleep(ASKED_EVERY_S)
        return None

