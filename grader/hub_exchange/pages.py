"""The grader service's pages: what a student wrote stays text in the instructor's browser.

The instructor reads the students' notebooks in the course's grader service (a JupyterLab, with
nbgrader's formgrader), on the hub's own address and with her session: a script that ran there would
act as her, through the grader service's API, on the course. Two walls, each enough alone:

* **Sanitized notebooks.** nbconvert renders a notebook to HTML for the formgrader and for
  ``/nbconvert/``; its ``sanitize_html`` (off by default) cleans the outputs, and the formgrader's
  template renders markdown cells (a written answer) without it. This extension gives the formgrader
  an exporter that cleans both with the kit's allow-list (``grader.foundations.student_text.clean_html``: no
  script, event handler, ``javascript:`` link or picture fetched from an address);
  ``c.HTMLExporter.sanitize_html`` in the service's configuration cleans ``/nbconvert/``'s outputs.
* **A Content-Security-Policy without inline scripts** on every page the service sends, computed as the
  page is sent. A page the templates make (JupyterLab's, the formgrader's) may run its own inline
  scripts and event handlers, each allowed by its hash (``'sha256-...'``), and only those found where
  no student text can be: the whole page, but on the formgrader's page of a submission only what comes
  before the notebook. Anything else it loads comes from the service's own path: no request carries
  the instructor's cookies to another part of the hub (``/hub/``, a student's ``/user/...``). A page
  that shows a student's file as it is (``files/``, ``view/``, ``nbconvert/``, the formgrader's
  submission files) runs no script at all, in a sandbox.

MathJax, which nbconvert's pages load from a CDN, is not let in: in the formgrader, formulas show as
their TeX. Enabled in the grader services' Jupyter configuration (``deploy/hub/kithub/config_files.py``)::

    c.ServerApp.jpserver_extensions = {"grader.hub_exchange.pages": True}
"""
from __future__ import annotations

import base64
import hashlib
import html
import re

from tornado.web import OutputTransform

#: pages a template makes, below the service's base URL (the formgrader's submission files excepted)
TEMPLATE_PAGES = re.compile(r"(lab|doc|tree|edit|notebooks|consoles|terminals|login|logout|formgrader)(/|$)")
#: what shows a file of the course as it is (a student's HTML, SVG or notebook), below the base URL
FILES_AS_THEY_ARE = re.compile(r"(files|view|nbconvert)/|formgrader/submissions/[^/]+/.")
#: the formgrader's page of one submission: the notebook starts at this mark
SUBMISSION_PAGE = re.compile(r"formgrader/submissions/[^/?]+/?$")
NOTEBOOK_MARK = b'id="notebook-container"'
HOST = re.compile(r"[A-Za-z0-9.-]+(:\d+)?|\[[0-9A-Fa-f:.]+\](:\d+)?")
INLINE_SCRIPT = re.compile(rb"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
EVENT_HANDLER = re.compile(rb"""\son[a-z]+\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.I)
SCRIPT_TYPES = (b"", b"text/javascript", b"application/javascript", b"module")
#: a shown file: nothing runs, nothing is fetched but its own pictures and styles
SANDBOXED = "default-src 'none'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; font-src 'self' data:; sandbox"


def _hash(text: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text).digest()).decode() + "'"


def _script_type(attributes: bytes) -> bytes:
    found = re.search(rb"""\btype\s*=\s*["']?([^"'\s>]*)""", attributes, re.I)
    return found.group(1).lower() if found else b""


def own_scripts(page: bytes) -> tuple[list[str], list[str]]:
    """The hashes of the inline scripts, and of the event handlers, in ``page`` (the part of a page its
    template wrote)."""
    scripts = [_hash(body) for attributes, body in INLINE_SCRIPT.findall(page)
               if b"src" not in attributes.lower() and _script_type(attributes) in SCRIPT_TYPES]
    handlers = [_hash(html.unescape((double or single).decode()).encode()) for double, single in EVENT_HANDLER.findall(page)]
    return sorted(set(scripts)), sorted(set(handlers))


def policy(base_url: str, path: str, host: str, page: bytes | None) -> str:
    """The Content-Security-Policy of the page at ``path`` (below ``base_url``) served to ``host``;
    ``page`` is its HTML if whole (None: sent in parts, so no inline script is allowed)."""
    below = path[len(base_url):] if path.startswith(base_url) else path.lstrip("/")
    if FILES_AS_THEY_ARE.match(below) or not TEMPLATE_PAGES.match(below):
        return SANDBOXED
    if page is not None and SUBMISSION_PAGE.match(below):
        page = page.split(NOTEBOOK_MARK, 1)[0]  # the notebook, and everything after it, is not the template's
    scripts, handlers = own_scripts(page) if page is not None else ([], [])
    if not HOST.fullmatch(host):
        return SANDBOXED  # no address a policy can name: nothing runs
    own = f"{host}{base_url}"  # no scheme: the page's own (http or https)
    # JupyterLab compiles its settings' schemas into functions (ajv): it needs eval, which runs nothing
    # but what a script already running gives it
    evaluates = [] if below.startswith("formgrader") else ["'unsafe-eval'"]
    allowed = " ".join([own, *scripts, *evaluates, *(["'unsafe-hashes'", *handlers] if handlers else [])])
    return "; ".join([f"default-src {own}", f"script-src {allowed}", f"style-src {own} 'unsafe-inline'",
                      f"img-src {own} data: blob:", f"font-src {own} data:", f"connect-src {own} ws://{own} wss://{own}",
                      f"frame-src {own}", f"worker-src {own} blob:", "object-src 'none'", f"base-uri {own}",
                      f"form-action {own}"])


class InertPages(OutputTransform):
    """Adds the page's policy as a second Content-Security-Policy header (the browser enforces both: the
    server's own, such as the sandbox of ``files/``, still holds)."""

    base_url = "/"

    def __init__(self, request):
        self.path, self.host = request.path, request.host

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        kind = headers.get("Content-Type", "")
        below = self.path[len(self.base_url):] if self.path.startswith(self.base_url) else self.path
        if kind.startswith("text/html") or FILES_AS_THEY_ARE.match(below):
            headers.add("Content-Security-Policy", policy(self.base_url, self.path, self.host,
                                                          chunk if finishing and kind.startswith("text/html") else None))
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "grader.hub_exchange.pages"}]


def _load_jupyter_server_extension(serverapp):
    InertPages.base_url = serverapp.base_url
    serverapp.web_app.transforms.insert(0, InertPages)  # before gzip: it reads the page as written


def inert_exporter(config):
    """nbconvert's HTML exporter with every piece of a student's markup cleaned by the kit's allow-list
    (``grader.foundations.student_text.clean_html``): outputs (``sanitize_html``) and markdown cells, which the
    formgrader's template renders without nbconvert's cleaning (as nbgrader's feedback template does,
    where ``grader/feedback.py`` cleans them the same way)."""
    from jinja2 import pass_context
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    from ..foundations.student_text import clean_html

    class InertHTMLExporter(HTMLExporter):
        @pass_context
        def markdown2html(self, context, source):
            return clean_html(super().markdown2html(context, source))

    merged = Config(config)
    merged.merge(Config({"HTMLExporter": {"sanitize_html": True,
                                          "filters": {"clean_html": "grader.foundations.student_text.clean_html"}}}))
    return InertHTMLExporter(config=merged)


async def _start_jupyter_server_extension(serverapp):
    settings = serverapp.web_app.settings
    if "nbgrader_exporter" in settings:  # the formgrader's, loaded by now
        settings["nbgrader_exporter"] = inert_exporter(settings["nbgrader_exporter"].config)
    else:
        serverapp.log.warning("grader.hub_exchange.pages: nbgrader's formgrader is not loaded")
