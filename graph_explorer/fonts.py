"""Chinese text in matplotlib figures: a font with CJK glyphs behind the usual ones.

matplotlib's default font (DejaVu Sans) has no Chinese glyphs; it draws empty boxes and
warns once per missing glyph. ``use_chinese_font()`` puts the first CJK font it finds
*after* the default in ``font.family``, so Latin text looks as before and Chinese
characters come from the CJK font (matplotlib >= 3.6 falls back glyph by glyph).
``make lab``, ``make hub-env`` and ``make browser`` install one (fonts-wqy-microhei) where
there is apt-get; macOS and Windows come with one (PingFang, Microsoft YaHei).

matplotlib lists the installed fonts once and caches that list (``fontlist-v*.json`` in its
cache folder); a font installed later is not in it. So when the cached list has no CJK font,
the font files the system has now and the list lacks are read and added (and the cache is
rewritten, so the next start finds them at once).
"""
from __future__ import annotations

import os
import warnings

# Fonts with Chinese glyphs, in order of preference: Linux packages, then macOS and Windows.
CJK_FONTS = [
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
    "Droid Sans Fallback", "AR PL UMing CN", "PingFang SC", "Heiti SC", "Hiragino Sans GB",
    "Microsoft YaHei", "SimHei",
]
MISSING = ("no font with Chinese glyphs found: Chinese text in figures shows as empty boxes "
           "(Debian/Ubuntu: apt-get install fonts-wqy-microhei, or `make fonts`)")

_chosen: list = []  # the font found on the first call (None: none found)


def _known_chinese_font(manager) -> str | None:
    installed = {f.name for f in manager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def add_fonts_installed_since_the_cache(manager=None) -> list[str]:
    """Add to matplotlib's font list the system's font files it lacks; returns their paths.

    Also rewrites matplotlib's cached list when its folder is writable, so that the
    next Python finds the new fonts without reading them again.
    """
    import matplotlib
    from matplotlib import font_manager

    manager = manager or font_manager.fontManager
    known = {f.fname for f in manager.ttflist}
    added = []
    for path in sorted(set(font_manager.findSystemFonts()) - known):
        try:
            manager.addfont(path)
        except Exception:  # a file matplotlib cannot read: it would have skipped it too
            continue
        added.append(path)
    cache = matplotlib.get_cachedir()
    if added and manager is font_manager.fontManager and os.access(cache, os.W_OK):
        font_manager.json_dump(manager, os.path.join(cache, f"fontlist-v{font_manager.FontManager.__version__}.json"))
    return added


def find_chinese_font() -> str | None:
    """The name of an installed font with Chinese glyphs, or None; sees fonts installed after matplotlib's cache."""
    from matplotlib import font_manager

    found = _known_chinese_font(font_manager.fontManager)
    if found is None and add_fonts_installed_since_the_cache():
        found = _known_chinese_font(font_manager.fontManager)
    return found


def use_chinese_font() -> str | None:
    """Let matplotlib draw Chinese text; returns the font used, or None (with one note) if there is none.

    Safe to call again and again: the search runs once. Without a CJK font the figures
    still draw, and matplotlib's per-glyph warnings are replaced by that one note.
    """
    import matplotlib

    if not _chosen:
        _chosen.append(find_chinese_font())
        if _chosen[0] is None:
            print("note:", MISSING)
    font = _chosen[0]
    if font is None:
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font")
        return None
    # matplotlib takes one font per entry of font.family (a generic name such as "sans-serif"
    # counts as one) and falls back along that list glyph by glyph
    families = list(matplotlib.rcParams["font.family"])
    if font not in families:
        matplotlib.rcParams["font.family"] = families + [font]
    return font


def with_chinese(family: str) -> list:
    """``family`` followed by the Chinese font, if there is one: for text drawn in another family."""
    font = use_chinese_font()
    return [family] + ([font] if font else [])


def prepare_figures(language: str) -> None:
    """Set matplotlib up for a lesson in ``language``: for "zh", a font for the Chinese labels."""
    if language == "zh":
        use_chinese_font()
