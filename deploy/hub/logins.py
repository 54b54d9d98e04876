"""University logins for a class on the hub: LTI 1.3 launches from Canvas or Moodle, or OpenID Connect.

``jupyterhub_config.py`` calls ``configure(c, spec, groups)``. Which login, and with what, is the
``logins`` entry of the class file (``class.json``); without one the class logs in with the
machine's passwords (PAM), as the demo does::

    "logins": {
      "method": "lti13",                               # "pam" (the default), "lti13" or "oidc"
      "people": {"alice@uni.example": "alice", ...},   # who the LMS / the university says -> the class's account
      "lti13": {"issuer": "https://canvas.instructure.com", "client_id": "10000000000042",
                "authorize_url": ".../api/lti/authorize_redirect", "jwks_endpoint": ".../api/lti/security/jwks",
                "token_url": ".../login/oauth2/token",
                "courses": {"<the LMS course's context id>": "ad101"}},
      "oidc": {"authorize_url": ..., "token_url": ..., "userdata_url": ..., "client_id": ..., "client_secret": ...}
    }

The class file stays the roster: a person logs in only as the account it names for them, and is
in the course groups it gives them (``nbgrader-<course>`` as a student, ``formgrade-<course>`` as an
instructor), whatever the LMS or the university says besides. A launch whose LMS role disagrees with
the class file (a student of the class file launching as the LMS's instructor) is refused, so the
LMS can take nobody further than the class file lets them go. Each refusal is a page with one
sentence saying why.

The authenticators are the field's: ``ltiauthenticator``'s ``LTI13Authenticator`` (it checks the
id_token's signature with the platform's JWKS, its issuer, audience, expiry and nonce) and
``oauthenticator``'s ``GenericOAuthenticator``; this module only maps who they say to the roster.
"""
from __future__ import annotations

from pathlib import Path

from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado.web import HTTPError
from traitlets import Dict

import lti_tool

CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: the LMS's course roles that make someone the course's instructor (teaching assistants and graders too)
INSTRUCTOR_ROLES = (f"{MEMBERSHIP}#Instructor", f"{MEMBERSHIP}/Instructor#", f"{MEMBERSHIP}#Administrator")
LEARNER_ROLES = (f"{MEMBERSHIP}#Learner", f"{MEMBERSHIP}/Learner#")
METHODS = ("pam", "lti13", "oidc")


def refused(message: str) -> HTTPError:
    """A login the class does not let in: JupyterHub's error page shows ``message`` as it is."""
    return HTTPError(403, message)


class Roster:
    """Who the class file says each person is: their account, their courses, their role in each."""

    def __init__(self, spec):
        self.spec = spec
        self.people = lti_tool.people_of(spec)

    def account(self, identity: str | None) -> str:
        account = self.people.get((identity or "").lower())
        if account is None:
            raise refused(f"You signed in as {identity or 'someone without a name'}, who is not on the roster of any "
                          "course on this hub. If you take one of its courses, ask your instructor to add you.")
        return account

    def role(self, account: str, course_id: str) -> str | None:
        course = self.spec.course(course_id)
        return "instructor" if account in course.instructors else "student" if account in course.students else None

    def groups(self, account: str) -> list[str]:
        """The hub groups of ``account``: what nbgrader and the grader services' roles read."""
        return sorted([f"formgrade-{c.course_id}" for c in self.spec.courses if account in c.instructors]
                      + [f"nbgrader-{c.course_id}" for c in self.spec.courses if account in c.students])


def lms_role(roles: list[str]) -> str | None:
    if any(role.startswith(INSTRUCTOR_ROLES) for role in roles):
        return "instructor"
    if any(role.startswith(LEARNER_ROLES) for role in roles):
        return "student"
    return None


def configure(c, spec, groups: dict, services: list | None = None) -> str:
    """The hub's authenticator for ``spec``'s ``logins`` (PAM without one); returns the method. With LTI
    1.3, the grade service (``lti_service.py``, run as root by the hub) is added to ``services``."""
    logins = spec.logins or {}
    method = logins.get("method", "pam")
    if method not in METHODS:
        raise ValueError(f"class.json: logins.method is {method!r}; it must be one of {', '.join(METHODS)}")
    c.Authenticator.allowed_users = set(spec.people())
    if method == "pam":
        c.JupyterHub.authenticator_class = "pam"
        c.PAMAuthenticator.open_sessions = False
        c.JupyterHub.load_groups = groups
        return method
    # Each login sets the person's groups from the roster (JupyterHub's managed groups), so a change of
    # the class file's roster takes effect at their next login.
    c.Authenticator.manage_groups = True
    settings = logins.get(method) or {}
    missing = [key for key in REQUIRED[method] if not settings.get(key)]
    if missing:
        raise ValueError(f"class.json: logins.{method} lacks {', '.join(missing)}")
    if method == "lti13":
        _configure_lti13(c, spec, settings)
        if services is not None:
            services.append(grade_service(spec))
    else:
        _configure_oidc(c, spec, settings)
    return method


REQUIRED = {"lti13": ("issuer", "client_id", "authorize_url", "jwks_endpoint", "courses"),
            "oidc": ("authorize_url", "token_url", "userdata_url", "client_id", "client_secret")}


# ---- LTI 1.3 ---------------------------------------------------------------------------------------

class RefusalSaidCallbackHandler(LTI13CallbackHandler):
    """ltiauthenticator's checks of the launch (signature, issuer, audience, expiry, state, nonce),
    each refusal said in one sentence a student can act on."""

    def decode_and_validate_launch_request(self):
        try:
            return super().decode_and_validate_launch_request()
        except (HTTPError, ValidationError) as error:
            reason = error.log_message if isinstance(error, HTTPError) else str(error)
            raise refused(f"The launch from the LMS was refused ({reason}). Open the hub again from your "
                          "course's page in the LMS.") from None


class KitLTI13Authenticator(LTI13Authenticator):
    """A launch from the LMS logs in the class file's account of the person, in its course groups."""

    callback_handler = RefusalSaidCallbackHandler
    spec = None                                  # the class (configure sets it)
    courses = Dict(config=True, help="The LMS's course (its context id) -> the class's course id.")

    async def authenticate(self, handler, data=None):
        claims = data or {}
        roster = Roster(self.spec)
        identity = self.get_username(claims)
        account = roster.account(identity)
        context = claims.get(CONTEXT_CLAIM) or {}
        course_id = self.courses.get(str(context.get("id")))
        if course_id is None:
            raise refused(f"This hub serves no course for the LMS's course {context.get('title')!r} (context id "
                          f"{context.get('id')!r}; the hub's administrator maps it in class.json).")
        said, listed = lms_role(claims.get(ROLES_CLAIM, [])), roster.role(account, course_id)
        if listed is None:
            raise refused(f"You ({identity}) are not on the roster of {course_id} on this hub; ask your instructor to add you.")
        if said != listed:
            raise refused(f"The LMS launched you ({identity}) into {course_id} as {said or 'neither student nor instructor'}, "
                          f"but the class lists you as {listed}; ask the hub's administrator to make them agree.")
        lti_tool.record_launch(self.spec, course_id, account, claims)
        return {"name": account, "groups": roster.groups(account)}


def _configure_lti13(c, spec, settings: dict) -> None:
    KitLTI13Authenticator.spec = spec
    c.JupyterHub.authenticator_class = KitLTI13Authenticator
    lti = c.KitLTI13Authenticator
    lti.courses = {str(context): course for context, course in settings["courses"].items()}
    lti.issuer = settings["issuer"]
    lti.client_id = {settings["client_id"]}
    lti.authorize_url = settings["authorize_url"]
    lti.jwks_endpoint = settings["jwks_endpoint"]
    lti.username_key = settings.get("identity_claim", "email")
    lti.tool_name = settings.get("tool_name", "Autograd kit")
    lti.tool_description = "The course's notebooks and assignments on JupyterHub"


def grade_service(spec) -> dict:
    """The hub's grade service: root's (no ``user``), so that the tool's key stays root's alone while
    each course's grader sends its course's grades (lti_service.py says why)."""
    return {"name": "lti-grades", "command": [str(spec.python), str(Path(__file__).resolve().parent / "lti_grades.py"),
                                              "serve", "--state", str(spec.root)],
            "environment": {"PATH": spec.path()}}  # nbgrader's gradebook runs alembic from it


# ---- OpenID Connect --------------------------------------------------------------------------------

def _configure_oidc(c, spec, settings: dict) -> None:
    roster = Roster(spec)
    claim = settings.get("identity_claim", "email")

    def account_of(user_info: dict) -> str:
        return roster.account(user_info.get(claim))

    c.JupyterHub.authenticator_class = "generic-oauth"
    oidc = c.GenericOAuthenticator
    oidc.login_service = settings.get("login_service", "your university")
    for key in ("authorize_url", "token_url", "userdata_url", "client_id", "client_secret"):
        setattr(oidc, key, settings[key])
    oidc.oauth_callback_url = settings.get("callback_url", f"{spec.url}/hub/oauth_callback")
    oidc.scope = ["openid", "email", "profile"]
    oidc.manage_groups = True
    oidc.username_claim = account_of  # not on the roster: refused with a sentence saying so
    oidc.auth_state_groups_key = lambda auth_state: roster.groups(account_of(auth_state["oauth_user"]))
