"""PyTorch's autograd tutorials and blitz, d2l's chapters 2-5 (both editions) and the first pages of its
attention chapter, micrograd's tests, Justin Johnson's examples, makemore parts 1-5, and the GPT
lecture's code, run unchanged with the kit's engine in torch's place, print what PyTorch 2.13 printed.

The code of each page is in ``tutorials/extracts/`` (verbatim; where it comes from, and every
line dropped and why, in ``tutorials/sources.toml``); ``NAME.out`` is what PyTorch printed for it.
``tutorials/run_as_torch.py`` runs an extract (after ``torch.manual_seed(0)``: the same random numbers in both).
"""
import re
import tomllib
from pathlib import Path

import pytest

from engine_helpers import import_torch
from tutorials.record import run

HERE = Path(__file__).parent / "tutorials"
ENTRIES = tomllib.loads((HERE / "sources.toml").read_text(encoding="utf-8"))
SOURCES = {name: entry for name, entry in ENTRIES.items() if "output" not in entry}  # (not: library parts)
# An entry with slow = true (a training of a minute or more) runs in test_tutorials_long.py, marked slow
# (`make test` runs it, beside this module in the other worker; `-m "not slow"` leaves it out).
QUICK_ONES = sorted(name for name, entry in SOURCES.items() if not entry.get("slow"))
SLOW_ONES = sorted(name for name, entry in SOURCES.items() if entry.get("slow"))
NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+")


def normalised(text, entry):
    text = re.sub(r"0x[0-9a-fA-F]+", "0xADDR", text)
    for pattern in entry.get("mask", []):
        text = re.sub(pattern, "<masked>", text)
    return text


def laid_out(text):
    """Text without the spaces NumPy pads its numbers with (runs of blanks, blanks at brackets)."""
    return re.sub(r"\s*([\[\]])\s*", r"\1", re.sub(r"\s+", " ", text))


def assert_prints_alike(ours, theirs, entry):
    ours, theirs = normalised(ours, entry), normalised(theirs, entry)
    rtol, atol = entry.get("rtol"), entry.get("atol", 0.0)
    if rtol is None:
        assert ours == theirs
        return
    # Numbers within rtol and atol (see the entry's reason); everything else exactly, but for the
    # spaces and line breaks NumPy lays its numbers out with (their widths follow their digits).
    assert laid_out(NUMBER.sub("#", ours)) == laid_out(NUMBER.sub("#", theirs))
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs)):
        assert abs(float(a) - float(b)) <= atol + rtol * abs(float(b)), f"{a} != {b}"


def test_every_extract_has_a_source_and_a_recording():
    extracts = {p.stem for p in (HERE / "extracts").glob("*.py")}
    assert extracts == set(SOURCES)
    for name, entry in ENTRIES.items():
        assert {"repository", "path", "commit", "kind"} <= entry.keys(), name
        assert re.fullmatch(r"[0-9a-f]{40}", entry["commit"]), name
        for drop in entry.get("drop", []) + entry.get("replace", []):
            assert drop["reason"], (name, drop)
    for name in SOURCES:  # (a "silent" page prints nothing but its plots: its recording is empty)
        assert (HERE / "extracts" / f"{name}.out").read_text().strip() or SOURCES[name].get("silent"), name


def test_the_english_french_stand_in_has_the_corpus_format():
    # d2l-en's MTFraEng keeps a line with exactly two tab-separated parts: English, then French
    from tutorials.record import _english_french_stand_in

    text = _english_french_stand_in()
    pairs = [line.split("\t") for line in text.splitlines()]
    assert len(pairs) == 700 and all(len(pair) == 2 and all(part.strip() for part in pair) for pair in pairs)
    assert {("Go.", "Va !"), ("I lost.", "J'ai perdu."), ("He's calm.", "Il est calme."),
            ("I'm home.", "Je suis chez moi.")} <= {tuple(pair) for pair in pairs}
    assert text == _english_french_stand_in()  # the same on every run


@pytest.fixture(scope="module")
def printed_by_engine():
    return run("engine", QUICK_ONES)


@pytest.fixture(scope="module")
def printed_by_torch():
    import_torch()
    return run("torch", QUICK_ONES)


def assert_as_recorded(name, printed):
    recorded = (HERE / "extracts" / f"{name}.out").read_text(encoding="utf-8")
    assert_prints_alike(printed[name], recorded, SOURCES[name])


@pytest.mark.parametrize("name", QUICK_ONES)
def test_extract_prints_what_pytorch_printed(name, printed_by_engine):
    assert_as_recorded(name, printed_by_engine)


@pytest.mark.parametrize("name", QUICK_ONES)
def test_recording_is_what_pytorch_prints_today(name, printed_by_torch):
    # An entry with a tolerance sums in an order that PyTorch itself changes with the CPU's kernels
    # (its reason is beside it): today's PyTorch is held to that tolerance too, the rest exactly.
    assert_as_recorded(name, printed_by_torch)
