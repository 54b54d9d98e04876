"""The hub recipe's house rules, checked as the grader's are (tests/grader/test_grader_layers.py): imports go one way
(down the layers drawn in ``deploy/hub/kithub/__init__.py``; imports inside functions, and modules named in
a string to be imported later, counted too), no module is long, no function takes many parameters, the hub's
configuration imports only what the hub runs, and docs/deploy.md's map names every module there is."""
import ast
import re

import pytest

import layer_maps
from kit_paths import ROOT

PACKAGE = ROOT / "deploy" / "hub" / "kithub"
NAME = "kithub"
#: what JupyterHub's configuration of the class may import of the recipe: what the hub runs, no set-up
HUB_RUNS = {"spec", "runtime", "spawner", "logins/__init__"}


def files():
    return layer_maps.files(PACKAGE)


def node_of(path):
    """``kithub/lti/tool.py`` -> ``lti/tool``; ``kithub/cli.py`` -> ``cli``."""
    return layer_maps.node_of(PACKAGE, path)


def drawn_layers():
    """``{unit: layer}`` from the map in the package's docstring (a subpackage is one unit)."""
    return layer_maps.drawn_layers(ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text())))


def imports_of(path):
    """The recipe's modules a file imports (at the top or inside functions) or names in a string
    (``"kithub.lti.login"``, a login method's registry entry; ``-m kithub.lessons``, a command), as nodes."""
    return layer_maps.imports_of(PACKAGE, path, named_in_strings=True)


def import_graph():
    return layer_maps.import_graph(PACKAGE, named_in_strings=True)


def test_every_module_of_the_recipe_is_on_the_map():
    units = {layer_maps.unit_of(n) for n in import_graph()} - {"__init__"}
    assert units == set(drawn_layers())


@pytest.mark.parametrize("unit", sorted(drawn_layers()))
def test_a_module_imports_only_from_its_layer_or_below(unit):
    layers = drawn_layers()
    above = layer_maps.imports_from_above(import_graph(), layers, unit)
    assert not above, f"{unit} (layer {layers[unit]}) imports from a layer above: {above}"


def test_the_import_graph_has_no_cycle_counting_imports_inside_functions():
    cycle = layer_maps.a_cycle(import_graph())
    assert not cycle, f"import cycle: {' -> '.join(cycle)}"


def test_the_checks_see_an_import_inside_a_function_and_a_module_named_in_a_string(tmp_path, monkeypatch):
    import sys

    fake = tmp_path / "deploy" / "hub" / NAME
    fake.mkdir(parents=True)
    (fake / "a.py").write_text("from .b import x\n")
    (fake / "b.py").write_text("def f():\n    from .c import y\n")
    (fake / "c.py").write_text('METHODS = {"a": "kithub.a"}\n')
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    assert import_graph() == {"a": {"b"}, "b": {"c"}, "c": {"a"}}
    with pytest.raises(AssertionError, match="import cycle: a -> b -> c -> a"):
        test_the_import_graph_has_no_cycle_counting_imports_inside_functions()


@pytest.mark.parametrize("path", files(), ids=node_of)
def test_no_module_is_over_350_lines(path):
    lines = len(path.read_text().splitlines())
    assert lines <= 350, f"{path.relative_to(ROOT)}: {lines} lines"


@pytest.mark.parametrize("path", files(), ids=node_of)
def test_no_function_takes_over_five_positional_or_eight_parameters(path):
    crowded = layer_maps.crowded_functions(path)
    assert not crowded, f"{path.relative_to(ROOT)}: {crowded}"


def test_the_hubs_configuration_imports_only_what_the_hub_runs():
    imported = imports_of(PACKAGE / "jupyterhub_config.py")
    assert imported <= HUB_RUNS, imported - HUB_RUNS
    # and those import nothing of the set-up, the backup or the command line
    graph, seen, todo = import_graph(), set(), list(imported)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += graph.get(node, ())
    assert not {layer_maps.unit_of(n) for n in seen} & {"set_up", "backup", "cli", "hub_process", "courses", "config_files"}, seen


def test_nothing_of_the_recipe_edits_sys_path_or_runs_a_program_kept_in_a_string():
    for path in [*files(), *(ROOT / "deploy").rglob("*.py")]:
        text = path.read_text()
        assert "sys.path.insert" not in text and "sys.path.append" not in text, path
    # the one `python -c` left: the kernel's bootstrap, which must take the working folder off sys.path
    # before anything is imported (kithub/kernel.py says why), and calls the module that does the rest
    runs = [path.name for path in files() for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and node.value == "-c"]
    assert runs == ["config_files.py"], runs


# --- docs/deploy.md's map of the recipe ----------------------------------------------------------------
def drawn_in_the_docs():
    text = (ROOT / "docs" / "deploy.md").read_text()
    section = text.split("## Where the code lives", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`deploy/hub/kithub/([\w/]+\.py|\w+/)`", section))


def test_docs_deploy_md_names_every_module_and_only_modules_that_exist():
    modules = {node_of(p) + ".py" for p in files() if p.parent == PACKAGE and p.name != "__init__.py"}
    modules |= {p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert drawn_in_the_docs() == modules
