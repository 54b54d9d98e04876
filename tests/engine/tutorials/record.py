"""Record what PyTorch prints for each extract: ``python record.py [NAME ...]`` writes extracts/NAME.out.

Run with the pinned PyTorch (``torch==2.13.0``, installed by ``make setup-test``); the tests
check that the recordings still match what PyTorch prints, so a stale one fails.
"""
from __future__ import annotations

import gzip
import json
import pickle
import random
import string
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parents[2]


def sources():
    return tomllib.loads((HERE / "sources.toml").read_text(encoding="utf-8"))


def _extract(name):
    """The extract as run_as_torch.py takes it: its path, and ``::`` its options if it has any."""
    entry = sources()[name]
    options = (["call-tests"] if entry.get("call_tests") else []) + \
        ([f"library={entry['library']}"] if "library" in entry else []) + \
        (["allow-errors"] if entry.get("allow_errors") else []) + (["losses"] if entry.get("losses") else [])
    return str(HERE / "extracts" / f"{name}.py") + ("::" + ",".join(options) if options else "")


def make_data_files(folder):
    """The files the extracts read, made here instead of downloaded: ``names.txt`` for makemore
    (3,000 names of 2 to 8 letters, every letter of a-z used, drawn by a generator with a fixed seed);
    ``input.txt`` for the GPT lecture in place of tiny Shakespeare (20,000 characters of lines of
    made-up words, capitals and punctuation, from a fixed seed); ``data/mnist.pkl.gz`` (below);
    ``../data/fra-eng/fra.txt`` (beside ``folder``: where d2l-en's ``MTFraEng`` looks, ``root='../data'``),
    a stand-in for the English-French corpus (``_english_french_stand_in``)."""
    fra_eng = Path(folder).parent / "data" / "fra-eng"
    fra_eng.mkdir(parents=True)
    (fra_eng / "fra.txt").write_text(_english_french_stand_in(), encoding="utf-8")
    rng = random.Random(0)
    vowels = "aeiouy"
    names = ["".join(rng.choice(vowels) if k % 2 else rng.choice(string.ascii_lowercase) for k in range(rng.randint(2, 8)))
             for _ in range(3000)]
    (Path(folder) / "names.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    words = ["".join(rng.choice(vowels) if k % 2 else rng.choice(string.ascii_lowercase) for k in range(rng.randint(1, 7)))
             for _ in range(400)]
    lines = []
    while sum(len(line) + 1 for line in lines) < 20_000:
        line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 9)))
        lines.append(line[0].upper() + line[1:] + rng.choice(".,;:!?"))
        if rng.random() < 0.2:
            lines.append("")
    (Path(folder) / "input.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (Path(folder) / "data").mkdir()
    with gzip.open(Path(folder) / "data" / "mnist.pkl.gz", "wb") as f:
        pickle.dump(_mnist_stand_in(), f)


def _mnist_stand_in():
    """``data/mnist.pkl.gz`` as fastai's and PyTorch's MNIST pages read it ((x, y) for training,
    validation and test: rows of 784 float32 pixels in [0, 1], int64 labels), made small and synthetic:
    5,000, 1,000 and 1,000 noisy copies of ten fixed random images, dark with a fifth of their pixels lit
    as MNIST's digits are (NumPy, a fixed seed)."""
    import numpy as np

    shapes = np.random.default_rng(0)
    templates = (shapes.uniform(0, 1, (10, 784)) < 0.2) * shapes.uniform(0.5, 1, (10, 784))  # dark, a fifth lit
    parts = []
    for count, seed in ((5000, 1), (1000, 2), (1000, 3)):
        rng = np.random.default_rng(seed)
        labels = rng.integers(0, 10, count)
        noise = rng.normal(0, 0.3, (count, 784)) * (rng.uniform(0, 1, (count, 784)) < 0.3)
        pixels = np.clip(templates[labels] + noise, 0, 1).astype(np.float32)
        parts.append((pixels, labels.astype(np.int64)))
    return tuple(parts)


def _english_french_stand_in():
    """A stand-in for ``fra-eng/fra.txt``, the corpus of d2l-en's machine-translation pages (tab-separated
    English and French sentence pairs, one a line, the two columns of d2l's own copy of the Tatoeba pairs),
    which is a download: 700 short pairs made by the kit from a few rules (subject, verb, adjective or past
    participle, an adverb or none, a negation or none; imperatives; their French keeps to the rules, not
    to every elision and agreement), written for these tests and not from the corpus, shuffled by a
    generator with a fixed seed. Among them the four pairs the pages translate at the end ("Go." "I lost."
    "He's calm." "I'm home.")."""
    subjects = [("I", "Je", "J'", 0), ("You", "Tu", "Tu", 1), ("He", "Il", "Il", 2), ("She", "Elle", "Elle", 2),
                ("We", "Nous", "Nous", 3), ("They", "Ils", "Ils", 4)]
    be_en, be_fr = ["am", "are", "is", "are", "are"], ["suis", "es", "est", "sommes", "sont"]
    have_fr = ["ai", "as", "a", "avons", "ont"]
    adjectives = [("calm", "calme"), ("tired", "fatigué"), ("sad", "triste"), ("late", "en retard"),
                  ("home", "chez moi"), ("busy", "occupé"), ("ready", "prêt"), ("sick", "malade"),
                  ("free", "libre"), ("right", "raison")]
    participles = [("lost", "perdu"), ("won", "gagné"), ("eaten", "mangé"), ("slept", "dormi"), ("paid", "payé"),
                   ("called", "appelé"), ("cried", "pleuré"), ("waited", "attendu"), ("laughed", "ri"),
                   ("finished", "fini")]
    adverbs = [("", ""), (" now", " maintenant"), (" again", " encore"), (" today", " aujourd'hui")]
    orders = [("Go.", "Va !"), ("Run!", "Cours !"), ("Stop!", "Arrête !"), ("Wait!", "Attends !"),
              ("Come in.", "Entre."), ("Sit down.", "Assieds-toi."), ("Listen.", "Écoute."), ("Hurry!", "Dépêche-toi !")]
    pairs = list(orders) * 3
    for en, fr, elided, person in subjects:
        for adjective_en, adjective_fr in adjectives:
            for adverb_en, adverb_fr in adverbs:
                for negated in (False, True):
                    verb_en = be_en[person] + (" not" if negated else "")
                    verb_fr = f"ne {be_fr[person]} pas" if negated else be_fr[person]
                    pairs.append((f"{en} {verb_en} {adjective_en}{adverb_en}.", f"{fr} {verb_fr} {adjective_fr}{adverb_fr}."))
        for participle_en, participle_fr in participles:
            for adverb_en, adverb_fr in adverbs:
                have_en = "have" if person != 2 else "has"
                pairs.append((f"{en} {have_en} {participle_en}{adverb_en}.",
                              f"{elided if person == 0 else fr + ' '}{have_fr[person]} {participle_fr}{adverb_fr}."))
    rng = random.Random(0)
    rng.shuffle(pairs)
    pairs = [("I lost.", "J'ai perdu."), ("He's calm.", "Il est calme."), ("I'm home.", "Je suis chez moi.")] + pairs[:697]
    rng.shuffle(pairs)
    return "".join(f"{en}\t{fr}\n" for en, fr in pairs)


def run(engine, names):
    """What each extract prints with ``engine`` ("engine": the kit; "torch": PyTorch) as torch,
    as {name: text}: one interpreter, each extract in a process forked from it, in a folder holding
    the data files the extracts read (``make_data_files``)."""
    with tempfile.TemporaryDirectory() as outer:
        folder = Path(outer) / "pages"  # (its ../data is outer's: d2l-en's MTFraEng reads ../data/fra-eng)
        folder.mkdir()
        make_data_files(folder)
        done = subprocess.run(
            [sys.executable, str(HERE / "run_as_torch.py"), engine, "--each", *map(_extract, names)],
            capture_output=True, text=True, timeout=900, cwd=folder,
            env={"PYTHONPATH": f"{ROOT}:{HERE}", "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
                 "MPLBACKEND": "Agg",
                 # PyTorch's last digits depend on the CPU: MKL and PyTorch's own kernels each pick the
                 # code for the instructions they find, and each sums in its own order. Their switches
                 # make every x86 CPU take the code the recordings were made with (AVX2 machines).
                 "MKL_CBWR": "AVX", "ATEN_CPU_CAPABILITY": "avx2"},
        )
    if done.returncode:
        raise RuntimeError(f"{engine} exited with {done.returncode}:\n{done.stderr}")
    printed = json.loads(done.stdout)
    return {name: printed[_extract(name)] for name in names}


if __name__ == "__main__":
    import torch

    assert torch.__version__.startswith("2.13."), f"recordings are made with torch 2.13, not {torch.__version__}"
    names = sys.argv[1:] or [n for n, entry in sources().items() if "output" not in entry]
    for name, printed in run("torch", names).items():
        (HERE / "extracts" / f"{name}.out").write_text(printed, encoding="utf-8")
        print("recorded", name)
