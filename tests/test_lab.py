"""``make lab``: students run their own copies of the lessons; the tracked notebooks stay clean.

The copies live in ``my-notebooks/`` (outside version control), made from ``notebooks/``
by ``scripts/lab.py``; a lesson can be reset; a tracked notebook that was run in place
fails the build check with a message that says so. The kit's JupyterLab settings switch
off the news prompt.
"""
import importlib.util
import json
import re
import shutil
import subprocess

import nbformat
import pytest

from conftest import ROOT


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab = _load("kit_lab_launcher_test", ROOT / "scripts" / "lab.py")
build = _load("course_build_test", ROOT / "notebooks" / "build.py")


@pytest.fixture
def course(tmp_path):
    """A copy of the course folder (sources and built notebooks) to run the flow on."""
    copy = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return copy


def lessons(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.glob("*/*.ipynb"))


def run_in_place(path):
    """What JupyterLab's autosave leaves behind after a student ran a notebook: outputs and counts."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="tensor([1.])\n")]
    nbformat.write(nb, path)


def test_the_lab_starts_on_working_copies_of_every_lesson(course, tmp_path):
    work = tmp_path / "my-notebooks"
    assert lab.prepare_working_copies(course, work) == []
    assert lessons(work) == lessons(course) and len(lessons(work)) >= 18
    for name in lessons(work):
        assert (work / name).read_bytes() == (course / name).read_bytes()


def test_running_a_copy_leaves_the_tracked_lessons_clean(course, tmp_path):
    work = tmp_path / "my-notebooks"
    lab.prepare_working_copies(course, work)
    run_in_place(work / "en" / "08_under_the_hood.ipynb")
    assert build.problems(course) == []
    lab.prepare_working_copies(course, work)  # the next `make lab`: the student's work is kept
    assert build.ran_in_place(work / "en" / "08_under_the_hood.ipynb")


def test_reset_restores_one_lesson_in_both_languages(course, tmp_path):
    work = tmp_path / "my-notebooks"
    lab.prepare_working_copies(course, work)
    for lang in ("en", "zh"):
        run_in_place(work / lang / "08_under_the_hood.ipynb")
    run_in_place(work / "en" / "07_higher_derivatives.ipynb")
    reset = lab.reset_lesson("08", course, work)
    assert sorted(p.relative_to(work).as_posix() for p in reset) == ["en/08_under_the_hood.ipynb",
                                                                      "zh/08_under_the_hood.ipynb"]
    assert not build.ran_in_place(work / "en" / "08_under_the_hood.ipynb")
    assert build.ran_in_place(work / "en" / "07_higher_derivatives.ipynb")  # other lessons untouched
    assert lab.reset_lesson("8", course, work) == reset
    with pytest.raises(SystemExit, match="no single lesson"):
        lab.reset_lesson("0_", course, work)


def test_a_lesson_changed_in_the_course_is_pointed_out_not_overwritten(course, tmp_path):
    work = tmp_path / "my-notebooks"
    lab.prepare_working_copies(course, work)
    mine = (work / "zh" / "03_nonscalar_outputs.ipynb").read_bytes()
    (course / "zh" / "03_nonscalar_outputs.ipynb").write_text("{}")  # a new version of the lesson
    notes = lab.prepare_working_copies(course, work)
    assert len(notes) == 1 and "zh/03_nonscalar_outputs.ipynb" in notes[0] and "LESSON=03" in notes[0]
    assert (work / "zh" / "03_nonscalar_outputs.ipynb").read_bytes() == mine


def test_a_tracked_notebook_run_in_place_fails_the_check_saying_what_happened(course):
    run_in_place(course / "en" / "02_backward_and_grad.ipynb")
    found = build.problems(course)
    assert len(found) == 1
    assert "notebooks/en/02_backward_and_grad.ipynb holds outputs: it was run and saved in place" in found[0]
    assert "my-notebooks/" in found[0] and "git checkout -- notebooks/en/02_backward_and_grad.ipynb" in found[0]


def test_an_edited_source_still_asks_for_a_rebuild(course):
    source = course / "source" / "04_stopping_gradients.lesson"
    source.write_text(source.read_text(encoding="utf-8").replace("Stopping gradients", "Stopping grads"),
                      encoding="utf-8")
    found = build.problems(course)
    assert found and all("run: python notebooks/build.py" in f for f in found)


def test_lab_settings_switch_off_the_news_prompt_and_keep_other_settings(tmp_path):
    (tmp_path / "overrides.json").write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "dark"}}))
    path = lab.write_lab_settings(tmp_path)
    settings = json.loads(path.read_text())
    assert settings["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert settings["@jupyterlab/apputils-extension:themes"] == {"theme": "dark"}


def test_make_lab_runs_the_launcher_and_the_copies_are_not_tracked():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^lab:.*\n\t\$\(BIN\)/python scripts/lab.py$", makefile, re.M)
    assert re.search(r"^reset-lesson:.*\n\t\$\(BIN\)/python scripts/lab.py --reset \$\(LESSON\)$", makefile, re.M)
    assert "/my-notebooks/" in (ROOT / ".gitignore").read_text().splitlines()
    if (ROOT / ".git").exists() and shutil.which("git"):  # and git agrees
        ignored = subprocess.run(["git", "check-ignore", "-q", "my-notebooks/en/01_recording_history.ipynb"], cwd=ROOT)
        assert ignored.returncode == 0


def test_the_start_notes_a_missing_chinese_font_once_and_is_quiet_with_one(monkeypatch):
    from graph_explorer import fonts

    monkeypatch.setattr(fonts, "find_chinese_font", lambda: None)
    assert "make fonts" in lab.font_note()
    monkeypatch.setattr(fonts, "find_chinese_font", lambda: "WenQuanYi Micro Hei")
    assert lab.font_note() is None
