"""Formulas on a feedback page, as MathML made with the page: no script, nothing fetched.

nbgrader's page typeset its formulas with MathJax fetched from a CDN when the page opened (blank
formulas offline) and needed a script to run. Here nbconvert's markdown renderer turns each formula
(``$…$``, ``$$…$$``, ``\\[…\\]``, ``\\begin{…}…\\end{…}``) into MathML with ``latex2mathml`` as the page
is made; browsers lay MathML out themselves (Chromium since 109, Firefox, Safari). The MathML is
cleaned with the rest of the page (``student_text.clean_html`` allows MathML's presentation
elements, which link, load and run nothing). A formula ``latex2mathml`` cannot read is shown as
the student wrote it.

``latex2mathml`` (the ``grade`` extra) is imported with this module, so ``kitgrade feedback`` in a
Python without it stops before writing anything, with the one line that names the extra, instead
of a plain page for every student whose notebook holds a formula.
"""

from __future__ import annotations

import re

from latex2mathml.converter import convert

from ..foundations.student_text import for_html

# what a text/latex output holds around its formula (sympy writes $\displaystyle ...$)
_DELIMITED = re.compile(r"^\s*(?:\$\$(?P<a>.*)\$\$|\$(?P<b>.*)\$|\\\[(?P<c>.*)\\\]|\\\((?P<d>.*)\\\))\s*$", re.S)


def tex_to_mathml(tex: str, display: str = "inline", written: str | None = None) -> str:
    """``tex`` as a MathML element (``display``: ``inline`` or ``block``); what cannot be read, as
    ``written`` (the formula with its delimiters) in a ``<code>``."""
    try:
        return convert(tex, display=display)
    except Exception:  # latex2mathml raises several kinds on what it cannot read
        return f"<code>{for_html(tex if written is None else written)}</code>"


def latex_output(text: object) -> str:
    """A ``text/latex`` output as MathML (one formula, with or without delimiters, as Jupyter shows
    it); anything else as text."""
    text = str(text)
    match = _DELIMITED.match(text)
    if match:
        inner = next(v for v in match.groupdict().values() if v is not None)
        return tex_to_mathml(inner, "block" if match["a"] is not None or match["c"] is not None else "inline", text)
    if text.lstrip().startswith("\\begin{"):
        return tex_to_mathml(text, "block")
    return f"<pre>{for_html(text)}</pre>"


def mathml_renderer():
    """nbconvert's markdown renderer with every formula rendered as MathML, and a picture it cannot
    show (an attachment the cell does not hold: JupyterLab does not copy it with the text) named
    instead of stopping the page."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, InvalidNotebook

    class MathMLRenderer(IPythonRenderer):
        def image(self, text: str, url: str, title: str | None = None) -> str:
            try:
                return super().image(text, url, title)
            except (InvalidNotebook, StopIteration, KeyError, TypeError):
                return f"<em>[{for_html(text or url)}: {for_html(url)} is not in the notebook]</em>"

        def block_math(self, body: str) -> str:
            return tex_to_mathml(body, "block", f"$${body}$$")

        def inline_math(self, body: str) -> str:
            return tex_to_mathml(body, "inline", f"${body}$")

        def latex_environment(self, name: str, body: str) -> str:
            return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")

    return MathMLRenderer
