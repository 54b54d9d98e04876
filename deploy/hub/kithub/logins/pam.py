"""The machine's own passwords (JupyterHub's ``PAMAuthenticator``): the demo's login."""
from __future__ import annotations

REQUIRED: tuple[str, ...] = ()


def configure(c, spec, settings: dict, groups: dict) -> list[dict]:
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.open_sessions = False
    c.JupyterHub.load_groups = groups  # the course groups, as the class file gives them
    return []
