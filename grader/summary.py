"""``kitgrade summary``: what a class got wrong, at a glance, after ``kitgrade autograde``.

It reads what autograde left: ``reports/<assignment>.json`` (each student's reasons), the
gradebook (each student's score as it is now, manual grades included, and each cell's score) and
the autograded notebooks (each failed test's message), and writes ``reports/<assignment>.html``
(one file, figures embedded) and a table for the terminal. Written answers that wait for a manual
grade are counted per student and for the class: until they are graded, a score is not final.
The summary's data is kept in ``reports/<assignment>.summary.json``; a rerun says what changed.
Hidden-test source is left out unless asked for: the page is meant for teaching assistants.
"""

from __future__ import annotations

import base64
import io
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from .course import Course
from .errors import UsageError
from .report import NO_LONGER_SUBMITTED, no_longer_submitted, refresh_report, write_whole
from .student_text import CSP_META, for_html, for_terminal

# A message of grader.checks.check: "WHAT: expected E, got G, for input I".
CHECK_MESSAGE = re.compile(r"^(?P<what>.+?): expected (?P<expected>.*), got (?P<got>.*), for input (?P<input>.*)$", re.S)
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
# The reasons that need a human look, by what the report's reason says.
FLAGS = [("tampering", ("relies on", "was edited", "changed nbgrader metadata", "deleted or renamed",
                        "cell type changed", "appears more than once", "unknown id")),
         ("timeout", ("longer than",)), ("refused", ("denied:",)), ("late", ("late:",)),
         ("not graded", ("not graded, because",)), ("no longer submitted", (NO_LONGER_SUBMITTED,))]

TEXT = {
    "en": {"title": "Summary of {a}", "students": "submissions", "graded": "graded", "mean": "mean",
           "median": "median", "zeros": "scored zero", "distribution": "Score distribution", "score": "score",
           "count": "students", "maximum": "maximum", "tests": "Tests", "test": "test", "pass_rate": "pass rate",
           "points": "points", "mistakes": "Most common failures", "expected": "expected", "got": "got",
           "who": "students", "look": "Submissions that need a human look", "none": "none",
           "reason": "reason", "kind": "kind", "time": "Time per submission",
           "no_time": "not recorded by autograde; who hit a time limit is listed above (timeout)",
           "timing": "median {median:.1f} s, longest {longest}",
           "changes": "Changes since the last summary", "first": "first summary of this assignment",
           "no_change": "nothing changed", "pass_title": "Pass rate per test", "source": "test source",
           "hidden": "### (hidden tests not shown; --show-hidden-tests shows them)",
           "tampering": "tampering", "timeout": "timeout", "refused": "refused operation", "late": "late",
           "not graded": "not graded", "no longer submitted": "no longer submitted", "report": "report",
           "manual": "by hand",
           "not_final": "not final: {points:g} point(s) of {count} submission(s) await manual grading",
           "waiting": "{points:g} point(s) await manual grading: {cells}",
           "written": "Written answers (graded by hand)", "answer": "answer", "by_hand": "graded",
           "awaiting": "awaiting", "blank": "blank (0)"},
    "zh": {"title": "{a} 成绩摘要", "students": "份提交", "graded": "已评分", "mean": "平均分",
           "median": "中位数", "zeros": "零分人数", "distribution": "分数分布", "score": "分数",
           "count": "学生人数", "maximum": "满分", "tests": "测试", "test": "测试", "pass_rate": "通过率",
           "points": "得分", "mistakes": "最常见的错误", "expected": "期望", "got": "得到",
           "who": "学生", "look": "需要人工查看的提交", "none": "无",
           "reason": "原因", "kind": "类别", "time": "每份提交的用时",
           "no_time": "autograde 未记录用时；超时的提交已列在上方（超时）",
           "timing": "中位数 {median:.1f} 秒，最长：{longest}",
           "changes": "与上次摘要相比的变化", "first": "本作业的第一次摘要",
           "no_change": "没有变化", "pass_title": "各测试通过率", "source": "测试代码",
           "hidden": "### （隐藏测试未显示；--show-hidden-tests 可显示）",
           "tampering": "篡改", "timeout": "超时", "refused": "被拒绝的操作", "late": "迟交",
           "not graded": "未评分", "no longer submitted": "提交已被删除", "report": "报告", "manual": "待人工评分",
           "not_final": "尚非最终成绩：{count} 份提交共 {points:g} 分待人工评分",
           "waiting": "{points:g} 分待人工评分：{cells}",
           "written": "书面回答（人工评分）", "answer": "回答", "by_hand": "已评分",
           "awaiting": "待评分", "blank": "未作答（0 分）"},
}


def flag_of(reason: str) -> str | None:
    """The kind of human look a report reason asks for (None: it asks for none)."""
    return next((kind for kind, marks in FLAGS if any(mark in reason for mark in marks)), None)


def failure_key(message: str) -> dict:
    """How a failure message is grouped: by WHAT, expected and got for the grader's checks, else by its text."""
    match = CHECK_MESSAGE.match(message.strip())
    if match:
        return {"what": match["what"], "expected": match["expected"], "got": match["got"]}
    return {"what": " ".join(message.split()), "expected": None, "got": None}


def _failures(course: Course, assignment: str, student: str) -> dict[str, str]:
    """grade_id -> the error message of each failed test cell of a student's autograded notebooks."""
    found = {}
    for path in sorted(course.path("autograded", student, assignment).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            if grade_id and errors:  # the message only, never the traceback (it quotes the test's source)
                ename, evalue = errors[0].get("ename", "Error"), errors[0].get("evalue", "")
                found[grade_id] = evalue if CHECK_MESSAGE.match(evalue.strip()) else f"{ename}: {evalue}".rstrip(": ")
    return found


def _test_sources(course: Course, assignment: str, show_hidden: bool) -> dict[str, str]:
    sources = {}
    for path in course.source_notebooks(assignment):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution"):
                text = cell.source
                sources[meta["grade_id"]] = text if show_hidden else HIDDEN.sub("{hidden}", text)
    return sources


def gather(course: Course, assignment: str, show_hidden: bool = False) -> dict:
    """Everything the summary shows, as plain data (it is also what the next run compares with)."""
    course.require_assignment(assignment)
    report_path = course.path("reports", f"{assignment}.json")
    report = refresh_report(course, assignment)  # the scores as they are now: manual grades given since count
    graded = {s: e for s, e in report.items() if e.get("score") is not None}
    if not graded:
        raise UsageError(f"nothing graded of {assignment} yet (no scores in {report_path}); "
                         f"run `kitgrade autograde {assignment}` first")
    scores = [e["score"] for e in graded.values()]
    maximum = max(e["max_score"] for e in report.values())
    tests: dict[str, dict] = {}
    written: dict[str, dict] = {}
    with Gradebook(course.db_url, course.course_id) as gradebook:
        for notebook in gradebook.find_assignment(assignment).notebooks:
            by_hand = {c.name for c in notebook.solution_cells} | {c.name for c in notebook.task_cells}
            for cell in sorted([*notebook.grade_cells, *notebook.task_cells], key=lambda c: c.name):
                if cell.name in by_hand:  # an answer a person grades, not a test
                    written[cell.name] = {"id": cell.name, "notebook": notebook.name, "max_score": cell.max_score,
                                          "count": 0, "graded": 0, "awaiting": 0, "blank": 0, "points": 0.0}
                elif cell.cell_type == "code":
                    tests[cell.name] = {"id": cell.name, "notebook": notebook.name, "max_score": cell.max_score,
                                        "passed": 0, "count": 0, "points": 0.0, "failures": defaultdict(list)}
            for student in sorted(graded):
                try:
                    grades = gradebook.find_submission_notebook(notebook.name, assignment, student).grades
                except MissingEntry:
                    continue
                for grade in grades:
                    if grade.name in tests:
                        test, score = tests[grade.name], grade.score or 0.0
                        test["count"] += 1
                        test["points"] += score
                        test["passed"] += score >= grade.max_score
                    elif grade.name in written:
                        answer = written[grade.name]
                        answer["count"] += 1
                        answer["points"] += grade.score or 0.0
                        if grade.manual_score is not None:
                            answer["graded"] += 1
                        elif grade.auto_score is None:
                            answer["awaiting"] += 1
                        else:  # left as released: nbgrader scored it 0 by itself
                            answer["blank"] += 1
    for student in sorted(graded):
        for grade_id, message in _failures(course, assignment, student).items():
            if grade_id in tests:
                tests[grade_id]["failures"][json.dumps(failure_key(message))].append(student)
    sources = _test_sources(course, assignment, show_hidden)
    for test in tests.values():
        groups = [{**json.loads(key), "students": students} for key, students in test.pop("failures").items()]
        test["groups"] = sorted(groups, key=lambda g: (-len(g["students"]), g["what"]))
        test["source"] = sources.get(test["id"], "")
    awaiting = {s: e["awaiting_manual_points"] for s, e in sorted(graded.items()) if e.get("awaiting_manual_points")}
    flags = []
    for student, item in sorted(report.items()):
        flags += [{"student": student, "kind": flag_of(r), "reason": r} for r in item.get("reasons", []) if flag_of(r)]
        if student in awaiting:  # written answers nobody has graded yet
            cells = ", ".join(a["cell"] for a in item["awaiting_manual"])
            flags.append({"student": student, "kind": "manual", "points": awaiting[student], "cells": cells,
                          "reason": TEXT["en"]["waiting"].format(points=awaiting[student], cells=cells)})
    # a submission deleted since the last run: said here too, whether or not autograde ran since
    flagged = {f["student"] for f in flags if f["kind"] == "no longer submitted"}
    flags += [{"student": s, "kind": "no longer submitted", "reason": why}
              for s, why in no_longer_submitted(course, assignment).items() if s not in flagged]
    return {"assignment": assignment, "max_score": maximum, "submissions": len(report), "graded": len(graded),
            "awaiting_manual": awaiting, "written": list(written.values()),
            "scores": {s: e.get("score") for s, e in sorted(report.items())},
            "mean": statistics.mean(scores), "median": statistics.median(scores),
            "zeros": sum(1 for s in scores if s == 0), "tests": list(tests.values()), "flags": flags,
            "seconds": {s: e["seconds"] for s, e in sorted(report.items()) if isinstance(e.get("seconds"), (int, float))
                        and e["seconds"] > 0}}


def timing(data: dict, t: dict) -> str:
    """Time per submission: the median and the five longest (who came near the limits)."""
    seconds = data.get("seconds") or {}
    if not seconds:
        return t["no_time"]
    longest = sorted(seconds.items(), key=lambda item: -item[1])[:5]
    return t["timing"].format(median=statistics.median(seconds.values()),
                              longest=", ".join(f"{student} {value:.1f} s" for student, value in longest))


def changes(previous: dict | None, data: dict) -> list[str] | None:
    """What changed since the previous summary (None: there was none)."""
    if previous is None:
        return None
    lines = []
    before, after = previous.get("scores", {}), data["scores"]
    for student in sorted(set(before) | set(after)):
        old, new = before.get(student, "-"), after.get(student, "-")
        if old != new:
            lines.append(f"{student}: {_num(old)} -> {_num(new)}")
    old_tests = {t["id"]: t for t in previous.get("tests", [])}
    for test in data["tests"]:
        old = old_tests.get(test["id"])
        if old and (old["passed"], old["count"]) != (test["passed"], test["count"]):
            lines.append(f"{test['id']}: {old['passed']}/{old['count']} -> {test['passed']}/{test['count']}")
    old_flags = {(f["student"], f["reason"]) for f in previous.get("flags", [])}
    new_flags = {(f["student"], f["reason"]) for f in data["flags"]}
    lines += [f"+ {s}: {r}" for s, r in sorted(new_flags - old_flags)]
    lines += [f"- {s}: {r}" for s, r in sorted(old_flags - new_flags)]
    return lines


def _num(value) -> str:
    return "-" if value is None else value if isinstance(value, str) else f"{value:g}"


def _shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, its middle cut (the end often says what was got)."""
    return text if len(text) <= width else text[:width // 2 - 2] + " .. " + text[-(width // 2 - 2):]


def _stats(data: dict, t: dict) -> str:
    graded = f" ({data['graded']} {t['graded']})" if data["graded"] != data["submissions"] else ""
    waiting = data.get("awaiting_manual") or {}
    not_final = ("; " + t["not_final"].format(points=sum(waiting.values()), count=len(waiting))) if waiting else ""
    return (f"{data['submissions']} {t['students']}{graded}; {t['mean']} {data['mean']:.2f} / {data['max_score']:g}, "
            f"{t['median']} {data['median']:g}, {t['zeros']}: {data['zeros']}{not_final}")


def _written_row(answer: dict) -> list[str]:
    return [answer["id"], f"{answer['graded']}/{answer['count']}", str(answer["awaiting"]), str(answer["blank"]),
            f"{answer['points']:g}/{answer['max_score'] * answer['count']:g}"]


def _group_text(group: dict, t: dict) -> str:
    if group["expected"] is None:
        return group["what"]
    return f"{group['what']}: {t['expected']} {group['expected']}, {t['got']} {group['got']}"


def terminal_table(data: dict, lang: str = "en") -> str:
    """The compact table printed in the terminal."""
    t = TEXT[lang]
    lines = [t["title"].format(a=data["assignment"]),
             "  " + _stats(data, t), "",
             f"  {t['test']:<22} {t['pass_rate']:>10} {t['points']:>12}"]
    for test in data["tests"]:
        rate = f"{test['passed']}/{test['count']}"
        lines.append(f"  {test['id']:<22} {rate:>10} {test['points']:>7g}/{test['max_score'] * test['count']:<4g}")
        for group in test["groups"][:3]:
            lines.append(f"      {len(group['students'])}x {for_terminal(_shorten(_group_text(group, t), 100))}  "
                         f"[{for_terminal(', '.join(group['students']))}]")
    if data.get("written"):
        lines += ["", t["written"] + ":",
                  f"  {t['answer']:<28} {t['by_hand']:>8} {t['awaiting']:>9} {t['blank']:>10} {t['points']:>10}"]
        for answer in data["written"]:
            name, graded, waiting, blank, worth = _written_row(answer)
            lines.append(f"  {name:<28} {graded:>8} {waiting:>9} {blank:>10} {worth:>10}")
    lines += ["", t["look"] + ":"]
    lines += [f"  {for_terminal(f['student']):<12} {t[f['kind']]:<10} {for_terminal(_flag_reason(f, t))}"
              for f in data["flags"]] or [f"  {t['none']}"]
    lines += ["", f"{t['time']}: {for_terminal(timing(data, t))}"]
    if data.get("changes") is not None:
        lines += ["", t["changes"] + ":"] + [f"  {for_terminal(c)}" for c in data["changes"]] + (
            [f"  {t['no_change']}"] if not data["changes"] else [])
    return "\n".join(lines)


def _flag_reason(flag: dict, t: dict) -> str:
    """A flag's reason; the answers waiting for a manual grade are said in the summary's language."""
    if flag["kind"] == "manual":
        return t["waiting"].format(points=flag["points"], cells=flag["cells"])
    return flag["reason"]


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight", facecolor="white")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def figures(data: dict, lang: str) -> list[str]:
    """The histogram of scores (the maximum marked) and the pass rate per test, as base64 PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from graph_explorer.fonts import prepare_figures

    t = TEXT[lang]
    scores = [s for s in data["scores"].values() if s is not None]
    with plt.style.context("default"):  # light, whatever the user's matplotlib style
        prepare_figures(lang)  # inside: the style resets the fonts
        fig, ax = plt.subplots(figsize=(6, 3.2))
        top = data["max_score"]
        whole = top == int(top) and top <= 30  # one bar per whole score, centred on it
        ax.hist(scores, bins=[b - 0.5 for b in range(int(top) + 2)] if whole else 20,
                range=None if whole else (0, top), color="#4477aa", edgecolor="black")
        ax.axvline(data["max_score"], color="#cc3311", linestyle="--", linewidth=2, label=t["maximum"])
        ax.set(title=t["distribution"], xlabel=t["score"], ylabel=t["count"])
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend()
        histogram = _png(fig)
        plt.close(fig)
        fig, ax = plt.subplots(figsize=(6, 0.5 + 0.45 * max(1, len(data["tests"]))))
        names = [test["id"] for test in data["tests"]]
        rates = [100 * test["passed"] / test["count"] if test["count"] else 0 for test in data["tests"]]
        ax.barh(names, rates, color="#228833", edgecolor="black")
        ax.set(title=t["pass_title"], xlabel=t["pass_rate"] + " (%)", xlim=(0, 100))
        ax.invert_yaxis()
        rates_png = _png(fig)
        plt.close(fig)
    return [histogram, rates_png]


def to_html(data: dict, lang: str = "en") -> str:
    """The summary as one self-contained HTML page."""
    t, e = TEXT[lang], for_html
    parts = [f"<!DOCTYPE html><html lang='{lang}'><head>{CSP_META}<meta charset='utf-8'><title>{e(t['title'].format(a=data['assignment']))}</title>",
             "<style>body{font-family:sans-serif;color:#111;background:#fff;max-width:60em;margin:auto;padding:1em}"
             "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #999;padding:.2em .5em;text-align:left}"
             "img{max-width:100%}pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap}"
             "@media print{details{display:block}}</style></head><body>",
             f"<h1>{e(t['title'].format(a=data['assignment']))}</h1>",
             f"<p id='stats'>{e(_stats(data, t))}</p>"]
    parts += [f"<img alt='{e(alt)}' src='data:image/png;base64,{png}'>"
              for alt, png in zip((t["distribution"], t["pass_title"]), figures(data, lang))]
    parts.append(f"<h2>{e(t['tests'])}</h2>")
    for test in data["tests"]:
        parts.append(f"<h3 id='test-{e(test['id'])}'>{e(test['id'])}: {e(t['pass_rate'])} {test['passed']}/{test['count']}, "
                     f"{e(t['points'])} {test['points']:g}/{test['max_score'] * test['count']:g}</h3>")
        if test["groups"]:
            parts.append(f"<table class='groups'><tr><th>{e(t['mistakes'])}</th><th>{e(t['who'])}</th></tr>")
            parts += [f"<tr><td>{e(_group_text(g, t))}</td><td>{len(g['students'])}: {e(', '.join(g['students']))}</td></tr>"
                      for g in test["groups"]]
            parts.append("</table>")
        if test["source"]:
            source = test["source"].replace("{hidden}", t["hidden"])
            parts.append(f"<details><summary>{e(t['source'])}</summary><pre>{e(source)}</pre></details>")
    if data.get("written"):
        parts.append(f"<h2>{e(t['written'])}</h2><table id='written'><tr>"
                     + "".join(f"<th>{e(t[k])}</th>" for k in ("answer", "by_hand", "awaiting", "blank", "points"))
                     + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{e(v)}</td>" for v in _written_row(answer)) + "</tr>"
                  for answer in data["written"]]
        parts.append("</table>")
    parts.append(f"<h2>{e(t['look'])}</h2>")
    if data["flags"]:
        parts.append(f"<table id='flags'><tr><th>{e(t['who'])}</th><th>{e(t['kind'])}</th><th>{e(t['reason'])}</th></tr>")
        parts += [f"<tr><td>{e(f['student'])}</td><td>{e(t[f['kind']])}</td><td>{e(_flag_reason(f, t))}</td></tr>"
                  for f in data["flags"]]
        parts.append("</table>")
    else:
        parts.append(f"<p>{e(t['none'])}</p>")
    parts.append(f"<h2>{e(t['time'])}</h2><p id='timing'>{e(timing(data, t))}</p><h2>{e(t['changes'])}</h2>")
    if data.get("changes") is None:
        parts.append(f"<p>{e(t['first'])}</p>")
    else:
        parts.append("<ul id='changes'>" + "".join(f"<li>{e(c)}</li>" for c in data["changes"]) + "</ul>"
                     if data["changes"] else f"<p>{e(t['no_change'])}</p>")
    return "\n".join(parts) + "\n</body></html>\n"


def summarize(course: Course, assignment: str, lang: str = "en", show_hidden: bool = False) -> tuple[str, Path]:
    """Write reports/<assignment>.html and .summary.json; return the terminal table and the page's path."""
    data = gather(course, assignment, show_hidden)
    kept = course.path("reports", f"{assignment}.summary.json")
    try:
        previous = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else None
    except (OSError, ValueError):
        previous = None
    data["changes"] = changes(previous, data)
    page = course.path("reports", f"{assignment}.html")
    write_whole(page, to_html(data, lang))  # whole or not at all, on a full disk too
    keep = {**data, "tests": [{k: v for k, v in test.items() if k != "source"} for test in data["tests"]]}
    keep.pop("changes")
    write_whole(kept, json.dumps(keep, indent=1, ensure_ascii=False))
    return terminal_table(data, lang), page
