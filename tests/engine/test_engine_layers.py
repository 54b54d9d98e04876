"""The engine's house rules, checked: imports go one way (down the layers drawn in the package
docstring), every operation is named once in the registry, and the speed switch works."""
import ast
import re
import subprocess
import sys

import numpy as np
import pytest

import autograd_core
from autograd_core import _speed, functional
import layer_maps
from kit_paths import ROOT

PACKAGE = ROOT / "autograd_core"


def drawn_layers():
    """``{module: layer}`` from the map in the package docstring (``autograd/`` is one module)."""
    return layer_maps.drawn_layers(autograd_core.__doc__)


def module_of(path):
    """``autograd_core/autograd/api.py`` -> ``autograd``; ``autograd_core/ops.py`` -> ``ops``."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return "__init__" if parts == ("__init__",) else parts[0]


def engine_imports(path):
    """The engine modules a file imports, at the top or inside functions."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]  # ("autograd_core",) or (..., "autograd")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            names = [node.module] if node.module else [a.name for a in node.names]
            for name in names:
                found.add((*base, *name.split("."))[1])  # a subpackage (autograd/, nn/, ...) is one module
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found.update(m.split(".")[1] for m in modules if m.startswith("autograd_core."))
    return found - {module_of(path)}


def import_graph():
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        graph.setdefault(module_of(path), set()).update(engine_imports(path))
    return graph


def test_every_module_of_the_engine_is_on_the_map():
    assert set(import_graph()) == set(drawn_layers())


@pytest.mark.parametrize("module", sorted(drawn_layers()))
def test_a_module_imports_only_from_layers_below_its_own(module):
    layers = drawn_layers()
    above = {d: layers[d] for d in import_graph()[module] if layers[d] >= layers[module]}
    assert not above, f"{module} (layer {layers[module]}) imports from its own layer or above: {above}"


def test_the_import_graph_has_no_cycle():
    graph, state = import_graph(), {}

    def visit(module, path):
        if state.get(module) == "done":
            return
        assert state.get(module) != "open", f"import cycle: {' -> '.join(path + [module])}"
        state[module] = "open"
        for dep in sorted(graph[module]):
            visit(dep, path + [module])
        state[module] = "done"

    for module in graph:
        visit(module, [])


# --- the registry ----------------------------------------------------------------------
def test_every_registered_function_is_exported_and_every_method_attached():
    for name, f in functional.FUNCTIONS.items():
        assert getattr(autograd_core, name) is f, name
    for name, f in functional.METHODS.items():
        assert getattr(autograd_core.Tensor, name) is f, name


@pytest.mark.parametrize("name", [name for name, _, _ in functional.ELEMENTWISE])
def test_an_elementwise_line_makes_a_function_and_a_method(name):
    x = autograd_core.tensor([0.5, 1.0], requires_grad=True)
    y, z = getattr(autograd_core, name)(x), getattr(x, name)()
    assert type(y.grad_fn) is type(z.grad_fn) and y.tolist() == z.tolist()
    with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor, not float$"):
        getattr(autograd_core, name)(1.0)


# --- the speed switch ----------------------------------------------------------------------
def test_the_environment_turns_the_shortcuts_off():
    run = subprocess.run(
        [sys.executable, "-c", "import autograd_core; print(autograd_core._speed.enabled)"],
        capture_output=True, text=True, cwd=ROOT, env={"AUTOGRAD_CORE_SPEED": "0", "PATH": "/usr/bin:/bin"},
    )
    assert run.stdout.strip() == "False", run.stderr


@pytest.mark.parametrize("enabled", [True, False], ids=["speed-on", "speed-off"])
def test_with_the_shortcuts_off_a_leaf_copies_its_first_gradient(monkeypatch, enabled):
    copies = []
    clone = autograd_core.Tensor.clone
    monkeypatch.setattr(autograd_core.Tensor, "clone", lambda self: copies.append(self) or clone(self))
    monkeypatch.setattr(_speed, "enabled", enabled)
    x = autograd_core.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0] and len(copies) == (0 if enabled else 1)


@pytest.mark.parametrize("enabled", [True, False], ids=["speed-on", "speed-off"])
def test_unrecorded_arithmetic_gives_the_same_bits_either_way(monkeypatch, enabled):
    monkeypatch.setattr(_speed, "enabled", enabled)
    x = autograd_core.tensor([[1.5, -2.0], [0.1, 3.0]])
    out = (x * 1.0001 + 0.0001 - x) * x
    out -= 0.5
    expected = (np.float32([[1.5, -2.0], [0.1, 3.0]]) * np.float32(1.0001) + np.float32(0.0001)
                - np.float32([[1.5, -2.0], [0.1, 3.0]])) * np.float32([[1.5, -2.0], [0.1, 3.0]]) - np.float32(0.5)
    assert out.numpy().tobytes() == expected.astype(np.float32).tobytes()


def test_adding_atan_as_docs_engine_md_shows_takes_its_class_and_one_line(tmp_path):
    """The two edits of docs/engine.md, made to a copy of the engine, give torch.atan and x.atan()."""
    import shutil
    import textwrap

    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)\n *```", (ROOT / "docs" / "engine.md").read_text(), re.S)]
    node_class = next(b for b in blocks if "class AtanBackward0" in b)
    table_line = next(b for b in blocks if b.startswith('("atan"'))
    engine = tmp_path / "autograd_core"
    shutil.copytree(PACKAGE, engine, ignore=shutil.ignore_patterns("__pycache__"))
    ops_py, functional_py = engine / "ops.py", engine / "functional.py"
    ops_py.write_text(ops_py.read_text() + "\n\n" + node_class + "\n")
    lines = functional_py.read_text().splitlines(keepends=True)
    table = next(i for i, line in enumerate(lines) if line.startswith("ELEMENTWISE = ["))
    lines.insert(table + 1, "    " + table_line + "\n")
    functional_py.write_text("".join(lines))
    program = (
        "import autograd_core as torch\n"
        "x = torch.tensor([0.5, -2.0], requires_grad=True)\n"
        "y = torch.atan(x) + x.atan()\n"
        "y.sum().backward()\n"
        "print(y.grad_fn.next_functions[0][0].name(), [round(v, 4) for v in x.grad.tolist()])\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.stdout == "AtanBackward0 [1.6, 0.4]\n", run.stderr
