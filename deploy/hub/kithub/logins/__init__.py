"""University logins for a class on the hub: LTI 1.3 launches from Canvas or Moodle, or OpenID Connect.

``jupyterhub_config.py`` calls ``configure(c, spec, groups, services)``. Which login, and with what, is the
``logins`` entry of the class file (``class.json``); without one the class logs in with the
machine's passwords (PAM), as the demo does::

    "logins": {
      "method": "lti13",                               # "pam" (the default), "lti13" or "oidc"
      "people": {"alice@uni.example": "alice", ...},   # who the LMS / the university says -> the class's account
      "lti13": {"issuer": "https://canvas.instructure.com", "client_id": "10000000000042",
                "authorize_url": ".../api/lti/authorize_redirect", "jwks_endpoint": ".../api/lti/security/jwks",
                "token_url": ".../login/oauth2/token",
                "courses": {"<the LMS course's context id>": "ad101"}},
      "oidc": {"authorize_url": ..., "token_url": ..., "userdata_url": ..., "client_id": ..., "client_secret": ...}
    }

The class file stays the roster: a person logs in only as the account it names for them, and is
in the course groups it gives them (``nbgrader-<course>`` as a student, ``formgrade-<course>`` as an
instructor), whatever the LMS or the university says besides. A launch whose LMS role disagrees with
the class file (a student of the class file launching as the LMS's instructor) is refused, so the
LMS can take nobody further than the class file lets them go. Each refusal is a page with one
sentence saying why.

Each method is one entry of ``METHODS``: its name in ``class.json`` and its module, which gives
``REQUIRED`` (the settings the method cannot do without) and ``configure(c, spec, settings, groups)``
(the hub's authenticator and the course groups; returns the services it adds). A module is imported only when the class uses it (the
authenticators are in the hub's environment alone). The authenticators are the field's: ``ltiauthenticator``'s ``LTI13Authenticator`` (it checks the
id_token's signature with the platform's JWKS, its issuer, audience, expiry and nonce) and
``oauthenticator``'s ``GenericOAuthenticator``; this module only maps who they say to the roster.
"""
from __future__ import annotations

import importlib

#: each login method: its name in class.json -> its module
METHODS = {"pam": "kithub.logins.pam", "lti13": "kithub.lti.login", "oidc": "kithub.logins.oidc"}


def configure(c, spec, groups: dict, services: list | None = None) -> str:
    """The hub's authenticator for ``spec``'s ``logins`` (PAM without one); returns the method. What the
    method runs beside the hub (LTI 1.3: the grade service) is added to ``services``."""
    logins = spec.logins or {}
    method = logins.get("method", "pam")
    if method not in METHODS:
        raise ValueError(f"class.json: logins.method is {method!r}; it must be one of {', '.join(METHODS)}")
    module = importlib.import_module(METHODS[method])
    c.Authenticator.allowed_users = set(spec.people())
    settings = logins.get(method) or {}
    missing = [key for key in module.REQUIRED if not settings.get(key)]
    if missing:
        raise ValueError(f"class.json: logins.{method} lacks {', '.join(missing)}")
    added = module.configure(c, spec, settings, groups)
    if services is not None:
        services.extend(added)
    return method
