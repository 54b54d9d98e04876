"""OpenID Connect: the university's sign-in (Keycloak, Entra ID, Shibboleth's or Google's OpenID provider),
through ``oauthenticator``'s ``GenericOAuthenticator``; the roster maps who it says to the class's account."""
from __future__ import annotations

from ..roster import Roster

REQUIRED = ("authorize_url", "token_url", "userdata_url", "client_id", "client_secret")


def configure(c, spec, settings: dict, groups: dict) -> list[dict]:
    """Each sign-in sets the person's groups from the roster (JupyterHub's managed groups): a change of the
    class file's roster takes effect at their next login."""
    c.Authenticator.manage_groups = True
    roster = Roster(spec)
    claim = settings.get("identity_claim", "email")

    def account_of(user_info: dict) -> str:
        return roster.account(user_info.get(claim))

    c.JupyterHub.authenticator_class = "generic-oauth"
    oidc = c.GenericOAuthenticator
    oidc.login_service = settings.get("login_service", "your university")
    for key in ("authorize_url", "token_url", "userdata_url", "client_id", "client_secret"):
        setattr(oidc, key, settings[key])
    oidc.oauth_callback_url = settings.get("callback_url", f"{spec.url}/hub/oauth_callback")
    oidc.scope = ["openid", "email", "profile"]
    oidc.manage_groups = True
    oidc.username_claim = account_of  # not on the roster: refused with a sentence saying so
    oidc.auth_state_groups_key = lambda auth_state: roster.groups(account_of(auth_state["oauth_user"]))
    return []
