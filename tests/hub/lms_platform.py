"""A small LMS for the login tests, on 127.0.0.1 (as ``localhost``): an LTI 1.3 platform and an OpenID provider.

It plays what Canvas or Moodle (and a university's sign-in) do towards the hub, no more:

* **LTI 1.3 launch** (IMS Security Framework 1.0, "third-party initiated login"): the course page
  ``/course/<context>/launch?user=<email>`` sends the browser to the tool's login initiation URL
  (an auto-submitting form, as Canvas does); the tool sends it back to ``/lti/authorize``, which
  answers with another auto-submitting form carrying the ``id_token`` to the tool's callback. The
  id_token is an RS256 JWT signed with the platform's own key, published at ``/lti/jwks``.
* **LTI Assignment and Grade Services**: ``/lti/token`` grants a bearer token to a client that signs
  its request with the tool's registered key (RFC 7523 ``private_key_jwt``, each assertion's ``jti``
  once); ``/ags/<context>/lineitems`` lists and makes line items; ``.../lineitems/<n>/scores`` records
  scores, in ``platform.scores`` (a score for someone not in the course is refused, 422, as Canvas does).
* **Names and Role Provisioning Services**: ``/nrps/<context>/memberships`` lists the course's members
  (``platform.roles``, with ``platform.status`` for those made Inactive), ``page_size`` a page, the
  next page named by a ``Link: <...>; rel="next"`` header as NRPS 2.0 says.
* **OpenID Connect** (authorization code flow): ``/oidc/authorize`` shows a sign-in form (the user
  types their email and presses Sign in), ``/oidc/token`` exchanges the code, ``/oidc/userinfo``
  says who the token belongs to.

What a misbehaving or attacking platform sends, a launch asks for with ``&tamper=``:
``foreign-key`` (signed with another RSA key under the platform's key id), ``expired`` (issued and
expired two hours ago), ``wrong-audience`` (issued for another tool), ``replay`` (the person's
previous id_token again, whose nonce belongs to an earlier login), ``as-instructor`` (the LMS gives the
person the course's instructor role, whatever their role is). A service the test makes fail:
``platform.down`` holds ``"nrps"`` or ``"scores"`` (answered 503), ``platform.refuse_scores`` LMS ids
whose scores are refused (422).

Nothing here comes from the hub's code (``deploy/hub/lti_*.py``): the platform signs, verifies and
publishes keys with PyJWT directly, so that a mistake in the tool's JWT or JWK code is one the
platform does not share.
"""
from __future__ import annotations

import base64
import html
import json
import re
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

LTI = "https://purl.imsglobal.org/spec/lti/claim"
AGS = "https://purl.imsglobal.org/spec/lti-ags"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
ROLES = {"Learner": f"{MEMBERSHIP}#Learner", "Instructor": f"{MEMBERSHIP}#Instructor"}
KID = "platform-key-1"


class Platform:
    """The LMS: its people (email -> sub, name), course roles, the registered tool, what it recorded."""

    def __init__(self, port: int, tool_login_url: str = "", client_id: str = "kit-hub-tool"):
        # listening on 127.0.0.1, named "localhost": another site than the hub's 127.0.0.1, as an LMS is
        # (the browser then treats the launch's posts as cross-site, with what that means for cookies)
        self.url = f"http://localhost:{port}"
        self.port = port
        self.client_id = client_id
        self.deployment_id = "deployment-1"
        self.tool_login_url = tool_login_url
        self.tool_redirect_uris: set[str] = set()
        self.tool_public_key = None          # the tool's registered key (its JWK), for grade services
        self.oidc_client = ("kit-hub-oidc", secrets.token_urlsafe(16))
        self.oidc_redirect_uri = ""
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.foreign_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.people: dict[str, dict] = {}    # email -> {"sub", "name"}
        self.roles: dict[tuple[str, str], str] = {}  # (email, context) -> "Learner" / "Instructor"
        self.status: dict[tuple[str, str], str] = {}  # (email, context) -> "Inactive": in the course no longer
        self.page_size = 2                   # members a page of the roster: small, so that paging is exercised
        self.roster_pages: list[str] = []    # the roster pages asked for, in order
        self.down: set[str] = set()          # "nrps", "scores": answered 503 Service Unavailable
        self.refuse_scores: set[str] = set()  # LMS ids whose scores are refused
        self.assertions: set[str] = set()    # jti of every client assertion accepted (each once)
        self.issued: dict[str, str] = {}     # email -> their last id_token
        self.posted: dict[str, tuple[str, dict]] = {}  # email -> (tool's callback, the form it last posted there)
        self.codes: dict[str, str] = {}      # OIDC code -> email
        self.access: dict[str, dict] = {}    # bearer token -> {"email"} (OIDC) or {"scopes"} (AGS)
        self.lineitems: dict[str, list[dict]] = {}   # context -> line items
        self.scores: dict[str, list[dict]] = {}      # line item id -> scores posted
        self.refusals: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def add(self, email: str, name: str, **roles: str) -> None:
        """A person of the LMS with a role per course (``ad101_lms="Learner"``)."""
        self.people[email] = {"sub": f"lms-user-{secrets.token_hex(4)}", "name": name}
        for context, role in roles.items():
            self.roles[(email, context)] = role

    def start(self) -> "Platform":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def register_tool(self, hub_url: str) -> None:
        """The hub at ``hub_url`` registered as the LMS's tool: where a launch starts and where it may end."""
        self.tool_login_url = f"{hub_url}/hub/lti13/oauth_login"
        self.tool_redirect_uris = {f"{hub_url}/hub/lti13/oauth_callback"}

    def lti13_settings(self) -> dict[str, str]:
        """What the LMS tells the hub's administrator: class.json's ``logins.lti13`` addresses and client id."""
        return {"issuer": self.url, "client_id": self.client_id, "authorize_url": f"{self.url}/lti/authorize",
                "jwks_endpoint": f"{self.url}/lti/jwks", "token_url": f"{self.url}/lti/token"}

    def launch_url(self, context: str, email: str, tamper: str = "", target: str = "") -> str:
        query = {"user": email, "tamper": tamper, "target": target}
        return f"{self.url}/course/{context}/launch?" + urlencode({k: v for k, v in query.items() if v})

    # ---- LTI 1.3 -----------------------------------------------------------------------------------
    def jwks(self) -> dict:
        return {"keys": [{**RSAAlgorithm.to_jwk(self.key.public_key(), as_dict=True), "kid": KID, "alg": "RS256",
                          "use": "sig"}]}

    def id_token(self, email: str, context: str, nonce: str, tamper: str, target: str) -> str:
        if tamper == "replay" and email in self.issued:
            return self.issued[email]
        person, now = self.people[email], int(time.time())
        issued_at = now - 7200 if tamper == "expired" else now
        claims = {
            "iss": self.url, "aud": "another-tool" if tamper == "wrong-audience" else self.client_id,
            "sub": person["sub"], "iat": issued_at, "exp": issued_at + 600, "nonce": nonce,
            "email": email, "name": person["name"],
            f"{LTI}/message_type": "LtiResourceLinkRequest", f"{LTI}/version": "1.3.0",
            f"{LTI}/deployment_id": self.deployment_id, f"{LTI}/target_link_uri": target,
            f"{LTI}/resource_link": {"id": f"{context}-hub-link", "title": "JupyterHub"},
            f"{LTI}/roles": ([ROLES["Instructor"]] if tamper == "as-instructor" else
                             [ROLES[self.roles[(email, context)]]] if (email, context) in self.roles else []),
            f"{LTI}/context": {"id": context, "label": context.upper(), "title": f"Course {context}"},
            f"{AGS}/claim/endpoint": {"lineitems": f"{self.url}/ags/{context}/lineitems",
                                      "scope": [f"{AGS}/scope/lineitem", f"{AGS}/scope/score"]},
            f"{NRPS}/claim/namesroleservice": {"context_memberships_url": f"{self.url}/nrps/{context}/memberships",
                                               "service_versions": ["2.0"]},
        }
        token = self.sign(claims, self.foreign_key if tamper == "foreign-key" else self.key)
        self.issued[email] = token
        return token

    def sign(self, claims: dict, key=None) -> str:
        """A JWT of the platform: RS256, its key id (the key, ``foreign_key`` for a forgery, or its own)."""
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": KID})

    def members(self, context: str) -> list[dict]:
        """The course's memberships as NRPS 2.0 gives them."""
        return [{"user_id": self.people[email]["sub"], "email": email, "name": self.people[email]["name"],
                 "roles": [ROLES[role]], "status": self.status.get((email, ctx), "Active")}
                for (email, ctx), role in self.roles.items() if ctx == context]

    def grant(self, form: dict) -> dict | None:
        """Client credentials for the tool: its assertion must verify with its registered key."""
        try:
            public = RSAAlgorithm.from_jwk(json.dumps(self.tool_public_key))
            claims = jwt.decode(form.get("client_assertion", ""), public, algorithms=["RS256"],
                                audience=f"{self.url}/lti/token", issuer=self.client_id)
        except (jwt.PyJWTError, TypeError, ValueError) as error:
            self.refusals.append(f"token: {error}")
            return None
        if claims.get("sub") != self.client_id or form.get("grant_type") != "client_credentials" \
                or not claims.get("jti") or claims["jti"] in self.assertions:
            self.refusals.append("token: not a client-credentials grant, or an assertion used before")
            return None
        self.assertions.add(claims["jti"])
        token = secrets.token_urlsafe(24)
        self.access[token] = {"scopes": form.get("scope", "").split()}
        return {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": form.get("scope", "")}


def _auto_submit(action: str, fields: dict) -> str:
    """The page Canvas and Moodle answer with: a form that posts itself on load."""
    inputs = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(str(v))}">'
                     for k, v in fields.items() if v is not None)
    return (f'<!doctype html><html><body onload="document.forms[0].submit()"><form method="post" '
            f'action="{html.escape(action)}">{inputs}<noscript><button>Continue</button></noscript></form></body></html>')


_FORM = re.compile(r'<form method="post" action="([^"]*)">(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]*)" value="([^"]*)">')


def follow_launch(session, url: str, timeout: float = 60):
    """What a student's browser does with the course's link, without a browser: ``session`` (a
    ``requests.Session``) opens ``url`` and posts each form that posts itself on load (the LMS's), following
    the tool's redirects; returns the last response (the hub's, once the launch is over)."""
    response = session.get(url, timeout=timeout)
    while 'onload="document.forms[0].submit()"' in response.text:
        action, inputs = _FORM.search(response.text).groups()
        fields = {html.unescape(name): html.unescape(value) for name, value in _HIDDEN.findall(inputs)}
        response = session.post(html.unescape(action), data=fields, timeout=timeout)
    return response


def _handler_for(platform: Platform):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        # ---- plumbing ----
        def _send(self, status: int, body: str | dict | list, content_type: str = "text/html; charset=utf-8",
                  headers: dict | None = None) -> None:
            data = (json.dumps(body) if isinstance(body, (dict, list)) else body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if isinstance(body, (dict, list)) else content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _form(self) -> dict:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode()
            self._raw = raw
            return {k: v[0] for k, v in parse_qs(raw).items()}

        def _query(self) -> dict:
            return {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}

        def _bearer(self) -> dict | None:
            auth = self.headers.get("Authorization", "")
            return platform.access.get(auth[7:]) if auth.startswith("Bearer ") else None

        def do_GET(self):
            path = urlparse(self.path).path
            query = self._query()
            if path == "/lti/jwks":
                return self._send(200, platform.jwks())
            if path.startswith("/course/") and path.endswith("/launch"):
                return self._launch(path.split("/")[2], query)
            if path == "/lti/authorize":
                return self._authorize(query)
            if path == "/oidc/authorize":
                return self._oidc_sign_in_page(query)
            if path == "/oidc/userinfo":
                who = self._bearer()
                if not who or "email" not in who:
                    return self._send(401, {"error": "invalid_token"})
                person = platform.people[who["email"]]
                return self._send(200, {"sub": person["sub"], "email": who["email"], "name": person["name"]})
            if path.startswith("/ags/") and path.endswith("/lineitems"):
                return self._lineitems(path.split("/")[2], None)
            if path.startswith("/nrps/") and path.endswith("/memberships"):
                return self._memberships(path.split("/")[2], int(query.get("page", "1")))
            return self._send(404, "not found")

        def do_POST(self):
            path = urlparse(self.path).path
            form = self._form() if not path.startswith("/ags/") else None
            if path == "/lti/token":
                granted = platform.grant(form)
                return self._send(200, granted) if granted else self._send(401, {"error": "invalid_client"})
            if path == "/oidc/authorize":
                return self._oidc_signed_in(form)
            if path == "/oidc/token":
                return self._oidc_token(form)
            if path.startswith("/ags/"):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                parts = path.strip("/").split("/")  # ags/<context>/lineitems[/<n>/scores]
                if len(parts) == 3:
                    return self._lineitems(parts[1], body)
                if len(parts) == 5 and parts[4] == "scores":
                    return self._score(f"{platform.url}/ags/{parts[1]}/lineitems/{parts[3]}", body)
            return self._send(404, "not found")

        # ---- LTI 1.3 launch ----
        def _launch(self, context: str, query: dict):
            """The course's link to the tool: third-party initiated login (Security Framework 5.1.1)."""
            hint = json.dumps({"context": context, "tamper": query.get("tamper", ""), "target": query.get("target", "")})
            target = query.get("target") or platform.tool_login_url.rsplit("/lti13/", 1)[0]
            return self._send(200, _auto_submit(platform.tool_login_url, {
                "iss": platform.url, "login_hint": query["user"], "target_link_uri": target,
                "lti_message_hint": hint, "client_id": platform.client_id,
                "lti_deployment_id": platform.deployment_id}))

        def _authorize(self, query: dict):
            """The authentication request of the tool (5.1.1.2): answered with the id_token, posted back."""
            problems = [f"{name} is {query.get(name)!r}" for name, want in
                        (("client_id", platform.client_id), ("response_type", "id_token"), ("scope", "openid"),
                         ("response_mode", "form_post"), ("prompt", "none")) if query.get(name) != want]
            if query.get("redirect_uri") not in platform.tool_redirect_uris:
                problems.append(f"redirect_uri {query.get('redirect_uri')!r} is not the tool's")
            if not query.get("nonce") or not query.get("state"):
                problems.append("no nonce or state")
            if query.get("login_hint") not in platform.people:
                problems.append("the login_hint is nobody of this LMS")
            if problems:
                platform.refusals.append("; ".join(problems))
                return self._send(400, "the LMS refuses this authentication request: " + "; ".join(problems))
            hint = json.loads(query.get("lti_message_hint") or "{}")
            token = platform.id_token(query["login_hint"], hint.get("context", ""), query["nonce"], hint.get("tamper", ""),
                                      hint.get("target", ""))
            platform.posted[query["login_hint"]] = (query["redirect_uri"], {"id_token": token, "state": query["state"]})
            return self._send(200, _auto_submit(*platform.posted[query["login_hint"]]))

        # ---- LTI Names and Role Provisioning Services ----
        def _memberships(self, context: str, page: int):
            who = self._bearer()
            if not who or f"{NRPS}/scope/contextmembership.readonly" not in who.get("scopes", []):
                return self._send(401, {"error": "the contextmembership.readonly scope is needed"})
            if "nrps" in platform.down:
                return self._send(503, "Service Unavailable", "text/plain")
            if self.headers.get("Accept") != "application/vnd.ims.lti-nrps.v2.membershipcontainer+json":
                return self._send(406, {"error": "a roster is application/vnd.ims.lti-nrps.v2.membershipcontainer+json"})
            platform.roster_pages.append(f"{context} page {page}")
            members, size = platform.members(context), platform.page_size
            url = f"{platform.url}/nrps/{context}/memberships"
            headers = {"Link": f'<{url}?page={page + 1}>; rel="next"'} if page * size < len(members) else {}
            return self._send(200, {"id": url, "context": {"id": context, "title": f"Course {context}"},
                                    "members": members[(page - 1) * size:page * size]}, headers=headers)

        # ---- LTI Assignment and Grade Services ----
        def _lineitems(self, context: str, new: dict | None):
            who = self._bearer()
            if not who or f"{AGS}/scope/lineitem" not in who.get("scopes", []):
                return self._send(401, {"error": "the lineitem scope is needed"})
            items = platform.lineitems.setdefault(context, [])
            if new is None:
                return self._send(200, items)
            item = {**new, "id": f"{platform.url}/ags/{context}/lineitems/{len(items) + 1}"}
            items.append(item)
            return self._send(201, item)

        def _score(self, lineitem: str, score: dict):
            who = self._bearer()
            if not who or f"{AGS}/scope/score" not in who.get("scopes", []):
                return self._send(401, {"error": "the score scope is needed"})
            if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                return self._send(415, {"error": "a score is application/vnd.ims.lis.v1.score+json"})
            if "scores" in platform.down:
                return self._send(503, "Service Unavailable", "text/plain")
            context = lineitem.split("/ags/")[1].split("/")[0]
            learners = {m["user_id"] for m in platform.members(context) if m["status"] == "Active"}
            if score.get("userId") in platform.refuse_scores or score.get("userId") not in learners:
                return self._send(422, {"error": f"user {score.get('userId')} is not a student of this course"})
            platform.scores.setdefault(lineitem, []).append(score)
            return self._send(204, "")

        # ---- OpenID Connect ----
        def _oidc_sign_in_page(self, query: dict):
            if query.get("client_id") != platform.oidc_client[0] or query.get("redirect_uri") != platform.oidc_redirect_uri:
                return self._send(400, "unknown client or redirect_uri")
            hidden = "".join(f'<input type="hidden" name="{k}" value="{html.escape(query.get(k, ""))}">'
                             for k in ("state", "redirect_uri", "nonce"))
            return self._send(200, '<!doctype html><html><body><h1>University sign-in</h1><form method="post">'
                                   f'{hidden}<label>Email <input id="email" name="email"></label>'
                                   '<button id="sign-in">Sign in</button></form></body></html>')

        def _oidc_signed_in(self, form: dict):
            if form.get("email") not in platform.people:
                return self._send(200, "<p>No such account at the university.</p>")
            code = secrets.token_urlsafe(16)
            platform.codes[code] = form["email"]
            target = f"{form['redirect_uri']}?" + urlencode({"code": code, "state": form.get("state", "")})
            return self._send(302, "", headers={"Location": target})

        def _oidc_token(self, form: dict):
            auth = self.headers.get("Authorization", "")
            client = (base64.b64decode(auth[6:]).decode().split(":", 1) if auth.startswith("Basic ")
                      else [form.get("client_id"), form.get("client_secret")])
            email = platform.codes.pop(form.get("code", ""), None)
            if list(client) != list(platform.oidc_client) or email is None:
                return self._send(400, {"error": "invalid_grant"})
            token = secrets.token_urlsafe(24)
            platform.access[token] = {"email": email}
            id_token = platform.sign({"iss": platform.url, "aud": platform.oidc_client[0], "email": email,
                                      "sub": platform.people[email]["sub"], "iat": int(time.time()),
                                      "exp": int(time.time()) + 600})
            return self._send(200, {"access_token": token, "token_type": "Bearer", "id_token": id_token, "expires_in": 600})

    return Handler
