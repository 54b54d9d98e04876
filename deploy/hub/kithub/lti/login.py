"""LTI 1.3 launches from the LMS (Canvas, Moodle) log the class's people in: ``ltiauthenticator``'s
``LTI13Authenticator`` checks the launch (the id_token's signature with the platform's JWKS, its issuer,
audience, expiry, state and nonce); this module maps who it names to the roster, in the course the
launch comes from, and says each refusal in a sentence. With it the hub runs its grade service
(``service.py``)."""
from __future__ import annotations

from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado.web import HTTPError
from traitlets import Dict

from ..roster import Roster, refused
from . import tool

REQUIRED = ("issuer", "client_id", "authorize_url", "jwks_endpoint", "courses")
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
MEMBERSHIP = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: the LMS's course roles that make someone the course's instructor (teaching assistants and graders too)
INSTRUCTOR_ROLES = (f"{MEMBERSHIP}#Instructor", f"{MEMBERSHIP}/Instructor#", f"{MEMBERSHIP}#Administrator")
LEARNER_ROLES = (f"{MEMBERSHIP}#Learner", f"{MEMBERSHIP}/Learner#")

def lms_role(roles: list[str]) -> str | None:
    if any(role.startswith(INSTRUCTOR_ROLES) for role in roles):
        return "instructor"
    if any(role.startswith(LEARNER_ROLES) for role in roles):
        return "student"
    return None


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
        tool.record_launch(self.spec, course_id, account, claims)
        return {"name": account, "groups": roster.groups(account)}


def configure(c, spec, settings: dict, groups: dict) -> list[dict]:
    """The LTI 1.3 login, and the grade service beside the hub. Each launch sets the person's groups from
    the roster (JupyterHub's managed groups): a change of the class file's roster takes effect at their
    next login."""
    c.Authenticator.manage_groups = True
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
    return [grade_service(spec)]


def grade_service(spec) -> dict:
    """The hub's grade service: root's (no ``user``), so that the tool's key stays root's alone while
    each course's grader sends its course's grades (``service.py`` says why)."""
    return {"name": "lti-grades", "command": [str(spec.python), "-m", "kithub.lti", "serve", "--state", str(spec.root)],
            "environment": {"PATH": spec.path()}}  # nbgrader's gradebook runs alembic from it
