"""How the suite is laid out and scheduled (tests/conftest.py's hooks apply it; grader/test_suite_groups.py
checks it): a test module's group is its folder, and each folder's conftest.py names which of its modules
``make test-quick`` runs and how ``make test`` schedules them (tests/conftest.py says more)."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GROUPS = ("engine", "course", "grader", "hub")
RULES = ("QUICK", "NOT_QUICK", "ONE_AT_A_TIME", "ALONE")


def declared(group: str) -> dict[str, frozenset[str] | None]:
    """The sets of module names ``tests/<group>/conftest.py`` assigns (None for one it does not)."""
    tree = ast.parse((TESTS / group / "conftest.py").read_text(encoding="utf-8"))
    found = {target.id: frozenset(ast.literal_eval(node.value)) for node in tree.body if isinstance(node, ast.Assign)
             for target in node.targets if isinstance(target, ast.Name) and target.id in RULES}
    return {rule: found.get(rule) for rule in RULES}


SCHEDULE = {group: declared(group) for group in GROUPS}
ONE_AT_A_TIME = frozenset().union(*(rules["ONE_AT_A_TIME"] or () for rules in SCHEDULE.values()))
ALONE = frozenset().union(*(rules["ALONE"] or () for rules in SCHEDULE.values()))
ONE_AT_A_TIME_GROUP = "accounts-and-hubs"


def group_of(path) -> str | None:
    """The group of the test module at ``path`` (``tests/engine/test_engine_ops.py``: ``engine``): its
    folder's under tests/, or None outside a group's folder."""
    path = Path(path).resolve()
    if not path.is_relative_to(TESTS):
        return None
    parts = path.relative_to(TESTS).parts
    return parts[0] if len(parts) > 1 and parts[0] in GROUPS else None


def is_quick(path) -> bool:
    """Whether ``make test-quick`` runs the test module at ``path``."""
    group = group_of(path)
    if group is None:
        return False
    rules, module = SCHEDULE[group], Path(path).stem
    if rules["NOT_QUICK"] is not None:
        return module not in rules["NOT_QUICK"]
    return module in (rules["QUICK"] or ())


def xdist_group_of(module: str) -> str:
    """The unit of work the two workers share out that the test module named ``module`` is in: the
    modules ONE_AT_A_TIME together, every other module whole (a module-scoped fixture, a graded class or a
    hub, is made once)."""
    return ONE_AT_A_TIME_GROUP if module in ONE_AT_A_TIME else module
