"""docs/threat-model.md names the test that proves each wall: every test and test file it names exists."""
import re

from kit_paths import ROOT

DOC = (ROOT / "docs" / "threat-model.md").read_text(encoding="utf-8")
TESTS = ROOT / "tests"


def defined_tests():
    found = set()
    for path in TESTS.rglob("test_*.py"):
        found |= set(re.findall(r"^(?:async )?def (test_\w+)", path.read_text(encoding="utf-8"), re.M))
    return found


def test_every_test_the_threat_model_names_exists():
    named = set(re.findall(r"\b(test_[a-z0-9_]+)\b", DOC)) - {p.stem for p in TESTS.rglob("test_*.py")}
    assert len(named) >= 10, "the threat model names the tests that prove its walls"
    assert named <= defined_tests(), sorted(named - defined_tests())


def test_every_test_file_the_threat_model_names_exists():
    files = set(re.findall(r"tests/((?:\w+/)*test_\w+\.py)", DOC))
    assert files, "the threat model names its test files"
    assert all((TESTS / name).is_file() for name in files), sorted(n for n in files if not (TESTS / n).is_file())
