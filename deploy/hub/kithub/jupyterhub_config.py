# JupyterHub for a class of the kit: one or more courses on one server.
#
#   KIT_HUB_STATE=/srv/autograd-kit-hub jupyterhub -f <the kithub package>/jupyterhub_config.py
#
# `python -m kithub` sets the class up (accounts, courses, exchange) and starts the hub with this file;
# the class itself (who, which courses, ports) is $KIT_HUB_STATE/class.json. docs/deploy.md
# explains each part and what to change for a real class (the authenticator above all). What the hub
# runs of the kit is here and in the four modules below, nothing of the set-up.
import os

from kithub import runtime
from kithub.logins import configure as configure_logins
from kithub.spawner import OwnPortSpawner
from kithub.spec import ClassSpec

c = get_config()  # noqa: F821
spec = ClassSpec.load(os.environ["KIT_HUB_STATE"])
state = spec.root / "hub"

# ---- network: everything on 127.0.0.1 (a real class: HTTPS from the proxy, docs/deploy.md "In production") ----
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = spec.hub_port
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = spec.hub_api_port
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{spec.proxy_api_port}"
c.ConfigurableHTTPProxy.command = [str(spec.proxy)]
c.ConfigurableHTTPProxy.should_start = True
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every user server

# ---- each person's server runs as their own system account ----
c.JupyterHub.spawner_class = OwnPortSpawner  # LocalProcessSpawner, a port of its own for each server (kithub/spawner.py)
c.Spawner.cmd = [str(spec.bin / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# the server's configuration is the class's, never the student's (~/.jupyter, ~/.local): on one address,
# a server a student configures could serve pages of theirs to anyone who opens its address
# (JupyterHub's "Security Overview", for a hub without a domain per user)
c.Spawner.disable_user_config = True
c.Spawner.environment = {
    "PATH": spec.path(),
    "JUPYTER_CONFIG_PATH": str(spec.jupyter_config("student")),  # nbgrader's exchange; no grader tools
    "JUPYTER_PATH": str(spec.jupyter_data),  # the kernel without a debugger (kithub/kernel.py)
    "KIT_LESSONS": str(spec.lessons_copy),
    "KIT_HUB_STATE": str(spec.root),  # a terminal's login shell puts PATH back from it (config_files.write_commands)
    "SHELL": "/bin/bash",
    # the user's own runtime folder (made by the pre-spawn hook): the kernels' sockets, not ports
    "JUPYTER_RUNTIME_DIR": lambda spawner: str(spec.runtime(spawner.user.name)),
}
# a class arriving at once on a small machine: servers start late rather than fail (docs/deploy.md)
c.Spawner.http_timeout = 180
c.Spawner.start_timeout = 300


# the student's own copy of the lessons on the first start of their server (as them), their runtime
# folder (kithub/runtime.py)
c.Spawner.pre_spawn_hook = runtime.ServerStarts(spec).before

# ---- courses: groups, roles, and a grader service per course ----
groups, roles, services = {}, [], []
for course in spec.courses:
    cid = course.course_id
    groups[f"nbgrader-{cid}"] = {"users": course.students}
    groups[f"formgrade-{cid}"] = {"users": course.formgraders()}  # the instructors and teaching assistants
    roles.append({"name": f"formgrade-{cid}", "groups": [f"formgrade-{cid}"],
                  # open the course's grader service; find it (nbgrader's course list)
                  "scopes": [f"access:services!service={cid}", "list:services", f"read:services!service={cid}"]})
    services.append({
        "name": cid,
        "url": f"http://127.0.0.1:{course.port}",
        "command": [str(spec.bin / "jupyterhub-singleuser"), f"--ServerApp.root_dir={course.directory(spec)}"],
        "user": course.grader,
        "cwd": str(course.directory(spec)),
        "environment": {
            # its kitgrade first: it records which grader runs it (kithub/grading_record.py)
            "PATH": f"{spec.root / 'bin' / 'grader'}:{spec.path()}",
            "KIT_COURSE": cid,
            "JUPYTER_CONFIG_PATH": str(spec.jupyter_config("grader")),
            "JUPYTER_PATH": str(spec.jupyter_data),
            "JUPYTERHUB_DEFAULT_URL": "/lab",
            "JUPYTER_RUNTIME_DIR": str(spec.runtime(course.grader)),  # made at set-up
            "KIT_HUB_STATE": str(spec.root),
            "SHELL": "/bin/bash",
        },
        "oauth_no_confirm": True,
    })
    services.append({
        # the clerk: takes each submission out of reach as it arrives, at the time it arrived
        # (grader/hub_exchange/clerk.py); the students never run it, so they do not set its clock
        "name": f"{cid}-clerk",
        "command": [str(spec.python), "-m", "grader.hub_exchange", "--exchange", str(spec.exchange), "--course", cid,
                    "--kept-mib", str(course.kept_mib_per_student)],
        "user": course.grader,
        "cwd": str(course.directory(spec)),
        "environment": {"PATH": spec.path()},
    })
# JupyterHub gives a managed service 10 s to answer at start, then exits; a grader service (a JupyterLab)
# takes longer on a busy machine: the hub waits for its first answer (runtime.wait_for_services_at_start)
runtime.wait_for_services_at_start()
# ---- who logs in: the demo's system passwords (PAM), or the university's LTI 1.3 or OpenID Connect
# (class.json's "logins"); either way only the class's people, in the course groups it gives them ----
configure_logins(c, spec, groups, services)
c.JupyterHub.services = services
roles.append({
    # A server's own token: enough for nbgrader's JupyterHubAuthPlugin to read the owner's groups
    # (which courses they are in), and nothing about anyone else.
    "name": "server",
    "scopes": ["users:activity!user", "access:servers!server", "read:users:name!user", "read:users:groups!user"],
})
c.JupyterHub.load_roles = roles

# ---- the site's own settings (docs/deploy.md, "In production"): HTTPS, admins, the idle culler, limits ----
# every *.py of <state>/jupyterhub_config.d, in name order, after the kit's (so they may override it);
# the hub runs them as root: the folder must be root's and writable by root alone
site = spec.root / "jupyterhub_config.d"
if site.is_dir():
    if site.stat().st_uid != 0 or site.stat().st_mode & 0o022:
        raise SystemExit(f"{site} must be root's and writable by root alone (chown root {site}; chmod 700 {site})")
    for path in sorted(site.glob("*.py")):
        # as if appended to this file: the same ``c`` (a list such as c.JupyterHub.services is extended)
        exec(compile(path.read_text(), str(path), "exec"), {"c": c, "get_config": lambda: c, "spec": spec})
