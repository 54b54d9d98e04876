"""Chinese text in the course's figures has every glyph, even with a font installed after matplotlib cached its font list.

matplotlib caches the list of installed fonts the first time it runs; a CJK font installed
later (``make lab`` or ``make browser`` on a machine where matplotlib already ran) is not in
that list. The test makes exactly that situation in a fresh ``MPLCONFIGDIR``: it builds the
cache, takes every CJK font out of it (the list as it was before the font came), then, in a
new Python, sets the figures up for Chinese and draws every Chinese string the lessons and
the graph explorer put in figures, failing on any missing-glyph warning.
"""
import io
import json
import os
import re
import subprocess
import sys
import tokenize

from kit_paths import ROOT

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def chinese_strings():
    """Every string literal with Chinese in it in the Chinese notebooks' code and in graph_explorer."""
    import nbformat

    sources = [c.source for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb"))
               for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    sources += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "graph_explorer").glob("*.py"))]
    found = []
    for source in sources:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and CJK.search(token.string):
                found.append(token.string)
    return sorted(set(found))


BUILD_CACHE = "import matplotlib.font_manager"

# In the new Python: the cached list must lack the CJK font, as it would before the font was installed.
DRAW = r'''
import io, json, sys, warnings
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager
from matplotlib.figure import Figure
from graph_explorer import fonts

strings = json.loads(sys.stdin.read())
cached = sorted({f.name for f in font_manager.fontManager.ttflist} & set(fonts.CJK_FONTS))
fonts.prepare_figures("zh")
mono = fonts.with_chinese("monospace")  # as the graph explorer draws its tables
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")  # whatever filter the set-up installed, every missing glyph is seen
    figure = Figure(figsize=(8, 0.3 * len(strings)))
    ax = figure.add_subplot()
    for k, text in enumerate(strings):
        ax.text(0, k, text)
        ax.text(1, k, text, family=mono)
    ax.set_title(strings[0]); ax.set_xlabel(strings[-1]); ax.set_ylim(0, len(strings))
    figure.savefig(io.BytesIO(), format="png")
print(json.dumps({"cached": cached, "font": fonts._chosen[0],
                  "missing": sorted({str(w.message) for w in caught if "missing from font" in str(w.message)})}))
'''


def run(code, env, stdin=""):
    done = subprocess.run([sys.executable, "-c", code], env=env, input=stdin, capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_chinese_string_of_the_figures_draws_with_a_font_installed_after_the_cache(tmp_path):
    strings = chinese_strings()
    assert len(strings) > 50, "the Chinese strings of the figures were not found"
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path)}
    env.pop("MPL_IGNORE_SYSTEM_FONTS", None)
    run(BUILD_CACHE, env)
    [cache] = tmp_path.glob("fontlist-v*.json")
    font_list = json.loads(cache.read_text())
    from graph_explorer.fonts import CJK_FONTS

    cjk_files = {f["fname"] for f in font_list["ttflist"] if f["name"] in CJK_FONTS}
    font_list["ttflist"] = [f for f in font_list["ttflist"] if f["fname"] not in cjk_files]  # every face of them
    assert cjk_files, (
        "no font with Chinese glyphs is installed: `make fonts` installs one (fonts-wqy-microhei)")
    cache.write_text(json.dumps(font_list))

    result = json.loads(run(DRAW, env, json.dumps(strings)).splitlines()[-1])
    assert result["cached"] == []  # the situation of the issue: the cached list had no CJK font
    assert result["font"] in CJK_FONTS, result
    assert result["missing"] == [], result["missing"][:5]
    # and the cache now holds it, so the next Python finds it without reading the font files again
    assert any(f["name"] in CJK_FONTS for f in json.loads(cache.read_text())["ttflist"])
