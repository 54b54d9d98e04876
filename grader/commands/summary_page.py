"""The pages of ``kitgrade summary``: the terminal's table and the HTML page (its figures embedded),
in English or Chinese, drawn from what ``summary.gather`` found."""

from __future__ import annotations

import base64
import io
import statistics
import unicodedata

from ..foundations.student_text import CSP_META, for_html, for_terminal

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


def timing(data: dict, t: dict) -> str:
    """Time per submission: the median and the five longest (who came near the limits)."""
    seconds = data.get("seconds") or {}
    if not seconds:
        return t["no_time"]
    longest = sorted(seconds.items(), key=lambda item: -item[1])[:5]
    return t["timing"].format(median=statistics.median(seconds.values()),
                              longest=", ".join(f"{student} {value:.1f} s" for student, value in longest))


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


def _cell(text: str, width: int, right: bool = False) -> str:
    """``text`` padded to ``width`` columns of a terminal: a Chinese character takes two."""
    shown = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    padding = " " * max(0, width - shown)
    return padding + text if right else text + padding


def terminal_table(data: dict, lang: str = "en") -> str:
    """The compact table printed in the terminal."""
    t = TEXT[lang]
    width = max([22] + [len(test["id"]) for test in data["tests"]])  # the columns stay in line under long names
    lines = [t["title"].format(a=data["assignment"]),
             "  " + _stats(data, t), "",
             f"  {_cell(t['test'], width)} {_cell(t['pass_rate'], 10, True)} {_cell(t['points'], 12, True)}"]
    for test in data["tests"]:
        rate = f"{test['passed']}/{test['count']}"
        lines.append(f"  {test['id']:<{width}} {rate:>10} {test['points']:>7g}/{test['max_score'] * test['count']:<4g}")
        for group in test["groups"][:3]:
            lines.append(f"      {len(group['students'])}x {for_terminal(_shorten(_group_text(group, t), 100))}  "
                         f"[{for_terminal(', '.join(group['students']))}]")
    if data.get("written"):
        rows = [_written_row(answer) for answer in data["written"]]
        named = max([28] + [len(row[0]) for row in rows])
        lines += ["", t["written"] + ":",
                  f"  {_cell(t['answer'], named)} {_cell(t['by_hand'], 8, True)} {_cell(t['awaiting'], 9, True)} "
                  f"{_cell(t['blank'], 10, True)} {_cell(t['points'], 10, True)}"]
        for name, graded, waiting, blank, worth in rows:
            lines.append(f"  {name:<{named}} {graded:>8} {waiting:>9} {blank:>10} {worth:>10}")
    lines += ["", t["look"] + ":"]
    lines += [f"  {_cell(for_terminal(f['student']), 12)} {_cell(t[f['kind']], 10)} {for_terminal(_flag_reason(f, t))}"
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
