"""Student text is data: one way to show it for each place it goes, and only here.

A student chooses their notebook's outputs, its file names, often their display name in the LMS,
and so every text the kit shows that came from them. Each sink shows it as text, never as code:

- **terminal** (``for_terminal``, ``EscapingStream``): control characters and escape sequences are
  shown escaped (``\\x1b[2J``), never sent to the instructor's terminal; the kit's own messages go
  to a stream that escapes everything but line breaks, and a single field that could hold student
  text is escaped on its own, line breaks included, so it cannot forge a line of the kit's.
- **HTML** (``for_html``, ``clean_html``, ``CONTENT_SECURITY_POLICY``): text is escaped; where a
  page must show a student's markup (a notebook's HTML output or markdown cell, in feedback), it
  is cleaned to an allow-list of tags and attributes that run nothing, and the page carries a
  Content-Security-Policy that lets no script run and nothing be fetched.
- **spreadsheet** (``for_spreadsheet``): a CSV cell that starts with ``= + - @``, a tab or a
  carriage return is read as text, as OWASP's CSV-injection advice says: a single quote in front.
"""

from __future__ import annotations

import html
import io
import re
import sys
from contextlib import contextmanager

# C0 and C1 controls, DEL, and the characters that reorder or hide text (bidi overrides, zero
# width): what a terminal acts on or a reader cannot see; and lone surrogates, which are not text
# (no terminal, file or page in UTF-8 can take one)
_WIDTHLESS = "\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff"
_TERMINAL_FIELD = re.compile(f"[\x00-\x1f\x7f-\x9f{_WIDTHLESS}]")
_TERMINAL_STREAM = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_WIDTHLESS}]")  # line breaks and tabs kept


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: object) -> str:
    """``text`` as one field of a terminal line: every control character shown escaped, line
    breaks too (``'\\x1b]0;pwned\\x07'`` -> ``'\\\\x1b]0;pwned\\\\x07'``)."""
    return _TERMINAL_FIELD.sub(_escape, str(text))


def for_terminal_lines(text: object) -> str:
    """``text`` as terminal lines: line breaks and tabs kept, every other control shown escaped."""
    return _TERMINAL_STREAM.sub(_escape, str(text))


class EscapingStream(io.TextIOBase):
    """A text stream that shows what is written to it with ``for_terminal_lines``.

    ``unescaped`` is the stream beneath, for the kit's own control sequences (the progress line
    redraws itself with ``\\r``): only text the kit wrote itself goes there.
    """

    def __init__(self, stream):
        self.unescaped = stream

    def write(self, text: str) -> int:
        self.unescaped.write(for_terminal_lines(text))
        return len(text)

    def flush(self) -> None:
        self.unescaped.flush()

    def isatty(self) -> bool:
        return self.unescaped.isatty()

    def fileno(self) -> int:
        return self.unescaped.fileno()

    @property
    def encoding(self):
        return getattr(self.unescaped, "encoding", "utf-8")

    @property
    def errors(self):
        return getattr(self.unescaped, "errors", "strict")


def unescaped(stream):
    """The stream beneath an ``EscapingStream`` (any other stream as it is)."""
    return getattr(stream, "unescaped", stream)


@contextmanager
def escaped_terminal():
    """``sys.stdout`` and ``sys.stderr`` escaping control characters while the block runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(unescaped(sys.stdout)), EscapingStream(unescaped(sys.stderr))
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = saved


# ---- HTML --------------------------------------------------------------------------------------------
def for_html(text: object) -> str:
    """``text`` shown as text in HTML (quotes escaped too: safe in an attribute)."""
    return html.escape(str(text), quote=True)


#: No script runs on a kit page (formulas are MathML, made with the page: ``grader/feedback/formulas.py``),
#: nothing is fetched; pictures are embedded (``data:``), styles inline.
CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
                           "base-uri 'none'; form-action 'none'")
CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'

# What markdown and the usual notebook outputs (pandas tables, images) need, and nothing that runs.
_TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
         "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "samp",
         "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
         "u", "ul"}
_ATTRIBUTES = {"class", "id", "title", "alt", "align", "colspan", "rowspan", "width", "height", "start"}
# MathML Core's presentation elements (formulas; none of them links, loads or runs anything) and their attributes
_MATHML_TAGS = {"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot", "mstyle",
                "merror", "mpadded", "mphantom", "msub", "msup", "msubsup", "munder", "mover", "munderover",
                "mmultiscripts", "mprescripts", "mtable", "mtr", "mtd", "semantics", "annotation", "menclose"}
_MATHML_ATTRIBUTES = {"display", "displaystyle", "scriptlevel", "mathvariant", "mathsize", "stretchy", "symmetric",
                      "largeop", "movablelimits", "fence", "separator", "form", "lspace", "rspace", "minsize",
                      "maxsize", "accent", "accentunder", "linethickness", "columnalign", "rowalign", "columnspan",
                      "columnlines", "rowlines", "frame", "notation", "depth", "voffset", "encoding"}
MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"
_IMAGE_DATA = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
_LINK = re.compile(r"^(https?://|mailto:|#)", re.I)


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if name in _ATTRIBUTES:
        return True
    if tag in _MATHML_TAGS:
        return name in _MATHML_ATTRIBUTES or (name == "xmlns" and value == MATHML_NAMESPACE)
    if tag == "a" and name == "href":
        return bool(_LINK.match(value.strip()))
    if tag == "img" and name == "src":  # an embedded picture; an address would be fetched when the page opens
        return bool(_IMAGE_DATA.match(value.strip()))
    return False


#: Markup nested deeper than this, or with more tags, is shown as text: html5lib, which the cleaning
#: parses with, takes time that grows with the square of the nesting (``<ul><li>`` 5,000 deep: 24 s;
#: a notebook may hold megabytes of it), and honest markup nests a few dozen levels at most.
MAX_MARKUP_DEPTH = 100
MAX_MARKUP_TAGS = 100_000
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^>]*?(/?)>")
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "mspace",
         "mprescripts"}


def _too_much_markup(text: str) -> bool:
    depth, tags = 0, 0
    for tag in _TAG.finditer(text):
        tags += 1
        if tag[1]:
            depth = max(0, depth - 1)
        elif not tag[3] and tag[2].lower() not in _VOID:
            depth += 1
        if depth > MAX_MARKUP_DEPTH or tags > MAX_MARKUP_TAGS:
            return True
    return False


def clean_html(fragment: object) -> str:
    """A student's markup (an HTML output, a markdown cell, a formula's MathML) reduced to tags that
    run nothing: no script, style, frame, form, event handler or ``javascript:`` link; what is
    dropped is shown as text, and so is markup nested over ``MAX_MARKUP_DEPTH`` deep or of more
    than ``MAX_MARKUP_TAGS`` tags."""
    import bleach

    text = fragment.decode() if isinstance(fragment, bytes) else str(fragment)
    if _too_much_markup(text):
        return f"<pre>{for_html(text)}</pre>"
    return bleach.clean(text, tags=_TAGS | _MATHML_TAGS, attributes=_allowed_attribute, protocols={"http", "https", "mailto", "data"},
                        strip=False, strip_comments=True)


def with_csp(page: str) -> str:
    """An HTML page with the kit's Content-Security-Policy as the first element of its head."""
    head = re.search(r"<head(\s[^>]*)?>", page, re.I)
    if head is None:
        return CSP_META + page
    return page[:head.end()] + CSP_META + page[head.end():]


# ---- spreadsheets -------------------------------------------------------------------------------------
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def for_spreadsheet(cell: object) -> str:
    """A CSV cell a spreadsheet reads as text: one starting with ``= + - @``, tab or carriage return
    gets a single quote in front (OWASP); a plain number (``-1.5``) is left a number."""
    text = "" if cell is None else str(cell)
    if text.startswith(_FORMULA_START) and not _NUMBER.match(text):
        return "'" + text
    return text
