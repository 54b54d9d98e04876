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


def test_check_lists_what_the_machine_lacks_with_the_command_for_each_and_changes_nothing(tmp_path):
    from kithub.machine import what_is_lacking

    proc = tmp_path / "proc"  # a container without systemd, user namespaces off, Ubuntu's AppArmor restriction
    for name, text in {"1/comm": "bash\n", "sys/user/max_user_namespaces": "0\n",
                       "sys/kernel/apparmor_restrict_unprivileged_userns": "1\n"}.items():
        (proc / name).parent.mkdir(parents=True, exist_ok=True)
        (proc / name).write_text(text)
    state = tmp_path / "state"
    (state / "jupyterhub_config.d").mkdir(parents=True)
    (state / "jupyterhub_config.d" / "10-https.py").write_text(
        'c.JupyterHub.ssl_cert = "/etc/letsencrypt/live/nowhere.example/fullchain.pem"\n')
    bare, hardened = tmp_path / "bare", tmp_path / "hardened"
    bare.write_text("proc /proc proc rw,nosuid 0 0\n/dev/sda1 / ext4 rw 0 0\n")
    hardened.write_text("proc /proc proc rw,hidepid=invisible 0 0\n/dev/sda1 / ext4 rw,usrquota 0 0\n")
    tools = tmp_path / "bin"  # git and make only
    tools.mkdir()
    for command in ("git", "make"):
        (tools / command).write_text("#!/bin/sh\n")
        (tools / command).chmod(0o755)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    lacks = what_is_lacking(state, proc=proc, mounts=str(bare), search_path=str(tools))
    found = {lack.what.split(":")[0].split(" (")[0]: lack.fix for lack in lacks}
    assert found["packages of the guide's step 0"] == "apt-get install -y certbot nodejs npm openssl quota util-linux"
    assert "systemd as PID 1" in found and "user namespaces" in found and "AppArmor restricts unprivileged user namespaces" in found
    assert found["/proc shows every account every other's processes and command lines"].startswith("mount -o remount,hidepid")
    assert any(what.startswith("quotas on the file system") for what in found)
    assert any("fullchain.pem" in lack.what and "certbot certonly" in lack.fix for lack in lacks)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # read only
    # a machine with the guide's walls, systemd and every package: only the missing certificate is left
    (proc / "1" / "comm").write_text("systemd\n")
    (proc / "sys" / "user" / "max_user_namespaces").write_text("15000\n")
    (proc / "sys" / "kernel" / "apparmor_restrict_unprivileged_userns").write_text("0\n")
    for command in ("node", "npm", "certbot", "openssl", "setquota", "quotaon", "runuser"):
        (tools / command).write_text("#!/bin/sh\n")
        (tools / command).chmod(0o755)
    left = what_is_lacking(state, proc=proc, mounts=str(hardened), search_path=str(tools))
    assert [lack.fix for lack in left] == ["certbot certonly --standalone -d <the hub's name> (step 4)"]


def test_the_check_command_says_what_is_missing_and_exits_1_on_this_machine(tmp_path):
    if not (HUB_ENV / "bin" / "python").exists():
        unavailable("the hub's environment is missing: run `make hub-env`", "CI builds .venv-hub (make test)")
    done = subprocess.run([str(HUB_ENV / "bin" / "python"), "-m", "kithub", "check", "--state", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    lines = done.stdout.splitlines()
    assert done.returncode == (1 if any(line.startswith("missing: ") for line in lines) else 0), done.stdout + done.stderr
    assert all(lines[i + 1].startswith("  fix: ") for i, line in enumerate(lines) if line.startswith("missing: "))
    assert "Traceback" not in done.stderr and list(tmp_path.iterdir()) == []
