"""Who graded or changed what: each course's grading record, ``<course directory>/grading-record.log``.

Every grader of a course (its instructors and teaching assistants, the hub users of its group
``formgrade-<course>``) opens the one grader service of the course, which runs as the course's grader
account. The service knows who made each request (the person's JupyterHub identity, which the hub's
OAuth gives it), and this server extension, loaded by the grader services, records with that name:

* each change of a manual score, extra credit or comment saved through the formgrader (nbgrader's
  ``PUT formgrader/api/grade/<id>`` and ``PUT formgrader/api/comment/<id>``), one line per change;
* each terminal opened in the service: its shell carries ``KIT_GRADED_BY=<hub user>``, and the
  ``kitgrade`` first on its PATH (``<state>/bin/grader/kitgrade``, ``python -m kithub.grading_record``)
  records the command with that name before it runs the kit's ``kitgrade``.

A line is ``time<TAB>hub user<TAB>what<TAB>student<TAB>assignment/notebook<TAB>cell<TAB>old -> new``
(``kitgrade`` runs: ``time<TAB>hub user<TAB>kitgrade<TAB>its arguments<TAB>its folder``). The file is
the grader account's, mode 600, only ever opened for appending; each line is also in nbgrader's log
(``NbGrader.logfile``, ``~/nbgrader.log`` of the grader account) and, for the formgrader's and the
terminals' lines, in the hub's log (root's alone), which no grader can change. A grader with the
service's terminal is the grader account and could edit the first two, and the gradebook itself:
the record says who did what through the service, it does not stop a grader who means to hide it.
"""
from __future__ import annotations

import datetime
import functools
import json
import logging
import os
import pwd
import sys
from pathlib import Path

RECORD = "grading-record.log"
#: what the grader service puts in the environment of each terminal it opens: who opened it
GRADED_BY = "KIT_GRADED_BY"
#: what the hub puts in a grader service's environment: its course (its folder in the grader's home)
COURSE = "KIT_COURSE"
#: what of a grade and of a comment the formgrader lets a grader change
CHANGED = {"grade": ("manual_score", "extra_credit"), "comment": ("manual_comment",)}


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def field(value) -> str:
    """A value on one line of the record: tabs and line breaks of a comment escaped (JSON)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value).replace("\t", " ").replace("\n", " ")


def line_of(*fields: str) -> str:
    """One line of the record; text that is not UTF-8 (a lone surrogate from a request's JSON) is
    written escaped (``\\udc80``) rather than stopping the record and the grader's change."""
    line = "\t".join([now(), *(f.replace("\t", " ").replace("\n", " ") for f in fields)])
    return line.encode("utf-8", "backslashreplace").decode("utf-8")


def append(record: Path, line: str, log=None) -> str:
    """``line`` appended to ``record`` (made mode 600 if missing) in one write, and to ``log`` (the server's:
    the hub's log) and nbgrader's log; a record that cannot be written is said in ``log``, and the
    grading goes on. Returns the line."""
    try:
        descriptor = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(descriptor, (line + "\n").encode())
        finally:
            os.close(descriptor)
    except OSError as error:
        if log is None:
            raise
        log.warning("grading record: %s could not be written (%s): %s", record, error.strerror, line)
    if log is not None:
        log.info("grading record: %s", line)
    nbgrader_log().info(line)
    return line


def nbgrader_log() -> logging.Logger:
    """A logger into nbgrader's own log file (``NbGrader.logfile`` of the grader's nbgrader configuration),
    beside nbgrader's lines; none where it names none."""
    log = logging.getLogger("kithub.grading_record")
    log.propagate = False
    if not log.handlers:
        from nbgrader.apps.baseapp import NbGrader

        app = NbGrader()
        app.load_config_file()  # nbgrader_config.py of Jupyter's config path: the class's for graders
        try:
            handler = logging.FileHandler(app.logfile) if app.logfile else logging.NullHandler()
        except OSError:  # (the grading record and the hub's log have the line all the same)
            handler = logging.NullHandler()
        handler.setFormatter(logging.Formatter("[kithub | %(levelname)s] %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    return log


def who(handler) -> str | None:
    """The hub user who made the request (their JupyterHub identity, from the request), or None."""
    user = handler.current_user
    model = getattr(user, "hub_user", None)
    if not model:
        return None
    return model["name"] if model.get("kind", "user") == "user" else f"{model.get('kind')} {model['name']}"


def _recorded_put(original, kind: str, record: Path, server_log):
    @functools.wraps(original)
    def put(self, item_id):
        name = who(self)
        if name is None:  # not let in: nbgrader's own handler refuses it
            return original(self, item_id)
        find = self.gradebook.find_grade_by_id if kind == "grade" else self.gradebook.find_comment_by_id
        try:
            before = find(item_id).to_dict()
        except Exception:  # nbgrader's MissingEntry: its handler answers 404
            return original(self, item_id)
        result = original(self, item_id)
        after = find(item_id).to_dict()
        changes = [f"{name_} {field(before[name_])} -> {field(after[name_])}" for name_ in CHANGED[kind]
                   if before[name_] != after[name_]]
        if changes:
            append(record, line_of(name, kind, after["student"], f"{after['assignment']}/{after['notebook']}",
                                   after["name"], "; ".join(changes)), server_log)
        return result

    put.records_the_grader = True
    return put


def _named_terminal(original):
    @functools.wraps(original)
    def post(self):
        name = who(self)
        if name is not None:
            asked = self.get_json_body() or {}
            given = {**asked, "extra_env": {**(asked.get("extra_env") or {}), GRADED_BY: name}}
            self.get_json_body = lambda: given
            append(Path(self.settings["server_root_dir"]).expanduser() / RECORD,
                   line_of(name, "terminal", "opened in the grader service"), self.log)
        return original(self)

    post.records_the_grader = True
    return post


def _load_jupyter_server_extension(server_app) -> None:
    """Loaded by the grader services (``c.ServerApp.jpserver_extensions``, kithub/config_files.py)."""
    from jupyter_server_terminals.api_handlers import TerminalRootHandler
    from nbgrader.server_extensions.formgrader.apihandlers import CommentHandler, GradeHandler

    record = Path(server_app.root_dir).expanduser() / RECORD
    for handler, kind in ((GradeHandler, "grade"), (CommentHandler, "comment")):
        if not getattr(handler.put, "records_the_grader", False):
            handler.put = _recorded_put(handler.put, kind, record, server_app.log)
    if not getattr(TerminalRootHandler.post, "records_the_grader", False):
        TerminalRootHandler.post = _named_terminal(TerminalRootHandler.post)
    server_app.log.info("grading record: %s (who changed which grade, and which kitgrade ran)", record)


def _jupyter_server_extension_points():
    return [{"module": "kithub.grading_record"}]


def caller() -> str:
    """Who runs ``kitgrade``: the hub user the grader service named for its terminal; else whoever ``sudo``
    or the machine's login (``/proc/self/loginuid``: kept through ``su`` and ``runuser``) says; else
    the account itself, marked as not known."""
    if os.environ.get(GRADED_BY):
        return os.environ[GRADED_BY]
    if os.environ.get("SUDO_USER"):
        return f"{os.environ['SUDO_USER']} (sudo)"
    try:
        login = int(Path("/proc/self/loginuid").read_text())
        if login != 0xFFFFFFFF:
            return f"{pwd.getpwuid(login).pw_name} (login)"
    except (OSError, ValueError, KeyError):
        pass
    return f"unknown (as {pwd.getpwuid(os.getuid()).pw_name})"


def main(argv: list[str] | None = None) -> int:
    """``kitgrade`` in the grader service's terminals: the command recorded with who runs it, then the
    kit's ``kitgrade`` (beside this Python) run in its place."""
    argv = sys.argv[1:] if argv is None else argv
    kitgrade = Path(sys.executable).parent / "kitgrade"
    course = os.environ.get(COURSE)
    record = Path(pwd.getpwuid(os.getuid()).pw_dir) / course / RECORD if course else None  # (runuser keeps root's HOME)
    if record is not None and record.parent.is_dir():
        try:
            append(record, line_of(caller(), "kitgrade", " ".join(argv), os.getcwd()))
        except OSError as error:
            print(f"kitgrade: not recorded in {record} ({error.strerror})", file=sys.stderr)
    os.execv(kitgrade, [str(kitgrade), *argv])
    return 1  # (execv does not return)


if __name__ == "__main__":
    sys.exit(main())
