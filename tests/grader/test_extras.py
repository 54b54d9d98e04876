"""Each extra of ``pyproject.toml`` alone is enough for its commands: installed by itself in a fresh
environment (from this checkout, as ``pip install -e '.[extra]'``), each command runs.

``grade``: a course's round trip with ``kitgrade`` up to ``summary`` (its figures need matplotlib);
``cluster``: ``autograde --cluster local:1``; ``hub``: JupyterHub and the kit's hub script.
Slow (each environment is a few hundred MB from pip's cache); ``make test`` runs it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from kit_paths import ROOT
from course_snapshots import ASSIGNMENT, FIXTURES
from test_grader_faults import _solution

pytestmark = pytest.mark.slow


EXTRAS = ("grade", "cluster", "hub")
#: ``make hub-env`` (which ``make test`` runs first) builds this one with the ``hub`` extra alone
HUB_ENV = ROOT / ".venv-hub"


@pytest.fixture(scope="module")
def environments(request) -> dict[str, Path]:
    """A new venv per extra with nothing but the kit and that extra (installed side by side: pip mostly
    waits on the package index); ``{extra: its bin folder}``. The hub's is ``make hub-env``'s if it is built."""
    # outside /tmp, where kits are usually installed (one under /tmp: tests/grader/test_grader_walls.py)
    tmp = Path(tempfile.mkdtemp(prefix="kit-extras-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    found = {"hub": HUB_ENV / "bin"} if (HUB_ENV / ".installed").exists() else {}
    installs = {}
    for extra in (e for e in EXTRAS if e not in found):
        subprocess.run([sys.executable, "-m", "venv", str(tmp / extra)], check=True)
        installs[extra] = subprocess.Popen([str(tmp / extra / "bin" / "python"), "-m", "pip", "install", "--quiet",
                                            "--no-input", "--disable-pip-version-check", "-e", f"{ROOT}[{extra}]"],
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        found[extra] = tmp / extra / "bin"
    for extra, install in installs.items():
        out, _ = install.communicate(timeout=1800)
        assert install.returncode == 0, (extra, out[-3000:])
    return found


def command(bin_dir: Path, *args: str, cwd: Path | None = None) -> str:
    run = subprocess.run([str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert run.returncode == 0, (args, run.stdout[-2000:], run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr
    return run.stdout


@pytest.fixture(scope="module")
def graded_course(environments, tmp_path_factory) -> Path:
    """A course graded and summarized with the ``grade`` extra alone."""
    bin_dir, course = environments["grade"], tmp_path_factory.mktemp("extras") / "course"
    command(bin_dir, "kitgrade", "init", str(course), "--course-id", "x101", "--exercises", str(FIXTURES / "exercises"))
    with open(course / "nbgrader_config.py", "a") as handle:
        handle.write("\nc.KitGrade.workers = 1\n")
    command(bin_dir, "kitgrade", "release", ASSIGNMENT, "--no-exchange", cwd=course)
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    folder = course / "submitted" / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(_solution(release, source), folder / f"{ASSIGNMENT}.ipynb")
    assert re.search(r"alice +7 / 7", command(bin_dir, "kitgrade", "autograde", ASSIGNMENT, "--quiet", cwd=course))
    command(bin_dir, "kitgrade", "summary", ASSIGNMENT, cwd=course)
    assert "data:image/png;base64," in (course / "reports" / f"{ASSIGNMENT}.html").read_text()
    return course


def test_the_grade_extra_alone_runs_kitgrade_up_to_the_summary(graded_course):
    assert (graded_course / "autograded" / "alice" / ASSIGNMENT).is_dir()


def test_the_cluster_extra_alone_grades_on_a_local_dask_cluster(environments, graded_course):
    out = command(environments["cluster"], "kitgrade", "autograde", ASSIGNMENT, "--quiet", "--force", "--cluster", "local:1",
                  cwd=graded_course)
    assert re.search(r"alice +7 / 7", out)


def test_the_hub_extra_alone_runs_jupyterhub_and_the_kits_hub_script(environments):
    bin_dir = environments["hub"]
    assert command(bin_dir, "jupyterhub", "--version").strip().startswith("5.")
    assert "usage: python -m kithub" in command(bin_dir, "python", "-m", "kithub", "--help")
    command(bin_dir, "kitgrade", "--help")
    command(bin_dir, "python", "-c", "import jupyterlab, nbgrader.auth, pamela")
