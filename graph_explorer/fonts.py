"""Chinese text in matplotlib figures: a font with CJK glyphs behind the usual ones.

matplotlib's default font (DejaVu Sans) has no Chinese glyphs; it draws empty boxes and
warns once per missing glyph. ``use_chinese_font()`` puts the first CJK font it finds
*after* the default in ``font.family``, so Latin text looks as before and Chinese
characters come from the CJK font (matplotlib >= 3.6 falls back glyph by glyph).
``make browser`` installs one (fonts-wqy-microhei) on Debian and Ubuntu.
"""
from __future__ import annotations

import warnings

# Fonts with Chinese glyphs, in order of preference: Linux packages, then macOS and Windows.
CJK_FONTS = [
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC",
    "Droid Sans Fallback", "AR PL UMing CN", "PingFang SC", "Heiti SC", "Hiragino Sans GB",
    "Microsoft YaHei", "SimHei",
]
MISSING = ("no font with Chinese glyphs found: Chinese text in figures shows as empty boxes "
           "(Debian/Ubuntu: apt-get install fonts-wqy-microhei, or `make browser`)")

_chosen: list = []  # the font found on the first call (None: none found)


def find_chinese_font() -> str | None:
    """The name of an installed font with Chinese glyphs, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


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
