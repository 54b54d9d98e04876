"""The LMS course's roster through LTI Names and Role Provisioning Services (NRPS 2.0).

A launch into the course carries the roster's address (the ``namesroleservice`` claim); the tool
reads it with a client-credentials token, page after page (``Link: <...>; rel="next"``), and maps
each member to the class's account the way a login does (``logins.people``, by the member's email
or, with ``identity_claim: sub``, by their LMS id). What comes out, per course of the class:

* each student of the class who is an active learner of the LMS course, with their LMS id: their
  grades can go back even if they never opened the hub from the LMS;
* the students of the class who are no longer (or never were) in the LMS course: reported, and
  sent nothing (the LMS would refuse a score for someone who is not in the course);
* the LMS course's learners whom the class file does not know: reported, with the line that would
  add them to ``logins.people``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..roster import people_of
from .tool import PassbackError, brief, call, course_record, session

NRPS_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
MEMBERSHIPS_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
MAX_PAGES = 1000  # a platform whose "next" never ends is stopped, not followed for ever


@dataclass
class Roster:
    members: dict[str, str] = field(default_factory=dict)  # account -> LMS id: the class's students in the LMS course
    left: dict[str, str] = field(default_factory=dict)     # account -> why: the class's students not (or no longer) in it
    unknown: list[str] = field(default_factory=list)       # learners of the LMS course who are not its students in the class

    def lines(self) -> list[str]:
        return ([f"{account}: in the LMS course" for account in sorted(self.members)]
                + [f"{account}: {why}" for account, why in sorted(self.left.items())]
                + [f"{identity}: a learner of the LMS course, not a student of the class's course (class.json: "
                   "logins.people maps them to an account, the course's students list it)" for identity in self.unknown])


def fetch_members(spec, url: str) -> list[dict]:
    """Every member the LMS lists at ``url``, following its ``rel="next"`` links."""
    lms, members, pages = session(spec, [NRPS_SCOPE]), [], 0
    while url:
        response = call("get", url, "the course's roster", session=lms, headers={"Accept": MEMBERSHIPS_TYPE})
        if response.status_code != 200:
            raise PassbackError(f"the LMS's roster service answered {response.status_code} ({brief(response)}) for "
                                f"{url}; nothing was sent: run this again when it answers")
        try:
            members += response.json()["members"]
        except (ValueError, KeyError, TypeError):
            raise PassbackError(f"the LMS's roster service answered with no list of members ({url})") from None
        pages += 1
        url = response.links.get("next", {}).get("url") if pages < MAX_PAGES else None
    return members


def read_roster(spec, course_id: str) -> Roster | None:
    """The course's roster as the LMS has it now (kept in the course's record); None if no launch has
    carried the roster service's address yet."""
    course = spec.course(course_id)
    with course_record(spec, course_id) as record:
        url = record.get("memberships")
    if not url:
        return None
    claim = ((spec.logins or {}).get("lti13") or {}).get("identity_claim", "email")
    people = people_of(spec)
    roster, active = Roster(), {}
    for member in fetch_members(spec, url):
        identity = member.get("user_id") if claim == "sub" else member.get(claim)
        account = people.get(str(identity or "").lower())
        if not any(str(role).startswith(LEARNER) for role in member.get("roles", [])):
            continue
        if member.get("status", "Active") != "Active":
            if account in course.students:
                roster.left[account] = f"no longer in the LMS course (the LMS says {member.get('status')})"
        elif account in course.students:
            active[account] = member.get("user_id")
        elif account is None:
            roster.unknown.append(str(identity or member.get("user_id")))
        else:
            roster.unknown.append(f"{identity} (the class's {account}, not a student of {course_id})")
    roster.members = {account: lms_id for account, lms_id in active.items() if lms_id}
    for student in course.students:
        if student not in roster.members and student not in roster.left:
            roster.left[student] = "not in the LMS course's roster"
    with course_record(spec, course_id) as record:
        record["members"] = roster.members
    return roster
