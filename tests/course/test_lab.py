"""A learner's copy of the course (``autograd-kit workspace``/``lab``/``reset``, ``learner/``), and the
tracked notebooks kept clean.

The workspace holds every lesson in both languages and every exercise as a student receives it;
what the learner changed is never overwritten (a newer version arrives beside it); ``reset`` gives a
fresh copy of one item in one language and keeps the learner's. The lab's own settings: no news
prompt, nbgrader's instructor tools switched off (the browser test sees it in a real lab). A tracked
notebook run in place fails the build check with a message that says so.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

import course_files
from kit_paths import ROOT
from learner import cli, lab, workspace


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load("course_build_test", ROOT / "notebooks" / "build.py")
LESSON_COUNT = len(course_files.lessons("en"))


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A private copy of the installed course (``course_files``) that a test may change as a new version would."""
    copy = tmp_path / "course_files"
    for part in ("lessons", "exercises", "student"):
        shutil.copytree(course_files.root() / part, copy / part,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "_src", "*.py", "*.md"))
    monkeypatch.setattr(course_files, "root", lambda: copy)
    return copy


@pytest.fixture
def notebooks(tmp_path):
    """A copy of the course's notebooks folder (sources and built notebooks) for the build check."""
    copy = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return copy


def files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p.name != workspace.RECORD)


def run_in_place(path):
    """What JupyterLab's autosave leaves behind after a learner ran a notebook: outputs and counts."""
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    cell.execution_count = 1
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="tensor([1.])\n")]
    nbformat.write(nb, path)


def test_a_workspace_holds_every_lesson_in_both_languages_and_every_exercise_blank(course, tmp_path):
    result = workspace.update(tmp_path / "mine")
    assert result.created
    held = files(tmp_path / "mine")
    for language in ("en", "zh"):
        lessons = [p for p in held if p.startswith(f"{language}/") and p.count("/") == 1]
        assert lessons == [f"{language}/{p.name}" for p in sorted((course / "lessons" / language).glob("*.ipynb"))]
        assert len(lessons) == LESSON_COUNT >= 11
        for lesson in lessons:
            assert (tmp_path / "mine" / lesson).read_bytes() == (course / "lessons" / lesson).read_bytes()
    exercises = [p for p in held if "/exercises/" in p]
    assert {p.split("/")[0] for p in exercises} == {"en", "zh"} and len(exercises) == 6
    assert "en/exercises/ps1_autograd_basics/autograd_basics.ipynb" in exercises
    assert "zh/exercises/ps1_autograd_basics/autograd_basics.ipynb" in exercises  # from ps1_autograd_basics_zh
    for path in exercises:
        text = (tmp_path / "mine" / path).read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and "raise NotImplementedError()" in text
        language = json.loads(text)["metadata"]["kitgrade"]["language"]
        assert path.startswith(language + "/")
    assert "README.md" in held


def test_a_second_run_keeps_what_the_learner_changed(course, tmp_path):
    mine = tmp_path / "mine"
    workspace.update(mine)
    run_in_place(mine / "en" / "08_under_the_hood.ipynb")
    exercise = mine / "zh" / "exercises" / "ps2_build_your_own" / "build_your_own.ipynb"
    exercise.write_text(exercise.read_text(encoding="utf-8").replace("NotImplementedError()", "NotImplementedError() # mine"),
                        encoding="utf-8")
    changed = {p: (mine / p).read_bytes() for p in ("en/08_under_the_hood.ipynb", str(exercise.relative_to(mine)))}
    (mine / "en" / "01_recording_history.ipynb").unlink()  # a file the learner deleted comes back
    result = workspace.update(mine)
    assert not result.created and not result.replaced and not result.beside
    assert result.added == ["en/01_recording_history.ipynb"]
    assert {p: (mine / p).read_bytes() for p in changed} == changed
    assert not [p for p in files(mine) if ".new." in p]


def test_a_newer_version_replaces_an_unchanged_copy_and_arrives_beside_a_changed_one(course, tmp_path):
    mine = tmp_path / "mine"
    workspace.update(mine)
    run_in_place(mine / "zh" / "03_nonscalar_outputs.ipynb")
    theirs = (mine / "zh" / "03_nonscalar_outputs.ipynb").read_bytes()
    for lesson in ("zh/03_nonscalar_outputs.ipynb", "en/03_nonscalar_outputs.ipynb"):  # the course's next version
        path = course / "lessons" / lesson
        path.write_text(path.read_text(encoding="utf-8").replace("gradient", "gradient (new)", 1), encoding="utf-8")
    result = workspace.update(mine)
    assert result.replaced == ["en/03_nonscalar_outputs.ipynb"]  # the learner had not changed it
    assert (mine / "en" / "03_nonscalar_outputs.ipynb").read_bytes() == (course / "lessons/en/03_nonscalar_outputs.ipynb").read_bytes()
    assert result.beside == [("zh/03_nonscalar_outputs.ipynb", "zh/03_nonscalar_outputs.new.ipynb")]
    assert (mine / "zh" / "03_nonscalar_outputs.ipynb").read_bytes() == theirs
    assert (mine / "zh" / "03_nonscalar_outputs.new.ipynb").read_bytes() == (course / "lessons/zh/03_nonscalar_outputs.ipynb").read_bytes()
    again = workspace.update(mine)  # said once
    assert not (again.added or again.replaced or again.beside)
    assert workspace.reset(mine, "zh/03") == [("zh/03_nonscalar_outputs.ipynb", "zh/03_nonscalar_outputs.mine.ipynb")]
    assert not (mine / "zh" / "03_nonscalar_outputs.new.ipynb").exists()  # the newer version is the file itself now
    assert (mine / "zh" / "03_nonscalar_outputs.mine.ipynb").read_bytes() == theirs
    assert not (workspace.update(mine).added or workspace.update(mine).beside)


def test_a_copy_made_by_the_earlier_make_lab_becomes_a_workspace_with_the_exercises(course, tmp_path):
    mine = tmp_path / "my-notebooks"
    record = {}
    for language in ("en", "zh"):  # what the first `make lab` made: the lessons and their digests
        for lesson in course_files.lessons(language):
            (mine / language).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lesson, mine / language / lesson.name)
            record[f"{language}/{lesson.name}"] = workspace._digest(lesson)
    (mine / workspace.RECORD).write_text(json.dumps(record))
    run_in_place(mine / "en" / "02_backward_and_grad.ipynb")
    ran = (mine / "en" / "02_backward_and_grad.ipynb").read_bytes()
    result = workspace.update(mine)
    assert not result.created and not result.replaced and not result.beside
    assert sorted(result.added) == sorted(["README.md"] + [p for p in files(mine) if "/exercises/" in p])
    assert (mine / "en" / "02_backward_and_grad.ipynb").read_bytes() == ran


def test_reset_gives_a_fresh_copy_in_one_language_and_keeps_the_learners(course, tmp_path, capsys):
    mine = tmp_path / "mine"
    workspace.update(mine)
    for language in ("en", "zh"):
        run_in_place(mine / language / "08_under_the_hood.ipynb")
    ran = (mine / "en" / "08_under_the_hood.ipynb").read_bytes()
    assert workspace.reset(mine, "en/8") == [("en/08_under_the_hood.ipynb", "en/08_under_the_hood.mine.ipynb")]
    assert not build.ran_in_place(mine / "en" / "08_under_the_hood.ipynb")
    assert (mine / "en" / "08_under_the_hood.mine.ipynb").read_bytes() == ran
    assert build.ran_in_place(mine / "zh" / "08_under_the_hood.ipynb")  # the other language untouched
    run_in_place(mine / "en" / "08_under_the_hood.ipynb")
    assert workspace.reset(mine, "en/08_under_the_hood.ipynb")[0][1] == "en/08_under_the_hood.mine-2.ipynb"
    assert workspace.reset(mine, "en/08")[0][1] is None  # nothing of the learner's to keep
    assert (mine / "en" / "08_under_the_hood.mine.ipynb").read_bytes() == ran  # the first backup is kept


def test_reset_of_an_exercise_and_names_it_does_not_know(course, tmp_path, capsys):
    mine = tmp_path / "mine"
    workspace.update(mine)
    answer = mine / "zh" / "exercises" / "ps1_autograd_basics" / "autograd_basics.ipynb"
    answer.write_text(answer.read_text(encoding="utf-8").replace("raise NotImplementedError()", "return 0.0", 1),
                      encoding="utf-8")
    assert cli.main(["reset", "zh/ps1", "--workspace", str(mine)]) == 0
    out = capsys.readouterr().out
    assert "reset:" in out and "autograd_basics.mine.ipynb" in out
    assert (answer.with_name("autograd_basics.mine.ipynb")).read_text(encoding="utf-8").count("return 0.0") == 1
    assert answer.read_bytes() == (course / "student" / "ps1_autograd_basics_zh" / "autograd_basics.ipynb").read_bytes()
    for name, said in (("08", "name the language too: en/08_under_the_hood or zh/08_under_the_hood"),
                       ("en/99", "no lesson or exercise 'en/99'"), ("en/ps", "more than one lesson or exercise")):
        assert cli.main(["reset", name, "--workspace", str(mine)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("autograd-kit reset: ") and said in err and len(err.strip().splitlines()) == 1, err
    assert cli.main(["reset", "en/08", "--workspace", str(tmp_path)]) == 2
    assert "is not a workspace of the course; `autograd-kit workspace" in capsys.readouterr().err


def test_the_workspace_command_says_what_it_made_and_refuses_a_folder_of_other_files(course, tmp_path, capsys):
    assert cli.main(["workspace", str(tmp_path / "mine")]) == 0
    out = capsys.readouterr().out
    assert f"{LESSON_COUNT} lessons and 3 exercises, each in en/ and zh/" in out
    assert "Start with en/01_recording_history.ipynb" in out and "kitgrade check" in out
    assert cli.main(["workspace", str(tmp_path / "mine")]) == 0
    assert "your copy of the course is up to date" in capsys.readouterr().out
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "thesis.tex").write_text("mine")
    assert cli.main(["workspace", str(tmp_path / "other")]) == 2
    assert "already holds other files" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "other").iterdir()] == ["thesis.tex"]


def test_the_workspace_is_found_from_inside_it(course, tmp_path, monkeypatch):
    workspace.update(tmp_path / "mine")
    assert workspace.default_workspace(tmp_path / "mine" / "en" / "exercises") == tmp_path / "mine"
    assert workspace.default_workspace(tmp_path) == tmp_path / "my-notebooks"


# ---- the lab ---------------------------------------------------------------------------------------
def test_the_lab_has_no_news_prompt_and_a_learners_lab_switches_off_nbgraders_instructor_tools():
    command = lab.lab_command("somewhere", open_browser=False)
    assert "--LabApp.news_url=None" in command and "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate" in command
    env = lab.learner_environment({"PATH": "/usr/bin", "JUPYTER_CONFIG_PATH": "/etc/mine"})
    assert env["JUPYTER_CONFIG_PATH"].split(":") == [str(lab.LEARNER_CONFIG), "/etc/mine"]
    assert env["PATH"].split(":") == [os.path.dirname(os.path.abspath(sys.executable)), "/usr/bin"]  # kitgrade found
    assert lab.setting_defaults() == {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                                                      "checkForUpdates": False}}
    # that the learner's lab shows no Create Assignment, no Formgrader and serves no formgrader is seen
    # in a real JupyterLab in Chromium: tests/test_packaging.py (the learner's path from the wheel)


def test_the_lab_check_finds_the_widget_extension():
    assert lab.extension_problems() == []
    done = subprocess.run([sys.executable, "-m", "learner", "lab", "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ipywidgets" in done.stdout, done.stderr


def test_make_lab_runs_the_learners_command_on_my_notebooks_and_the_copies_are_not_tracked():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^\$\(VENV\)/\.lab:.*\n\t\$\(BIN\)/pip install --quiet -e \"\.\[lab\]\"$", makefile, re.M)
    assert re.search(r"^lab: \$\(VENV\)/\.lab fonts\n\t\$\(BIN\)/autograd-kit lab my-notebooks$", makefile, re.M)
    assert re.search(r"^reset-lesson:.*\n\t\$\(BIN\)/autograd-kit reset \$\(LESSON\) --workspace my-notebooks$", makefile, re.M)
    assert "/my-notebooks/" in (ROOT / ".gitignore").read_text().splitlines()
    if (ROOT / ".git").exists() and shutil.which("git"):  # and git agrees
        ignored = subprocess.run(["git", "check-ignore", "-q", "my-notebooks/en/01_recording_history.ipynb"], cwd=ROOT)
        assert ignored.returncode == 0


def test_the_start_notes_a_missing_chinese_font_once_and_is_quiet_with_one(monkeypatch):
    from graph_explorer import fonts

    monkeypatch.setattr(fonts, "find_chinese_font", lambda: None)
    assert "fonts-wqy-microhei" in lab.font_note()
    monkeypatch.setattr(fonts, "find_chinese_font", lambda: "WenQuanYi Micro Hei")
    assert lab.font_note() is None


# ---- the tracked notebooks -------------------------------------------------------------------------
def test_running_a_copy_leaves_the_tracked_lessons_clean(notebooks, course, tmp_path):
    workspace.update(tmp_path / "mine")
    run_in_place(tmp_path / "mine" / "en" / "08_under_the_hood.ipynb")
    assert build.problems(notebooks) == []


def test_a_tracked_notebook_run_in_place_fails_the_check_saying_what_happened(notebooks):
    run_in_place(notebooks / "en" / "02_backward_and_grad.ipynb")
    found = build.problems(notebooks)
    assert len(found) == 1
    assert "notebooks/en/02_backward_and_grad.ipynb holds outputs: it was run and saved in place" in found[0]
    assert "my-notebooks/" in found[0] and "git checkout -- notebooks/en/02_backward_and_grad.ipynb" in found[0]


def test_an_edited_source_still_asks_for_a_rebuild(notebooks):
    source = notebooks / "source" / "04_stopping_gradients.lesson"
    source.write_text(source.read_text(encoding="utf-8").replace("Stopping gradients", "Stopping grads"),
                      encoding="utf-8")
    found = build.problems(notebooks)
    assert found and all("run: python notebooks/build.py" in f for f in found)


def test_a_bare_autograd_kit_shows_its_commands(capsys):
    assert cli.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: autograd-kit") and all(c in out for c in ("workspace", "lab", "reset"))
