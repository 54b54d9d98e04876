"""The hub recipe's parts that need no hub: where set-up finds the course, and the class's copy of the
lessons kept as the installed kit has them (deploy/hub/kithub/spec.py, config_files.py).

The first runs the hub's environment's Python (``make hub-env``) from a folder that holds no checkout, as
``python -m kithub setup`` run from anywhere does; the second writes this class's file of
``/etc/profile.d`` (as set-up does): both as root, and skip elsewhere (fail in CI).
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from browser_support import unavailable
from hub_support import HUB_ENV
from kithub.config_files import write_commands
from kithub.lessons import give_lessons
from kithub.spec import ClassSpec


def test_set_up_run_from_any_folder_takes_the_course_installed_in_the_hubs_environment(tmp_path):
    if not (HUB_ENV / "bin" / "python").exists():
        unavailable("the hub's environment is missing: run `make hub-env`", "CI must build .venv-hub (`make test`)")
    shown = subprocess.run([str(HUB_ENV / "bin" / "python"), "-I", "-c",
                            "import json; from kithub.spec import ClassSpec; "
                            "spec = ClassSpec(state='/nowhere', courses=[], passwords={}); "
                            "print(json.dumps([spec.lessons, spec.exercises]))"],
                           cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert shown.returncode == 0, shown.stderr
    lessons, exercises = map(os.path.realpath, json.loads(shown.stdout))
    installed = os.path.realpath(next((HUB_ENV / "lib").glob("python3*/site-packages/course_files")))
    assert lessons == os.path.join(installed, "lessons") and exercises == os.path.join(installed, "exercises")
    assert any(os.scandir(os.path.join(lessons, "en"))) and any(os.scandir(os.path.join(lessons, "zh")))
    assert os.path.isdir(os.path.join(exercises, "ps1_autograd_basics"))


@pytest.fixture
def a_class(tmp_path):
    if os.geteuid() != 0:
        unavailable("set-up's commands write /etc/profile.d: they run as root", "CI runs as root (.ci/run)")
    kit = tmp_path / "kit"
    for language in ("en", "zh"):
        (kit / language).mkdir(parents=True)
        (kit / language / "01_lesson.ipynb").write_text(f'{{"version": 1, "language": "{language}"}}')
    state = tmp_path / "state"
    state.mkdir()
    spec = ClassSpec(state=str(state), courses=[], passwords={}, lessons=str(kit))
    yield spec, kit
    spec.profile.unlink(missing_ok=True)


def test_an_upgraded_kits_lessons_replace_the_classs_copy_and_no_students_own(a_class, tmp_path):
    spec, kit = a_class
    write_commands(spec)
    home = tmp_path / "home"
    home.mkdir()
    assert give_lessons(spec.lessons_copy, home)  # a student's own copy, from the first version
    (kit / "en" / "01_lesson.ipynb").write_text('{"version": 2, "language": "en"}')  # the kit upgraded
    (kit / "zh" / "02_new.ipynb").write_text('{"version": 2, "language": "zh"}')
    write_commands(spec)  # set-up run again
    assert json.loads((spec.lessons_copy / "en" / "01_lesson.ipynb").read_text())["version"] == 2
    assert (spec.lessons_copy / "zh" / "02_new.ipynb").exists()
    assert json.loads((home / "lessons" / "en" / "01_lesson.ipynb").read_text())["version"] == 1
    assert not (home / "lessons" / "zh" / "02_new.ipynb").exists()
    assert sorted(p.name for p in spec.root.iterdir() if p.name.startswith("lessons")) == ["lessons"]
    mode = (spec.lessons_copy / "zh" / "02_new.ipynb").stat().st_mode & 0o777
    assert mode == 0o644  # readable by every account of the class, as before
    before = (spec.lessons_copy / "en" / "01_lesson.ipynb").stat().st_ino
    write_commands(spec)  # nothing changed: the copy is left as it is
    assert (spec.lessons_copy / "en" / "01_lesson.ipynb").stat().st_ino == before
