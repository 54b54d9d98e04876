"""The Assignments panel's refusals in one clear line (a Jupyter server extension of the students' servers).

nbgrader's handler answers a refused submission with the whole traceback of its own code, which the
panel shows above the refusal's message (``PrivateSubmit``'s "was not submitted: its folder holds
500 MiB ..."). A refusal of the exchange (``ExchangeError``) is something the student can fix, not a
bug: the panel gets its message alone. Any other failure keeps nbgrader's traceback. Enabled with

    c.ServerApp.jpserver_extensions = {"grader.hub_exchange.panel": True}
"""
from __future__ import annotations

import functools

from nbgrader.exchange.abc.exchange import ExchangeError

#: the last line of a traceback that ends in an exchange refusal
REFUSED = f"{ExchangeError.__module__}.{ExchangeError.__qualname__}: "


def clear_refusal(result):
    """nbgrader's answer with the refusal's message in place of the traceback that ends in it."""
    if isinstance(result, dict) and result.get("success") is False and isinstance(result.get("value"), str):
        text = result["value"]
        if text.startswith("Traceback") and REFUSED in text:
            return {**result, "value": text.rsplit(REFUSED, 1)[1].strip()}
    return result


def _jupyter_server_extension_points():
    return [{"module": "grader.hub_exchange.panel"}]


def _load_jupyter_server_extension(serverapp):
    pass  # nbgrader's extension may load after this one (alphabetical order): the start hook wraps it


async def _start_jupyter_server_extension(serverapp):
    manager = serverapp.web_app.settings.get("assignment_list_manager")
    if manager is None:
        serverapp.log.warning("grader.hub_exchange.panel: nbgrader's assignment list is not loaded")
        return
    submit = manager.submit_assignment
    manager.submit_assignment = functools.wraps(submit)(lambda *args, **kwargs: clear_refusal(submit(*args, **kwargs)))
