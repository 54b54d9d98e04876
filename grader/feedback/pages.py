"""The kit's own pages in a student's feedback folder, where nbgrader's cannot be made.

- ``not_graded.html``: a student with no notebook nbgrader could grade (none handed in, none
  readable, or not graded because the machine failed), with the reasons of the report.
- ``<notebook>.html`` in place of a page nbconvert could not render: the notebook's score and that
  its page could not be shown; the instructor's terminal says why.

Both pass the same hidden-test policy as nbgrader's pages (``for_student``): unless the instructor
gives ``--show-hidden-tests``, a reason about a cell that holds hidden tests says only that its
details are hidden, and a hidden check's failure (its input, expected value, message) is never
shown. Every text is escaped; every page carries the kit's Content-Security-Policy.
"""

from __future__ import annotations

from ..foundations.student_text import CSP_META, for_html

#: what a finding of a failed hidden check says (``grader/sandbox/supervisor.py``): for the instructor only
HIDDEN_CHECK_FAILED = "hidden check failed"

WORDS = {
    "not_graded": {"en": "not graded", "zh": "未评分"},
    "could_not": {"en": "Your submission could not be graded:", "zh": "你的提交未能评分："},
    "details_hidden": {"en": "details hidden (this cell holds hidden tests)", "zh": "详情已隐藏（这个单元含有隐藏测试）"},
    "unrendered": {"en": "This page could not be made from your notebook: it holds something the page cannot show. "
                         "Your instructor has been told; ask them for the details.",
                   "zh": "无法根据你的笔记本生成这个页面：其中有页面无法显示的内容。你的老师已经知道；详情请问老师。"},
    "score": {"en": "Score", "zh": "得分"},
    "not_final": {"en": "not final: some answers wait for your instructor's grade",
                  "zh": "尚未确定：部分答案等待老师评分"},
}


def say(key: str, language: str) -> str:
    return WORDS[key].get(language, WORDS[key]["en"])


def for_student(reasons: list[str], hidden_cells: set[str], show_hidden: bool = False, language: str = "en") -> list[str]:
    """The report's ``reasons`` as a student may read them: a reason about a cell of
    ``hidden_cells`` (grade ids), or about a hidden check, reduced to that cell's name and
    "details hidden", unless ``show_hidden``; each once."""
    shown: list[str] = []
    for reason in reasons:
        if not show_hidden:
            named = [f"cell {grade_id!r}" for grade_id in hidden_cells if f"cell {grade_id!r}" in reason]
            if named or HIDDEN_CHECK_FAILED in reason:
                at = reason.find(named[0]) + len(named[0]) if named else reason.find(HIDDEN_CHECK_FAILED)
                reason = reason[:at].rstrip(": ") + ": " + say("details_hidden", language)
        if reason not in shown:
            shown.append(reason)
    return shown


_STYLE = ("<style>body { font-family: sans-serif; margin: 2em; max-width: 60em } "
          "li, p { white-space: pre-wrap; overflow-wrap: anywhere }</style>")


def page(title: str, body: str, language: str = "en") -> str:
    """A whole kit page: ``title`` (text) and ``body`` (HTML the kit wrote, its text escaped)."""
    return (f"<!DOCTYPE html><html lang='{'zh' if language == 'zh' else 'en'}'><head>{CSP_META}<meta charset='utf-8'>"
            f"<title>{for_html(title)}</title>{_STYLE}</head><body>{body}</body></html>")


def not_graded_page(assignment: str, entry: dict, reasons: list[str], language: str = "en") -> str:
    """The page of a student with nothing nbgrader graded: the report's ``entry`` (score, maximum)
    and ``reasons`` (already passed through ``for_student``)."""
    score = say("not_graded", language) if entry.get("score") is None else format(entry["score"], "g")
    items = "".join(f"<li>{for_html(reason)}</li>" for reason in reasons)
    return page(assignment, f"<h1>{for_html(assignment)}: {for_html(score)} / {for_html(format(entry.get('max_score', 0), 'g'))}"
                            f"</h1><p>{say('could_not', language)}</p><ul>{items}</ul>", language)


def unrendered_page(assignment: str, notebook: str, grade: tuple | None, language: str = "en") -> str:
    """The page in place of one nbconvert could not render: ``grade`` is (score, maximum, final) or None."""
    heading = f"{for_html(assignment)}: {for_html(notebook)}"
    if grade is not None:
        score, maximum, final = grade
        heading += f" ({say('score', language)}: {score:g} / {maximum:g})"
    note = "" if grade is None or grade[2] else f"<p>{say('not_final', language)}</p>"
    return page(f"{assignment}: {notebook}", f"<h1>{heading}</h1><p>{say('unrendered', language)}</p>{note}", language)
