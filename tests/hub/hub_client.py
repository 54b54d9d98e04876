"""A student of the class as an HTTP client of the hub, without a browser (the load and guide tests).

``Student`` logs in on the hub's login page (the form, its XSRF cookie, the PAM password), asks
the hub's REST API for a token of its own, starts its server through the API and then uses its
server's Jupyter REST API: the contents of a notebook, a kernel (through its websocket, as
JupyterLab runs a cell), and nbgrader's assignment handlers (fetch, submit, fetch feedback, the
same requests the Assignments panel makes). Every request to the hub or a server is timed into
``Student.timings`` as (what, seconds).
"""
from __future__ import annotations

import json
import time
import uuid

import requests
import websocket


class HubError(AssertionError):
    """The hub or a server answered something a student would see as a failure."""


class Student:
    def __init__(self, hub_url: str, name: str, password: str, cafile: str | None = None):
        self.hub_url, self.name, self.password, self.cafile = hub_url, name, password, cafile
        self.http = requests.Session()
        self.token: str | None = None
        self.timings: list[tuple[str, float]] = []
        self.reconnects = 0  # kernel websockets the server closed and the student opened again

    @property
    def base(self) -> str:
        return f"{self.hub_url}/user/{self.name}"

    def request(self, what: str, method: str, url: str, expect: tuple[int, ...] = (200,), browser: bool = False,
                **kwargs) -> requests.Response:
        """A timed request, with the student's token (``browser``: their login cookie only, as a page)."""
        kwargs.setdefault("timeout", 120)
        kwargs.setdefault("verify", self.cafile or True)  # per request: REQUESTS_CA_BUNDLE would beat the session's
        if self.token and not browser:
            kwargs.setdefault("headers", {})["Authorization"] = f"token {self.token}"
        started = time.monotonic()
        response = self.http.request(method, url, **kwargs)
        self.timings.append((what, time.monotonic() - started))
        if response.status_code not in expect:
            raise HubError(f"{self.name}: {method} {url}: {response.status_code} {response.text[:500]}")
        return response

    # ---- the hub ------------------------------------------------------------------------------
    def log_in(self, password: str | None = None, expect: tuple[int, ...] = (302,)) -> requests.Response:
        """The login form as a browser posts it (JupyterHub 4.1+ wants its XSRF token in the form)."""
        self.request("login page", "GET", f"{self.hub_url}/hub/login")
        xsrf = self.http.cookies.get("_xsrf", path="/hub/")
        return self.request("log in", "POST", f"{self.hub_url}/hub/login", expect=expect, allow_redirects=False,
                            data={"username": self.name, "password": self.password if password is None else password,
                                  "_xsrf": xsrf})

    def get_token(self) -> str:
        """A token of the student's own, asked for with the login cookie (and its XSRF header)."""
        xsrf = self.http.cookies.get("_xsrf", path="/hub/")
        response = self.request("new token", "POST", f"{self.hub_url}/hub/api/users/{self.name}/tokens", expect=(200, 201),
                                headers={"X-XSRFToken": xsrf}, json={"note": "test client", "expires_in": 3600})
        self.token = response.json()["token"]
        return self.token

    def start_server(self, timeout: float = 180) -> float:
        """Start the student's server through the hub's API; the seconds until it is ready."""
        started = time.monotonic()
        self.request("start server", "POST", f"{self.hub_url}/hub/api/users/{self.name}/server", expect=(201, 202))
        while time.monotonic() - started < timeout:
            model = self.request("server status", "GET", f"{self.hub_url}/hub/api/users/{self.name}").json()
            server = model.get("servers", {}).get("", {})
            if server.get("ready"):
                return time.monotonic() - started
            if not server.get("pending") and not server.get("ready") and time.monotonic() - started > 5:
                raise HubError(f"{self.name}: the server stopped while starting: {model}")
            time.sleep(1)
        raise HubError(f"{self.name}: the server was not ready after {timeout} s")

    def server_running(self) -> bool:
        model = self.request("server status", "GET", f"{self.hub_url}/hub/api/users/{self.name}").json()
        return bool(model.get("servers", {}).get("", {}).get("ready"))

    # ---- their server -------------------------------------------------------------------------
    def contents(self, path: str, **params) -> dict:
        return self.request("open notebook", "GET", f"{self.base}/api/contents/{path}", params=params).json()

    def save(self, path: str, model: dict) -> dict:
        return self.request("save notebook", "PUT", f"{self.base}/api/contents/{path}", json=model,
                            expect=(200, 201)).json()

    def run_cells(self, path: str, cells: list[str], timeout: float = 120) -> list[dict]:
        """Open a kernel session for the notebook and run ``cells`` in it, as JupyterLab does (the
        kernel's websocket, one execute_request each); the replies, and the session is closed."""
        session = self.request("start kernel", "POST", f"{self.base}/api/sessions", expect=(201,),
                               json={"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1],
                                     "kernel": {"name": "python3"}}).json()
        kernel = session["kernel"]["id"]
        url = f"{self.base.replace('http', 'ws', 1)}/api/kernels/{kernel}/channels"
        sslopt = {"ca_certs": self.cafile} if self.cafile else {}
        started = time.monotonic()
        replies: list[dict] = []
        socket = None
        try:
            while len(replies) < len(cells):
                try:
                    if socket is None:
                        socket = websocket.create_connection(url, header=[f"Authorization: token {self.token}"],
                                                             timeout=timeout, sslopt=sslopt)
                    replies.append(self._execute(socket, cells[len(replies)]))
                except (websocket.WebSocketConnectionClosedException, ConnectionError) as lost:
                    # the server closed the kernel's websocket (a kernel slow to answer under load):
                    # JupyterLab connects again, and so does the student; the cell is sent again
                    self.reconnects += 1
                    socket = None
                    if self.reconnects > 3 or time.monotonic() - started > timeout:
                        raise HubError(f"{self.name}: the kernel's websocket was lost {self.reconnects} times") from lost
                    time.sleep(1)
        finally:
            if socket is not None:
                socket.close()
            self.timings.append(("run cells", time.monotonic() - started))
            self.request("stop kernel", "DELETE", f"{self.base}/api/sessions/{session['id']}", expect=(204,))
        return replies

    def _execute(self, socket, code: str) -> dict:
        msg_id = uuid.uuid4().hex
        socket.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.name,
                       "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        while True:
            message = json.loads(socket.recv())
            if message.get("parent_header", {}).get("msg_id") == msg_id and message["msg_type"] == "execute_reply":
                return message["content"]

    def nbgrader(self, action: str, course: str, assignment: str, refused: bool = False):
        """nbgrader's Assignments panel: ``fetch``, ``submit`` or ``fetch_feedback``; the list it shows after
        (``refused``: the last line of the refusal the panel shows, which must come)."""
        response = self.request(action, "POST", f"{self.base}/assignments/{action}",
                                data={"course_id": course, "assignment_id": assignment}).json()
        failed = isinstance(response, dict) and response.get("success") is False
        if failed != refused:
            raise HubError(f"{self.name}: {action} {assignment}: {str(response.get('value'))[-800:]}")
        return str(response["value"]).strip().splitlines()[-1] if refused else response

    def assignments(self, course: str) -> list[dict]:
        return self.request("list assignments", "GET", f"{self.base}/assignments", params={"course_id": course}).json()["value"]

    def close(self) -> None:
        self.http.close()
