"""The layer maps drawn in a package's docstring (``autograd_core``, ``grader`` and the hub's recipe
``kithub`` draw one each), and the walk of a package's imports that the grader's and the hub recipe's
house rules check against their map (engine/test_engine_layers.py, grader/test_grader_layers.py,
hub/test_deploy_layers.py).

A package's modules are nodes named by their path inside it (``autograd/run``, ``cli``, ``lti/__init__``);
a unit is a top-level module or a whole subpackage (``lti``), and the map gives each unit a layer."""
import ast
import re
from pathlib import Path


def drawn_layers(docstring):
    """``{unit: layer}`` from a map whose lines read ``    N name.py ...`` or ``      name/ ...``
    (a line without a number is in the layer above it; a subpackage is one unit)."""
    layers, layer = {}, None
    for line in docstring.splitlines():
        m = re.match(r"^ {4}(\d+)? +(\w+\.py|\w+/) ", line)
        if m:
            layer = int(m.group(1)) if m.group(1) else layer
            layers[m.group(2).removesuffix(".py").removesuffix("/")] = layer
    return layers


def files(package: Path):
    """The package's Python files."""
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def node_of(package: Path, path: Path):
    """``kithub/lti/tool.py`` -> ``lti/tool``; ``grader/cli.py`` -> ``cli``."""
    return "/".join(path.relative_to(package).with_suffix("").parts)


def unit_of(node):
    return node.split("/")[0]


def _resolve(package: Path, parts, node, found):
    """Add the package's module (or subpackage, as its ``__init__``) that ``parts`` (the dotted name after the
    package's) names; ``node``, the ``from ... import`` it comes from, if any, for the modules it names."""
    target = package.joinpath(*parts)
    if target.is_dir():
        found.add("/".join((*parts, "__init__")))
        if isinstance(node, ast.ImportFrom):
            found.update("/".join((*parts, a.name)) for a in node.names if (target / f"{a.name}.py").exists())
    elif target.with_suffix(".py").exists():
        found.add("/".join(parts))
    elif len(parts) > 1:  # `from kithub.spec import ClassSpec`: the module, not its name
        _resolve(package, parts[:-1], None, found)


def imports_of(package: Path, path: Path, named_in_strings=False):
    """The package's modules that the file ``path`` of it imports, at the top or inside functions, as nodes;
    with ``named_in_strings``, also the modules a string names (``"kithub.lti.login"``, an entry of a
    registry imported later; ``-m kithub.lessons``, a command)."""
    name = package.name
    here = (name, *path.relative_to(package).with_suffix("").parts[:-1])  # ("kithub",) or ("kithub", "lti")
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[:len(here) - node.level + 1]
            modules = [(*base, *node.module.split("."))] if node.module else [(*base, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [tuple(node.module.split("."))]
        elif isinstance(node, ast.Import):
            modules = [tuple(a.name.split(".")) for a in node.names]
        elif named_in_strings and isinstance(node, ast.Constant) and isinstance(node.value, str):
            modules = [tuple(m.split(".")) for m in re.findall(rf"\b{name}(?:\.\w+)+\b", node.value)]
        else:
            continue
        for parts in modules:
            if parts == (name,) and isinstance(node, ast.ImportFrom):  # `from kithub import runtime`
                for a in node.names:
                    _resolve(package, (a.name,), None, found)
            elif parts[0] == name and len(parts) > 1:
                _resolve(package, parts[1:], node if isinstance(node, ast.ImportFrom) else None, found)
    return found - {node_of(package, path)}


def import_graph(package: Path, named_in_strings=False):
    """``{node: {node it imports, ...}}`` over the whole package."""
    return {node_of(package, path): imports_of(package, path, named_in_strings) for path in files(package)}


def imports_from_above(graph, layers, unit):
    """``{node: its layer}`` for each module that a module of ``unit`` imports from a layer above its own."""
    above = {}
    for node, imported in graph.items():
        if unit_of(node) == unit:
            above.update({d: layers[unit_of(d)] for d in imported
                          if unit_of(d) in layers and layers[unit_of(d)] > layers[unit]})
    return above


def unit_graph(graph):
    """``{unit: {unit it imports, ...}}``: the import graph with each subpackage taken as one node."""
    units = {}
    for node, imported in graph.items():
        units.setdefault(unit_of(node), set()).update(unit_of(d) for d in imported if unit_of(d) != unit_of(node))
    return units


def a_cycle(graph):
    """An import cycle of ``graph`` as ``[a, b, ..., a]``, or None."""
    state = {}

    def visit(module, path):
        if state.get(module) == "done":
            return None
        if state.get(module) == "open":
            return path + [module]
        state[module] = "open"
        for dep in sorted(graph.get(module, ())):
            found = visit(dep, path + [module])
            if found:
                return found[found.index(found[-1]):]
        state[module] = "done"
        return None

    return next((found for module in graph if (found := visit(module, []))), None)


def crowded_functions(path: Path):
    """The functions of ``path`` over five positional or eight parameters in all (``self``, ``cls`` not counted)."""
    crowded = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            positional = [a for a in node.args.posonlyargs + node.args.args if a.arg not in ("self", "cls")]
            if len(positional) > 5 or len(positional) + len(node.args.kwonlyargs) > 8:
                crowded.append(f"{node.name}: {len(positional)} positional, "
                               f"{len(positional) + len(node.args.kwonlyargs)} in all")
    return crowded
