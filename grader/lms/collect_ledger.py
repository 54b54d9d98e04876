"""What each ``collect --from`` took, per student, kept in ``.kitgrade/collected/<assignment>.json``.

It is how a later collect knows whether the notebook in ``submitted/`` is older than the one it
brings (by the LMS's time or upload number, and only from the same origin), and how a collect
killed halfway is resumed: what is being written is marked pending first.
"""

from __future__ import annotations

import hashlib
import json
from ..course import KIT_DIR, Course


def _well_formed(record) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("origin"), str)
            and isinstance(record.get("timestamp"), str) and isinstance(record.get("attempt"), (int, type(None)))
            and isinstance(record.get("files"), dict))


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items()) if name.endswith(".ipynb")}


class CollectLedger:
    """What each ``collect --from`` took, per student: origin, time, attempt, notebooks' digests;
    ``pending`` while nbgrader writes it (a killed collect leaves it pending)."""

    def __init__(self, course: Course, assignment: str):
        self.course, self.assignment = course, assignment
        self.path = course.path(KIT_DIR, "collected", f"{assignment}.json")
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}
        except (OSError, ValueError):
            entries = {}
        # a record edited by hand or cut short is forgotten: the student is then judged by submitted/ alone
        self.entries = {student: {kind: record for kind, record in entry.items() if _well_formed(record)}
                        for student, entry in (entries.items() if isinstance(entries, dict) else ())
                        if isinstance(entry, dict)}

    @staticmethod
    def record(submission) -> dict:
        """What is kept of a ``download_plan.Submission``."""
        return {"origin": submission.origin, "timestamp": submission.timestamp, "attempt": submission.attempt,
                "files": _digests(submission.files)}

    def _in_submitted(self, student: str) -> tuple[dict[str, str], str]:
        folder = self.course.path("submitted", student, self.assignment)
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}
        stamp = files.pop("timestamp.txt", b"").decode("utf-8", "replace").strip()[:19]
        return _digests(files), stamp

    def against_submitted(self, submission) -> str:
        """``new``, ``same``, ``newer``, ``older: <why>`` or a conflict's reason, for ``submission``
        against what ``submitted/`` holds of that student."""
        now, stamp = self._in_submitted(submission.student)
        planned = self.record(submission)
        if not now or now == planned["files"]:
            return "new" if not now else "same"
        entry = self.entries.get(submission.student, {})
        pending, done = entry.get("pending"), entry.get("collected")
        if pending and pending["files"] == planned["files"]:
            return "newer"  # this same download, whose collect was cut short while writing it
        earlier = next((r for r in (done, pending) if r and r["files"] == now), None)
        if earlier is None:  # not left by a collect of a download: the exchange, by hand, an older kit
            earlier = {"origin": None, "timestamp": stamp, "attempt": None}
        elif earlier["origin"] != planned["origin"]:
            return (f"submitted/ holds a notebook collected from {earlier['origin']}, and this download's is from "
                    f"{planned['origin']}; the earlier is kept: remove submitted/{submission.student}/{self.assignment} "
                    "to take this one")
        for key, what in (("timestamp", "time"), ("attempt", "upload number")):
            new, old = planned[key], earlier[key]
            if new and old and new != old:
                return "newer" if new > old else f"older: an older attempt ({what} {new}, submitted/ has {old})"
        return (f"submitted/ already holds another notebook of this student, and nothing the LMS wrote says which "
                f"is newer; the earlier is kept: remove submitted/{submission.student}/{self.assignment} to take this one")

    def write(self, pending: dict, collected: dict) -> None:
        """Mark ``pending`` as being written, and ``collected`` as taken whole."""
        from ..foundations.atomic import write_whole

        for student, submission in pending.items():
            self.entries.setdefault(student, {})["pending"] = self.record(submission)
        for student, submission in collected.items():
            self.entries[student] = {"collected": self.record(submission)}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(self.path, json.dumps(self.entries, indent=1, ensure_ascii=False))

    def clear_pending(self, students) -> None:
        """Forget what was being written for ``students`` (not collected after all: their earlier stays)."""
        for student in students:
            self.entries.get(student, {}).pop("pending", None)
        self.write({}, {})
