"""What a student wrote, opened by the instructor in the course's grader service, in Chromium: inert.

One course on a real hub (kithub, deploy/hub/kithub/; real accounts): alice hands in ps1 with a script
(``<script>``), an event handler (``<img onerror>``) and a ``javascript:`` link in her written
answer, in a markdown cell of her own and in the HTML her code displays; each would, if it ran, mark
the page and write a file into the course through the grader service's API with the instructor's
session (what such a script did on the hub before), and ask the hub for a page with her cookies.
The instructor collects and autogrades, then opens the submission in the formgrader, the notebook
in the grader service's JupyterLab, its nbconvert rendering and its file view, and clicks the link.
Nothing runs, no file is written, no request goes anywhere but the grader service's own path; the
formgrader still works (its own scripts run: a manual grade is saved); the instructor's cookies are
each scoped to its own part of the hub.

Needs root, ``make hub-env`` and Chromium; without them the tests skip, except in CI (``CI=true``).
"""
from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from browser_support import artifacts_folder, launch_chromium
from kit_paths import ROOT
from hub_support import PS1, PS1_NOTEBOOK, Person, one_course_class, python_as, require_hub, run_as, served_class

ARTIFACTS = ROOT / "artifacts" / "hub-instructor-pages"
pytestmark = pytest.mark.timeout(900)

#: what each payload does if it runs: marks the page, and writes into the course with the page's session
RUN = ("document.documentElement.setAttribute('data-kit-ran-{kind}', '1');"
       "fetch(location.pathname.split('/formgrader')[0].split('/lab')[0].split('/nbconvert')[0]"
       ".split('/files')[0] + '/api/contents/pwned-{kind}.txt', {{method: 'PUT', headers: {{'X-XSRFToken': "
       "decodeURIComponent((document.cookie.match(/_xsrf=([^;]*)/) || [])[1] || '')}}, body: JSON.stringify("
       "{{type: 'file', format: 'text', content: 'pwned'}})}});")


def payload(where: str) -> str:
    """The three ways in, each tagged with ``where`` they were written."""
    return (f"Payload of {where}.\n\n<script>{RUN.format(kind=where + '-script')}</script>\n\n"
            f"<img src=\"/hub/kit-beacon-{where}\" onerror=\"{RUN.format(kind=where + '-onerror')}\">\n\n"
            f"[open me {where}](javascript:{RUN.format(kind=where + '-link')})\n")


def handed_in(released: dict) -> dict:
    """ps1 as alice hands it in: the payloads in her first written answer, in a markdown cell of her own
    after it, and in what her first answer's code displays."""
    cells = released["cells"]
    written = next(i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                   and c["metadata"].get("nbgrader", {}).get("solution"))
    code = next(i for i, c in enumerate(cells) if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {}).get("solution"))
    cells[written]["source"] = payload("answer")
    shown = payload("output").replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    cells[code]["source"] = f'from IPython.display import HTML, display\ndisplay(HTML("{shown}"))\n' + "".join(cells[code]["source"])
    cells.insert(written + 1, {"cell_type": "markdown", "metadata": {}, "source": payload("markdown")})
    return released


@pytest.fixture(scope="module")
def artifacts(request):
    yield from artifacts_folder(request, ARTIFACTS, "the instructor's pages: screenshots")


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium("CI must run the hub's browser tests (.ci/run runs as root; `make test` builds .venv-hub)")


@pytest.fixture(scope="module")
def hub():
    require_hub("the hub's test of the instructor's pages")
    spec = one_course_class("kit-pages-", ["alice"])
    with served_class(spec) as served:
        yield served


@pytest.fixture(scope="module")
def graded(hub):
    """alice's submission, handed in from her account, taken in by the clerk, collected and autograded."""
    course, alice = hub.courses[0], hub.names["alice"]
    released = json.loads((hub.exchange / "ad101" / "outbound" / PS1 / PS1_NOTEBOOK).read_text())
    entry = hub.exchange / "ad101" / "inbound" / f"{alice}+{PS1}+2026-01-01 00:00:00.000000 UTC+pages"
    files = {PS1_NOTEBOOK: json.dumps(handed_in(released)), "notes.html": f"<html><body>{payload('html')}</body></html>",
             "drawing.svg": f'<svg xmlns="http://www.w3.org/2000/svg"><script>{RUN.format(kind="svg")}</script></svg>'}
    made = run_as(hub, alice, str(hub.python), "-c", "import json, os, sys; os.umask(0o007); os.mkdir(sys.argv[1]); "
                  "[open(os.path.join(sys.argv[1], n), 'w').write(t) for n, t in json.loads(sys.argv[2]).items()]",
                  str(entry), json.dumps(files))
    assert made.returncode == 0, made.stderr
    for command in (["collect", PS1], ["autograde", PS1, "--quiet"]):
        done = run_as(hub, course.grader, str(hub.bin / "kitgrade"), *command, cwd=str(course.directory(hub)))
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    autograded = course.directory(hub) / "autograded" / alice / PS1 / PS1_NOTEBOOK
    text = autograded.read_text()
    assert all(f"data-kit-ran-{w}-script" in text for w in ("answer", "markdown", "output")), "a payload was lost"
    found = python_as(hub, course.grader, SUBMISSION_ID, env={"COURSE_DIR": str(course.directory(hub)),
                                                              "STUDENT": alice, "PS1": PS1,
                                                              "NOTEBOOK": Path(PS1_NOTEBOOK).stem})
    assert found.returncode == 0, found.stderr
    submitted = course.directory(hub) / "submitted" / alice / PS1  # (autograde keeps the notebooks only)
    assert (submitted / "notes.html").exists() and (submitted / "drawing.svg").exists()
    return {"submission": found.stdout.strip(), "notebook": autograded.relative_to(course.directory(hub)),
            "submitted": submitted.relative_to(course.directory(hub))}


SUBMISSION_ID = """
import os
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + os.path.join(os.environ["COURSE_DIR"], "gradebook.db"), "ad101") as gradebook:
    print(gradebook.find_submission_notebook(os.environ["NOTEBOOK"], os.environ["PS1"], os.environ["STUDENT"]).id)
"""


@pytest.fixture(scope="module")
def instructor(hub, browser, artifacts):
    """The instructor, logged in, her page watched: every request it makes and every mark a payload sets."""
    person = Person(browser, hub.url, hub.names["teach"], hub.passwords[hub.names["teach"]], artifacts)
    person.log_in("instructor-1")
    person.page.goto(f"{hub.url}/services/ad101/formgrader")  # the service's login (OAuth), before any watching
    person.page.wait_for_load_state()
    person.requests = []  # what got an answer: a request the page's policy blocks never leaves the browser
    person.context.on("response", lambda response: person.requests.append(response.url))
    yield person
    person.close()


def ran(page) -> list[str]:
    """The payloads that marked the page (and its frames)."""
    marks = []
    for frame in page.frames:
        try:
            marks += frame.evaluate("() => Array.from(document.documentElement.attributes).map(a => a.name)"
                                    ".filter(n => n.startsWith('data-kit-ran-'))")
        except Exception:  # a frame gone meanwhile
            continue
    return marks


def written_into_the_course(hub) -> list[str]:
    return sorted(p.name for p in hub.courses[0].directory(hub).rglob("pwned-*"))


def left_the_service(hub, urls: list[str]) -> list[str]:
    """The requests that were answered from anywhere but the grader service's own path (and data: pictures)."""
    own = f"{hub.url}/services/ad101/"
    return [u for u in urls if not u.startswith((own, "data:", "about:", "blob:"))]


def test_the_formgrader_shows_the_submission_and_nothing_of_it_runs(hub, graded, instructor):
    page = instructor.page
    before = len(instructor.requests)
    response = page.goto(f"{hub.url}/services/ad101/formgrader/submissions/{graded['submission']}/?index=0")
    page.locator("#notebook-container").first.wait_for(timeout=60_000)
    page.wait_for_timeout(3000)  # what a payload would fetch, given time
    instructor.shot("formgrader-submission", full=True)
    text = page.locator("#notebook-container").first.inner_text()
    assert "Payload of answer." in text and "Payload of markdown." in text  # her text is there, as text
    assert ran(page) == []
    assert written_into_the_course(hub) == []
    assert left_the_service(hub, instructor.requests[before:]) == []
    # the javascript: links: clicked, nothing happens
    for where in ("answer", "markdown"):
        link = page.get_by_text(f"open me {where}")
        if link.count():
            link.first.click()
            page.wait_for_timeout(500)
    assert ran(page) == [] and written_into_the_course(hub) == []
    assert page.url.startswith(f"{hub.url}/services/ad101/formgrader/submissions/")
    # the wall behind the sanitizer: a policy that lets no inline script but the page's own run
    policies = [h["value"] for h in response.headers_array() if h["name"].lower() == "content-security-policy"]
    scripts = [part for p in policies for part in p.split(";") if part.strip().startswith("script-src")]
    assert scripts and not any("unsafe-inline" in part for part in scripts), policies


def test_the_formgrader_still_runs_its_own_scripts_and_saves_a_manual_grade(hub, graded, instructor):
    page = instructor.page
    assert page.evaluate("() => typeof submission_id") == "string"  # the template's inline script ran
    score = page.locator("input.score").first
    score.fill("1")
    score.press("Tab")
    grade_id = score.get_attribute("id")
    page.wait_for_timeout(2000)
    found = python_as(hub, hub.courses[0].grader, MANUAL_SCORE,
                      env={"COURSE_DIR": str(hub.courses[0].directory(hub)), "SUBMISSION": graded["submission"],
                           "GRADE_ID": grade_id})
    assert found.returncode == 0 and found.stdout.strip() == "1.0", (found.stdout, found.stderr)


MANUAL_SCORE = """
import os
from nbgrader.api import Gradebook
with Gradebook("sqlite:///" + os.path.join(os.environ["COURSE_DIR"], "gradebook.db"), "ad101") as gradebook:
    notebook = gradebook.find_submission_notebook_by_id(os.environ["SUBMISSION"])
    print(next(g.manual_score for g in notebook.grades if g.name == os.environ["GRADE_ID"]))
"""


#: each page of the grader service that shows the submission another way: (what, its address below the service)
VIEWS = {"lab": "lab/tree/{notebook}", "nbconvert": "nbconvert/html/{notebook}", "files-html": "files/{folder}/notes.html",
         "files-svg": "files/{folder}/drawing.svg"}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_the_submission_opened_elsewhere_in_the_grader_service_runs_nothing(hub, graded, instructor, view):
    page = instructor.page
    before = len(instructor.requests)
    notebook = graded["notebook"]
    address = VIEWS[view].format(notebook=urllib.parse.quote(str(notebook)),
                                 folder=urllib.parse.quote(str(graded["submitted"])))
    page.goto(f"{hub.url}/services/ad101/{address}")
    if view == "lab":
        page.locator(".jp-RenderedMarkdown", has_text="Payload of answer.").first.wait_for(timeout=60_000)
    elif view != "files-svg":
        page.get_by_text("Payload of").first.wait_for(timeout=30_000)
    page.wait_for_timeout(3000)
    instructor.shot(f"submission-in-{view}")
    assert ran(page) == [] and written_into_the_course(hub) == []
    assert left_the_service(hub, instructor.requests[before:]) == []


def test_the_instructors_cookies_are_each_scoped_to_their_part_of_the_hub(hub, instructor):
    """JupyterHub's advice for a hub on one address: each server's cookies on its own path (never ``/``), so
    that a page of one part of the hub does not send the others' (docs/deploy.md)."""
    cookies = instructor.context.cookies()
    assert cookies, "no cookie: not logged in?"
    paths = {c["name"]: c["path"] for c in cookies}
    # JupyterHub's session id is on / by design: it names the session whose tokens a logout revokes, and
    # lets nobody in (each part's login is its own cookie, below)
    assert paths.pop("jupyterhub-session-id", "/") == "/", paths
    own = f"/user/{hub.names['teach']}/"  # her own server's (she landed there when she logged in)
    assert all(path.startswith(("/hub/", "/services/ad101/", own)) for path in paths.values()), paths
    assert paths.get("service-ad101") == "/services/ad101/" and paths.get("jupyterhub-hub-login") == "/hub/", paths
