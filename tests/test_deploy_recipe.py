"""The hub recipe's parts that need no hub: where set-up finds the course (deploy/hub/kithub/spec.py).

It runs the hub's environment's Python (``make hub-env``) from a folder that holds no checkout, as
``python -m kithub setup`` run from anywhere does; it skips where there is none (fails in CI).
"""
from __future__ import annotations

import json
import os
import subprocess

from browser_support import unavailable
from hub_support import HUB_ENV


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
