"""The kit outside its checkout: built from the tracked files alone, installed from its wheel into fresh
environments outside the checkout (nothing of it on ``sys.path``), one extra at a time, and tried the
three ways the README's first section shows.

* The build: the sdist from a copy of the tracked files (what a clean clone holds: no student
  versions yet, so the build backend asks for nbgrader and makes them), the wheel from the sdist
  in an isolated environment (setuptools alone: the sdist carries the student versions), both
  passing ``twine check``, both carrying the licence; the wheel holds the lessons in both
  languages, the exercises as their instructor writes them, and as a student receives them (no
  solution, no hidden test).
* ``pip install autograd-kit``: the engine runs; ``kitgrade``, ``autograd-kit lab`` and
  ``import graph_explorer`` say in one line which extra to install.
* ``[lab]``, a learner: ``autograd-kit workspace`` (the lessons in en and zh, the exercises blank,
  the learner's edits kept on a second run), lesson 01 run headless, ``kitgrade check`` on a blank
  and on a solved exercise (hidden tests from the installed kit; the notebook's code cannot read
  them), the README's ``autograd-kit lab`` as written, and the lab in Chromium: the workspace opens,
  a lesson and an exercise run, no instructor tool shows.
* ``[grade]``, an instructor, in a folder that holds no checkout: the README's round trip (init,
  release, collect, autograde, summary, feedback, export) as written.

The environments are real installs, ``pip install <wheel>[extra]`` from pip's cache, side by side:
that each extra brings what its user needs is part of what is tested, so no ``--no-deps``
shortcut (each of the two big ones is about 500 MB and 90 s from a warm cache on two cores).
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest

from kit_paths import ROOT

pytestmark = pytest.mark.slow

PS1, NOTEBOOK = "ps1_autograd_basics", "autograd_basics.ipynb"
VERSION = re.search(r'^__version__ = "(.+)"$', (ROOT / "autograd_core" / "__init__.py").read_text(), re.M).group(1)
EXTRAS = ("base", "lab", "grade")


def run(command: list[str] | str, cwd: Path, env: dict | None = None, timeout: float = 900,
        status: int | None = 0) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          shell=isinstance(command, str))
    if status is not None:
        assert done.returncode == status, (command, done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    return done


@pytest.fixture(scope="module")
def outside(request) -> Path:
    """A folder outside the checkout (and outside /tmp, where a kit is rarely installed) for everything here."""
    folder = Path(tempfile.mkdtemp(prefix="kit-packaging-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    return folder


@pytest.fixture(scope="module")
def dist(outside) -> Path:
    """The sdist (from the tracked files alone) and the wheel (from the sdist), checked by twine."""
    tracked = run(["git", "ls-files", "-z"], ROOT).stdout.split("\0")
    clone = outside / "clone"
    for name in filter(None, tracked):
        source, target = ROOT / name, clone / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    assert not (clone / "course_files" / "student").exists()
    asks = [sys.executable, "-c", "import sys; sys.path.insert(0, 'build_backend'); import course_backend; "
                                  "print(course_backend.get_requires_for_build_sdist())"]
    assert "nbgrader" in run(asks, clone).stdout  # the student versions are to be made: nbgrader is asked for
    out = outside / "dist"
    # this Python has setuptools and nbgrader; the wheel is then built from the sdist, isolated (setuptools alone)
    run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(out), str(clone)], clone)
    sdist = out / f"autograd_kit-{VERSION}.tar.gz"
    with tarfile.open(sdist) as archive:
        archive.extractall(outside / "unpacked", filter="data")
    unpacked = outside / "unpacked" / f"autograd_kit-{VERSION}"
    assert "nbgrader" not in run(asks, unpacked).stdout  # the sdist carries them
    run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(unpacked)], unpacked)
    checked = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(out.iterdir()))], outside)
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    return out


@pytest.fixture(scope="module")
def envs(dist, outside) -> dict[str, Path]:
    """``{extra: its venv}``: base (the engine alone), lab, grade; installed side by side."""
    wheel = dist / f"autograd_kit-{VERSION}-py3-none-any.whl"
    installs = {}
    for extra in EXTRAS:
        venv = outside / f"venv-{extra}"
        run([sys.executable, "-m", "venv", str(venv)], outside)
        target = str(wheel) if extra == "base" else f"{wheel}[{extra}]"
        installs[extra] = (venv, subprocess.Popen(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-input", "--disable-pip-version-check",
             target], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=outside))
    for extra, (_, install) in installs.items():
        out, _ = install.communicate(timeout=1800)
        assert install.returncode == 0, (extra, out[-3000:])
    return {extra: venv for extra, (venv, _) in installs.items()}


def environment(venv: Path, home: Path) -> dict[str, str]:
    """A user's shell with ``venv`` activated: its bin first on PATH, nothing of the checkout, Jupyter's folders fresh."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "VIRTUAL_ENV": str(venv), "TMPDIR": str(home)}
    for var, sub in [("JUPYTER_CONFIG_DIR", ".jupyter"), ("JUPYTER_DATA_DIR", ".local/share/jupyter"),
                     ("JUPYTER_RUNTIME_DIR", ".local/share/jupyter/runtime"), ("IPYTHONDIR", ".ipython"),
                     ("MPLCONFIGDIR", ".config/matplotlib")]:
        env[var] = str(home / sub)
    return env


def one_line_error(done: subprocess.CompletedProcess, status: int = 2) -> str:
    assert done.returncode == status and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr.strip()


def readme_blocks() -> dict[str, list[str]]:
    """The commands of the README's first section, by way in, and of its grading round trip."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = text.split("\n## ", 2)[1]
    assert first.startswith("Three ways in"), "the README's first section is its three ways in"
    blocks = re.findall(r"\*\*To (\w+)\*\*.*?```sh\n(.*?)```", first, re.S)
    grading = text.split("## Grading (instructors) and checking (students)", 1)[1].split("```sh\n", 1)[1].split("```")[0]
    found = {way: [line.split("  #")[0].strip() for line in block.strip().splitlines()] for way, block in blocks}
    found["round trip"] = [line.split("  #")[0].strip() for line in grading.strip().splitlines()]
    return found


# ---- the build -----------------------------------------------------------------------------------
def test_the_sdist_and_the_wheel_carry_the_course_and_the_licence(dist):
    sdist = tarfile.open(dist / f"autograd_kit-{VERSION}.tar.gz")
    in_sdist = [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]
    assert "LICENSE" in in_sdist and "build_backend/course_backend.py" in in_sdist
    assert not [name for name in in_sdist if name.startswith("tests/")]
    wheel = zipfile.ZipFile(dist / f"autograd_kit-{VERSION}-py3-none-any.whl")
    names = wheel.namelist()
    assert f"autograd_kit-{VERSION}.dist-info/licenses/LICENSE" in names
    assert "MIT License" in wheel.read(f"autograd_kit-{VERSION}.dist-info/licenses/LICENSE").decode()
    metadata = wheel.read(f"autograd_kit-{VERSION}.dist-info/METADATA").decode()
    assert f"Version: {VERSION}\n" in metadata and "License-Expression: MIT" in metadata
    for language in ("en", "zh"):
        lessons = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith(f"course_files/lessons/{language}/"))
        assert lessons == sorted(p.name for p in (ROOT / "notebooks" / language).glob("*.ipynb")) and len(lessons) >= 11
    assignments = sorted(p.name for p in (ROOT / "exercises").iterdir() if p.is_dir() and not p.name.startswith("_"))
    for assignment in assignments:
        notebook = next(p.name for p in (ROOT / "exercises" / assignment).glob("*.ipynb"))
        source = wheel.read(f"course_files/exercises/{assignment}/{notebook}").decode()
        handed_out = wheel.read(f"course_files/student/{assignment}/{notebook}").decode()
        assert "### BEGIN SOLUTION" in source and "### BEGIN HIDDEN TESTS" in source
        assert "BEGIN SOLUTION" not in handed_out and "BEGIN HIDDEN TESTS" not in handed_out
        assert "raise NotImplementedError()" in handed_out
    assert not [n for n in names if n.startswith("course_files/exercises/_src") or n.endswith("build.py")]
    assert "learner/jupyter_config/labconfig/page_config.json" in names
    entry_points = wheel.read(f"autograd_kit-{VERSION}.dist-info/entry_points.txt").decode()
    assert "kitgrade = grader.console:kitgrade" in entry_points and "autograd-kit = learner.cli:main" in entry_points


# ---- pip install autograd-kit: the engine alone ------------------------------------------------------
def test_the_engine_alone_runs_and_each_command_names_the_extra_it_needs(envs, outside):
    venv, home = envs["base"], outside / "home-base"
    env = environment(venv, home)
    python = str(venv / "bin" / "python")
    installed = json.loads(run([python, "-m", "pip", "list", "--format=json"], home, env).stdout)
    assert {p["name"].lower() for p in installed} - {"pip", "setuptools"} == {"autograd-kit", "numpy"}
    shown = run([python, "-c", "import sys, autograd_core as torch\nx = torch.ones(2, requires_grad=True)\n"
                               "(x * x).sum().backward()\nprint(x.grad)\nprint(torch.__file__)\nprint(sys.path)"], home, env)
    grad, where, path = shown.stdout.splitlines()
    assert grad == "tensor([2., 2.])" and where.startswith(str(venv)) and str(ROOT) not in path
    assert "pip install 'autograd-kit[grade]' (to grade a class) or pip install 'autograd-kit[lab]'" in \
        one_line_error(run(["kitgrade", "--help"], home, env, status=None))
    assert "pip install 'autograd-kit[lab]' (to check your own exercises)" in \
        one_line_error(run(["kitgrade", "check", "x.ipynb"], home, env, status=None))
    assert one_line_error(run(["autograd-kit", "lab"], home, env, status=None)) == \
        "autograd-kit lab: JupyterLab is not installed in this Python: pip install 'autograd-kit[lab]'"
    imported = run([python, "-c", "import graph_explorer"], home, env, status=1)
    assert imported.stderr.strip().splitlines()[-1] == ("ModuleNotFoundError: graph_explorer draws with matplotlib, "
                                                         "which is not installed in this Python: pip install 'autograd-kit[lab]'")
    assert run(["autograd-kit", "--version"], home, env).stdout == f"autograd-kit {VERSION}\n"
    made = run(["autograd-kit", "workspace", "mine"], home, env)  # a plain copy: no extra needed
    assert "Your copy of the course is in mine/" in made.stdout and (home / "mine" / "zh" / "exercises").is_dir()


# ---- [lab]: a learner ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def learner(envs, outside):
    """The lab environment, a learner's home and their workspace made by ``autograd-kit workspace``."""
    venv, home = envs["lab"], outside / "home-lab"
    env = environment(venv, home)
    made = run(["autograd-kit", "workspace", "my-notebooks"], home, env)
    return venv, home, env, home / "my-notebooks", made.stdout


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def test_a_learners_workspace_holds_the_course_blank_and_keeps_their_edits(learner):
    venv, home, env, mine, said = learner
    assert "lessons and 3 exercises, each in en/ and zh/" in said and "Start with en/01_recording_history.ipynb" in said
    for language in ("en", "zh"):
        assert sorted(p.name for p in (mine / language).glob("*.ipynb")) == \
            sorted(p.name for p in (ROOT / "notebooks" / language).glob("*.ipynb"))
        handed_out = sorted((mine / language / "exercises").glob("*/*.ipynb"))
        assert len(handed_out) == 3
        for path in handed_out:
            text = path.read_text(encoding="utf-8")
            assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and "### END" not in text
            assert json.loads(text)["metadata"]["kitgrade"]["language"] == language
    edited = {mine / "en" / "01_recording_history.ipynb": None, mine / "zh" / "exercises" / PS1 / NOTEBOOK: None}
    for path in edited:
        path.write_text(path.read_text(encoding="utf-8").replace('"source": [', '"source": [\n    "# mine\\n",', 1),
                        encoding="utf-8")
        edited[path] = path.read_bytes()
    again = run(["autograd-kit", "workspace", "my-notebooks"], home, env)
    assert "your copy of the course is up to date" in again.stdout
    assert all(path.read_bytes() == content for path, content in edited.items())
    assert not list(mine.rglob("*.new.*"))
    installed = run([str(venv / "bin" / "python"), "-c", "import course_files, grader, learner; "
                     "print(course_files.root(), grader.__file__, learner.__file__)"], home, env).stdout.split()
    assert all(p.startswith(str(site_packages(venv))) for p in installed), installed


def test_lesson_01_runs_headless_in_the_learners_environment(learner):
    venv, home, env, mine, _ = learner
    program = ("import nbformat, sys\nfrom nbclient import NotebookClient\n"
               "path = sys.argv[1]\nnb = nbformat.read(path, as_version=4)\n"
               "NotebookClient(nb, timeout=300, kernel_name='python3', resources={'metadata': {'path': 'en'}}).execute()\n"
               "print(sum(1 for c in nb.cells if c.cell_type == 'code' and c.execution_count))\n"
               "print([o.get('ename') for c in nb.cells for o in c.get('outputs', []) if o.output_type == 'error'])")
    done = run([str(venv / "bin" / "python"), "-c", program, "en/01_recording_history.ipynb"], mine, env)
    ran, errors = done.stdout.splitlines()[-2:]
    assert int(ran) > 5 and errors == "[]", done.stdout


def solved_copy(venv: Path, env: dict, home: Path, target: Path, language: str = "en", **answers: str) -> Path:
    """The learner's blank copy with every task answered as the installed exercise's source answers it."""
    program = f'''
import json, sys, course_files
name = {PS1!r} + ("_zh" if {language!r} == "zh" else "")
source = json.loads((course_files.exercises() / name / {NOTEBOOK!r}).read_text())
model = {{c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in source["cells"]
         if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {{}}).get("solution")}}
answers = json.loads(sys.argv[2])
nb = json.loads(open(sys.argv[1]).read())
for cell in nb["cells"]:
    grade_id = cell["metadata"].get("nbgrader", {{}}).get("grade_id")
    if cell["cell_type"] == "code" and grade_id in model:
        code = answers.get(grade_id, model[grade_id])
        cell["source"] = "\\n".join(line for line in code.splitlines() if "### " not in line)
open(sys.argv[1], "w").write(json.dumps(nb))
'''
    target.parent.mkdir(parents=True, exist_ok=True)
    blank = home / "my-notebooks" / language / "exercises" / PS1 / NOTEBOOK
    if target != blank:
        shutil.copyfile(blank, target)
    run([str(venv / "bin" / "python"), "-c", program, str(target), json.dumps(answers)], home, env)
    return target


def test_kitgrade_check_on_a_blank_and_a_solved_exercise(learner):
    venv, home, env, mine, _ = learner
    blank = run(["kitgrade", "check", f"en/exercises/{PS1}/{NOTEBOOK}"], mine, env, status=1)
    assert "not answered yet: the task still raises NotImplementedError" in blank.stdout
    assert blank.stdout.splitlines()[-1].startswith(f"total: 0/11 (visible and hidden tests of the kit's exercise {PS1};")
    solved = solved_copy(venv, env, home, home / "solved" / NOTEBOOK)
    passed = run(["kitgrade", "check", str(solved)], home, env)
    assert passed.stdout.splitlines()[-1].startswith("total: 11/11 (visible and hidden tests"), passed.stdout
    secret = next(site_packages(venv).glob(f"course_files/exercises/{PS1}/{NOTEBOOK}"))
    peeking = solved_copy(venv, env, home, home / "peeking" / NOTEBOOK, second_derivative=(
        f"def second_derivative(f, x0):\n    open({str(secret)!r}).read()\n    return 12.0\n"))
    refused = run(["kitgrade", "check", str(peeking)], home, env, status=1)
    line = next(line for line in refused.stdout.splitlines() if "test_second_derivative" in line)
    assert "PermissionError" in line, refused.stdout  # the installed exercises are not the notebook's to read


def test_an_instructors_command_in_a_learners_install_names_the_grade_extra(learner):
    """``[lab]`` brings nbgrader, so an instructor's command starts; the feedback page's formulas need
    ``[grade]``'s latex2mathml: one line naming it, not a plain page for each student who wrote one."""
    venv, home, env, _, _ = learner
    said = one_line_error(run(["kitgrade", "feedback", PS1], home, env, status=None))  # (said before a course is looked for)
    assert said == ("kitgrade feedback: latex2mathml is not installed in this Python; "
                    "pip install 'autograd-kit[grade]' (to grade a class)"), said


def wait_for_url(process: subprocess.Popen, log: Path, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"(http://(?:localhost|127\.0\.0\.1):\d+/lab\?token=\w+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        assert process.poll() is None, log.read_text()
        time.sleep(0.5)
    raise AssertionError(f"no URL printed within {timeout} s:\n{log.read_text()}")


def wait_until_serving(process: subprocess.Popen, log: Path, url: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise AssertionError(f"not serving within {timeout} s:\n{log.read_text()}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, as the learner stops it
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_the_readme_ways_in_are_the_ones_tested():
    blocks = readme_blocks()
    assert blocks["learn"] == ["pip install 'autograd-kit[lab]'", "autograd-kit lab"]
    assert blocks["teach"] == ["pip install 'autograd-kit[grade]'", "kitgrade init course --course-id ad101"]
    assert blocks["contribute"] == ["make lab", "make test"]
    assert blocks["round trip"][:2] == ["kitgrade init course --course-id ad101", "cd course"]


def test_the_readme_learners_autograd_kit_lab_as_written(learner, outside):
    venv, _, _, _, _ = learner
    home = outside / "home-readme-learner"
    env = environment(venv, home)
    log = home / "lab.log"
    with open(log, "w") as out:  # `autograd-kit lab`, in a new folder, with no screen (it prints the URL)
        process = subprocess.Popen(readme_blocks()["learn"][1].split(), cwd=home, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        url = wait_for_url(process, log)
        base, token = url.split("/lab?token=")
        with urllib.request.urlopen(f"{base}/api/contents/en?token={token}", timeout=30) as response:  # (its root)
            listed = json.loads(response.read())
        assert "01_recording_history.ipynb" in [entry["name"] for entry in listed["content"]]
    finally:
        stop(process)
    text = log.read_text()
    assert "Your copy of the course is in my-notebooks/" in text and "No nbgrader_config.py" not in text, text


def test_the_learners_lab_in_chromium(learner, outside, request):
    from browser_support import Notebook, artifacts_folder, launch_chromium

    venv, home, env, mine, _ = learner
    shots = next(artifacts_folder(request, ROOT / "artifacts" / "packaging", "the learner's lab from the wheel"))
    solved_copy(venv, env, home, mine / "en" / "exercises" / PS1 / NOTEBOOK)  # as the learner leaves it, solved
    port, token = _free_port(), secrets.token_hex(16)
    log = home / "lab-browser.log"
    with open(log, "w") as out:
        process = subprocess.Popen(["autograd-kit", "lab", "my-notebooks", "--no-browser", "--", f"--ServerApp.port={port}",
                                    "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                                    "--ServerApp.ip=127.0.0.1"], cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        lab = type("Lab", (), {"url": f"http://127.0.0.1:{port}", "token": token})()
        wait_until_serving(process, log, f"{lab.url}/api/status?token={token}")
        browser_cm = launch_chromium("CI must run the packaging test's browser part (.ci/run installs Chromium)")
        browser = next(browser_cm)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}, locale="en-US").new_page()
            page.set_default_timeout(60_000)
            page.goto(f"{lab.url}/lab/workspaces/learner?token={token}")
            for name in ("en", "zh", "README.md"):
                page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$")).first.wait_for()
            page.wait_for_timeout(5000)  # (the news prompt comes a few seconds after the page)
            page.screenshot(path=str(shots / "1-workspace.png"))
            assert page.get_by_text("official Jupyter news").count() == 0
            labels = page.locator(".lm-MenuBar-itemLabel").all_text_contents()
            assert "Nbgrader" not in labels, labels  # no Formgrader (nor Assignments, Courses) menu
            assert page.get_by_text("Create Assignment").count() == 0
            with pytest.raises(urllib.error.HTTPError):  # and no formgrader behind it either
                urllib.request.urlopen(f"{lab.url}/formgrader?token={token}", timeout=30)
            for path, name in (("en/01_recording_history.ipynb", "lesson"), (f"en/exercises/{PS1}/{NOTEBOOK}", "exercise")):
                notebook = Notebook(page, lab, path, f"learner-{name}")
                prompts = notebook.run_all()
                notebook.screenshot(shots / f"2-{name}-ran.png")
                assert not notebook.errors(), notebook.errors()
                assert all(p.strip("[]:").isdigit() for p in prompts), prompts
        finally:
            next(browser_cm, None)
    finally:
        stop(process)
    assert "No nbgrader_config.py" not in log.read_text()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- [grade]: an instructor ----------------------------------------------------------------------------
def test_the_readme_instructors_round_trip_from_the_wheel_alone(envs, outside):
    venv, home = envs["grade"], outside / "home-grade"
    env = environment(venv, home)
    versions = run(["kitgrade", "--version"], home, env).stdout
    assert re.fullmatch(rf"autograd-kit {re.escape(VERSION)}\+[0-9a-f]{{10}} nbgrader 0\.9\.\d+\n", versions), versions
    commands = readme_blocks()["round trip"]
    assert commands[0] == readme_blocks()["teach"][1]
    here = home
    for command in commands:
        if command.startswith("cd "):
            here = here / command[3:]
            continue
        if command.startswith("kitgrade collect"):
            _downloads(venv, env, here)
        done = run(command.split(), here, env, status=None)
        said = done.stdout + done.stderr
        assert "Traceback" not in said and "internal error" not in said, (command, said)
        if command == "kitgrade export":  # the written answers wait for a person: refused, as the README says
            assert done.returncode == 1 and "not exported: written answers wait for a manual grade" in done.stderr, said
            done = run(command.split() + ["--allow-manual-pending"], here, env)
        else:
            assert done.returncode == 0, (command, said)
        if command.startswith("kitgrade init"):
            assert "6 assignment(s) staged in source/" in done.stdout
        if command.startswith("kitgrade autograde"):
            assert re.search(r"alice +11 / 16", done.stdout) and re.search(r"bob +0 / 16", done.stdout), done.stdout
    course = home / "course"
    assert str(ROOT) not in (course / "nbgrader_config.py").read_text()  # the packaged exercises, not a checkout's
    bob = (course / "feedback" / "bob" / PS1 / "autograd_basics.html").read_text(encoding="utf-8")
    assert "not answered yet" in bob and "BEGIN HIDDEN TESTS" not in bob
    eve = (course / "feedback" / "eve" / PS1 / "autograd_basics.html").read_text(encoding="utf-8")
    assert "PermissionError" in eve  # the installed exercises are not a submission's to read
    assert (course / "reports" / f"{PS1}.html").is_file()
    rows = list(__import__("csv").DictReader(open(course / "grades.csv", encoding="utf-8")))
    assert {r["score"] for r in rows if r["assignment"] != PS1} == {""}  # nobody submitted those yet
    cluster = run(["kitgrade", "autograde", PS1, "--force", "--cluster", "local:1"], course, env, status=None)
    assert "pip install 'autograd-kit[cluster]'" in one_line_error(cluster)


def _downloads(venv: Path, env: dict, course: Path) -> None:
    """``downloads.zip`` as Canvas names a download: alice solved it (and wrote her answers), bob left it
    blank, eve peeked at the installed exercise."""
    program = f'''
import json, zipfile, course_files, sys
release = json.loads(open("release/{PS1}/{NOTEBOOK}").read())
source = json.loads((course_files.exercises() / "{PS1}" / "{NOTEBOOK}").read_text())
model = {{c["metadata"]["nbgrader"]["grade_id"]: "".join(c["source"]) for c in source["cells"]
         if c["cell_type"] == "code" and c["metadata"].get("nbgrader", {{}}).get("solution")}}
def answered(peek=False):
    nb = json.loads(json.dumps(release))
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {{}}).get("grade_id")
        if cell["cell_type"] == "markdown" and cell["metadata"].get("nbgrader", {{}}).get("solution"):
            cell["source"] = "My answer, in my own words."  # a written answer: it waits for a person
        if cell["cell_type"] == "code" and grade_id in model:
            cell["source"] = "\\n".join(l for l in model[grade_id].splitlines() if "### " not in l)
            if peek and grade_id == "second_derivative":
                cell["source"] = "def second_derivative(f, x0):\\n    return len(open(%r).read())" % str(
                    course_files.exercises() / "{PS1}" / "{NOTEBOOK}")
    return nb
with zipfile.ZipFile("downloads.zip", "w") as archive:
    archive.writestr("alice_1001_2001_{NOTEBOOK}", json.dumps(answered()))
    archive.writestr("bob_1002_2002_{NOTEBOOK}", json.dumps(release))
    archive.writestr("eve_1003_2003_{NOTEBOOK}", json.dumps(answered(peek=True)))
'''
    run([str(venv / "bin" / "python"), "-c", program], course, env)
