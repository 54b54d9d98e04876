"""Who the class file says each person is: the account of whoever the LMS or the university names, their
courses and their role in each. A login (``logins/``, ``lti/``) lets in only whom the roster knows, as it
says, whatever the LMS or the university says besides."""
from __future__ import annotations

from tornado.web import HTTPError


def people_of(spec) -> dict[str, str]:
    """``logins.people``: who the LMS or the university says a person is (lower case) -> the class's account."""
    return {identity.lower(): account for identity, account in (spec.logins or {}).get("people", {}).items()}


def refused(message: str) -> HTTPError:
    """A login the class does not let in: JupyterHub's error page shows ``message`` as it is."""
    return HTTPError(403, message)


class Roster:
    """Who the class file says each person is: their account, their courses, their role in each."""

    def __init__(self, spec):
        self.spec = spec
        self.people = people_of(spec)

    def account(self, identity: str | None) -> str:
        account = self.people.get((identity or "").lower())
        if account is None:
            raise refused(f"You signed in as {identity or 'someone without a name'}, who is not on the roster of any "
                          "course on this hub. If you take one of its courses, ask your instructor to add you.")
        return account

    def role(self, account: str, course_id: str) -> str | None:
        """``instructor`` for whoever grades the course (its instructors and teaching assistants: an LMS
        launches both as its Instructor role), ``student``, or None."""
        course = self.spec.course(course_id)
        return "instructor" if account in course.formgraders() else "student" if account in course.students else None

    def groups(self, account: str) -> list[str]:
        """The hub groups of ``account``: what nbgrader and the grader services' roles read."""
        return sorted([f"formgrade-{c.course_id}" for c in self.spec.courses if account in c.formgraders()]
                      + [f"nbgrader-{c.course_id}" for c in self.spec.courses if account in c.students])
