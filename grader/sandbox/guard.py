"""The integrity guard: puts back what tests rely on before each test cell that runs in-process.

Only plain nbgrader test cells (asserts run in the student's process) need it: a trusted test
(one that uses ``student()``) runs in the grader's process and relies on nothing here. The guard
keeps a snapshot of the modules loaded before student code ran, the shell's own machinery and the
names instructor cells bound, and restores them. It is a speed bump, not a wall: whatever runs in
the student's process belongs to the student (see docs/threat-model.md).
"""

from __future__ import annotations

import sys
import types
from itertools import repeat
from operator import attrgetter, is_not

#: Packages the grader itself runs on (nbgrader, its database, its web and template stack). Tests
#: never call them, so the guard does not watch them: each watched object costs a little on every
#: fork (copy-on-write) and every test cell.
GRADING_INFRASTRUCTURE = {
    "sqlalchemy", "alembic", "mako", "nbgrader", "nbconvert", "nbformat", "nbclient", "jupyter_client",
    "jupyter_core", "jupyter_server", "jupyter_server_terminals", "jupyterlab", "jupyterlab_server", "notebook",
    "tornado", "zmq", "requests", "urllib3", "idna", "charset_normalizer", "certifi", "bleach", "tinycss2",
    "webencodings", "mistune", "jinja2", "markupsafe", "jsonschema", "jsonschema_specifications", "referencing",
    "rpds", "fastjsonschema", "rapidfuzz", "lark", "prometheus_client", "setuptools", "pkg_resources",
    "distutils", "_distutils_hack", "yaml", "anyio", "sniffio", "websocket", "send2trash", "terminado",
    "argon2", "overrides", "more_itertools", "pandocfilters", "defusedxml", "bs4", "soupsieve", "jupyter_events",
    "json_logger", "pythonjsonlogger", "rfc3339_validator", "rfc3986_validator", "uri_template", "fqdn",
    "isoduration", "arrow", "webcolors", "jsonpointer", "babel", "json5", "httpx", "httpcore", "h11",
}


#: What ordinary notebook magics change (``%matplotlib inline``, ``%load_ext autoreload``): put back
#: before a plain test cell like the rest, but not worth a finding.
MAGIC_EFFECTS = ("matplotlib.", "EventManager.callbacks", "GradingShell.configurables", "ExtensionManager.")


def worth_reporting(changed: list[str]) -> list[str]:
    """The changes a finding should name (not the ones ordinary magics make)."""
    return [name for name in changed if not name.startswith(MAGIC_EFFECTS)]


class IntegrityGuard:
    """A snapshot of what tests rely on, and the means to put it back before each instructor cell."""

    def __init__(self, shell):
        self.shell = shell
        self.modules = {name: module for name, module in sys.modules.items()
                        if isinstance(module, types.ModuleType) and name not in ("__main__", "__mp_main__")
                        and name != "sys" and name.split(".")[0] not in GRADING_INFRASTRUCTURE}
        self.module_dicts = {name: _watched(vars(module)) for name, module in self.modules.items()}
        self.functions = {}
        self.classes = {}
        for name, module in self.modules.items():
            for value in vars(module).values():
                if isinstance(value, types.FunctionType) and id(value) not in self.functions:
                    self.functions[id(value)] = (value, value.__code__, value.__defaults__, value.__kwdefaults__)
                elif isinstance(value, type) and getattr(value, "__module__", None) == name \
                        and not _is_immutable_type(value):
                    self.classes.setdefault(id(value), (value, _watched(vars(value))))
        shell_type = type(shell)
        for cls in shell_type.__mro__:
            if not _is_immutable_type(cls):
                self.classes.setdefault(id(cls), (cls, _watched(vars(cls))))
        self.function_list = [entry[0] for entry in self.functions.values()]
        self.function_codes = [entry[1] for entry in self.functions.values()]
        self.function_defaults = [entry[2] for entry in self.functions.values()]
        self.function_kwdefaults = [entry[3] for entry in self.functions.values()]
        self.sys_hooks = {name: getattr(sys, name) for name in ("excepthook", "breakpointhook", "unraisablehook")}
        # The shell's own state that changes how a cell runs or how its result is shown.
        self.shell_parts = [shell, shell.display_formatter, *shell.display_formatter.formatters.values(),
                            shell.input_transformer_manager, shell.compile, shell.events]
        self.shell_state = [_snapshot_state(part) for part in self.shell_parts]
        self.instructor_names: dict[str, object] = {}

    def remember_instructor_names(self, namespace, bound: set[str]):
        """Record the modules, functions and classes an instructor cell bound (``bound``: its own names)."""
        for name in bound:
            value = namespace.get(name, _MISSING)
            if isinstance(value, (types.ModuleType, types.FunctionType, type)):
                self.instructor_names[name] = value
            else:
                self.instructor_names.pop(name, None)

    def rebaseline(self, recorder) -> None:
        """Accept the current state (after the grading process set itself up) as the pristine one."""
        for name, module in self.modules.items():
            self.module_dicts[name] = _watched(vars(module))
        self.shell_state = [_snapshot_state(part) for part in self.shell_parts]
        recorder.install()

    def restore(self, recorder) -> list[str]:
        """Put everything back; return what had been changed."""
        changed: list[str] = []
        sys.settrace(None)
        sys.setprofile(None)
        for name, value in self.sys_hooks.items():
            if getattr(sys, name) is not value:
                changed.append(f"sys.{name}")
                setattr(sys, name, value)
        # Each check below is a C-level identity scan (no Python loop, no __eq__ of student objects);
        # only a namespace that differs is walked key by key.
        module_names = list(self.modules)
        modules = [self.modules[name] for name in module_names]
        if any(map(is_not, map(sys.modules.get, module_names), modules)):
            for name, module in zip(module_names, modules):
                if sys.modules.get(name) is not module:
                    changed.append(f"sys.modules[{name!r}]")
                    sys.modules[name] = module
        for name, module in zip(module_names, modules):
            current, saved = vars(module), self.module_dicts[name]
            if _differs(current, saved):
                for key, value in saved.items():
                    if current.get(key, _MISSING) is not value:
                        changed.append(f"{name}.{key}")
                        current[key] = value
        functions = self.function_list
        if any(map(is_not, map(_CODE, functions), self.function_codes)) \
                or any(map(is_not, map(_DEFAULTS, functions), self.function_defaults)) \
                or any(map(is_not, map(_KWDEFAULTS, functions), self.function_kwdefaults)):
            for function, code, defaults, kwdefaults in self.functions.values():
                if function.__code__ is not code or function.__defaults__ is not defaults \
                        or function.__kwdefaults__ is not kwdefaults:
                    changed.append(f"{function.__module__}.{function.__qualname__} (code)")
                    function.__code__, function.__defaults__, function.__kwdefaults__ = code, defaults, kwdefaults
        for cls, saved in self.classes.values():
            current = vars(cls)
            if not _differs(current, saved):
                continue
            for key, value in saved.items():
                if current.get(key, _MISSING) is not value:
                    try:
                        setattr(cls, key, value)
                        changed.append(f"{cls.__module__}.{cls.__qualname__}.{key}")
                    except (AttributeError, TypeError):
                        pass
        installed = {"_showtraceback": recorder.show_traceback}
        for key in [k for k in vars(self.shell) if k in _SHELL_METHODS]:
            if vars(self.shell)[key] is not installed.get(key):
                changed.append(f"shell.{key}")
            delattr(self.shell, key)
        if self.shell.displayhook is not recorder.displayhook or self.shell.display_pub is not recorder.display_pub \
                or self.shell.display_trap.hook is not recorder.displayhook:
            changed.append("shell display hooks")
        for part, state in zip(self.shell_parts, self.shell_state):
            changed += _restore_state(part, state)
        namespace = self.shell.user_ns
        for name, value in self.instructor_names.items():
            if namespace.get(name, _MISSING) is not value:
                changed.append(f"name {name!r} bound by an instructor cell")
                namespace[name] = value
        recorder.install()
        return changed


_MISSING = object()
_CODE, _DEFAULTS, _KWDEFAULTS = (attrgetter(name) for name in ("__code__", "__defaults__", "__kwdefaults__"))


def _differs(current, saved: dict) -> bool:
    """Whether any saved entry is no longer the very same object in ``current`` (a C-level scan)."""
    return any(map(is_not, map(current.get, saved.keys(), repeat(_MISSING)), saved.values()))
_UNWATCHED = {"__doc__", "__dict__", "__weakref__", "__annotations__", "__file__", "__cached__", "__spec__",
              "__loader__", "__path__", "__package__", "__name__", "__qualname__", "__module__", "__slotnames__",
              "__abstractmethods__", "__parameters__", "__orig_bases__"}


def _watched(namespace) -> dict:
    """The entries of a module's or class's namespace the guard keeps: public names and dunder hooks.

    Single-underscore names are a library's private state (caches, lazily chosen backends, a
    default dtype set with ``set_default_dtype``); they stay as the notebook left them, as in a
    plain kernel.
    """
    return {key: value for key, value in namespace.items()
            if key not in _UNWATCHED and (not key.startswith("_") or (key.startswith("__") and key.endswith("__")))}
_STATE_SKIP = {"user_ns", "user_module", "user_global_ns", "user_ns_hidden", "execution_count", "last_execution_result",
               "last_execution_succeeded", "_last_traceback", "displayhook", "display_pub", "display_trap",
               "_showtraceback", "_filename_map", "_main_mod_cache", "history_manager", "_orig_sys_module_state",
               "_orig_sys_modules_main_name", "_orig_sys_modules_main_mod", "builtin_trap", "_cached_hashes",
               "db", "tempfiles", "tempdirs", "_trait_notifiers", "_cross_validation_lock", "_trait_validators",
               "_last_input_line", "_reply_content", "_user_main_module", "starting_dir", "dir_stack"}


def _state_items(obj):
    items = dict(vars(obj))
    if hasattr(obj, "trait_names"):
        for name in obj.trait_names():  # reading a trait materialises a lazily created default
            if name not in _STATE_SKIP and "user_" not in name:
                try:
                    getattr(obj, name)
                except Exception:
                    pass
    items.update(getattr(obj, "_trait_values", {}))
    return {k: v for k, v in items.items()
            if k not in _STATE_SKIP and k not in ("_trait_values", "flags") and "user_" not in k and not k.startswith("_user")}


def _copy_contents(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: (v, list(v) if isinstance(v, list) else None) for k, v in value.items()}
    return None


def _snapshot_state(obj):
    """Each attribute of ``obj``, with a copy of its contents when it is a list or dict."""
    return {key: (value, _copy_contents(value)) for key, value in _state_items(obj).items()}


def _restore_state(obj, snapshot) -> list[str]:
    """Put ``obj``'s attributes back; name those whose values were replaced or edited.

    Keys a dict gained or lost are put back silently: IPython itself moves lazily registered
    printers between its formatter's dicts.
    """
    changed = []
    traits = getattr(obj, "_trait_values", None)
    current = _state_items(obj)
    label = type(obj).__name__
    for key, (value, contents) in snapshot.items():
        if current.get(key, _MISSING) is not value:
            changed.append(f"{label}.{key}")
            if traits is not None and key in traits:
                traits[key] = value
            else:
                vars(obj)[key] = value
        if isinstance(value, list):
            if len(value) != len(contents) or any(a is not b for a, b in zip(value, contents)):
                changed.append(f"{label}.{key}")
                value[:] = contents
        elif isinstance(value, dict):
            edited = False
            for k, (item, items) in contents.items():
                now = value.get(k, _MISSING)
                if now is not _MISSING and now is not item:
                    edited = True
                if isinstance(item, list) and (len(item) != len(items) or any(a is not b for a, b in zip(item, items))):
                    edited = True
                    item[:] = items
            if edited:
                changed.append(f"{label}.{key}")
            if edited or len(value) != len(contents) or any(value.get(k, _MISSING) is not v for k, (v, _) in contents.items()):
                value.clear()
                value.update({k: v for k, (v, _) in contents.items()})
    return changed
_SHELL_METHODS = {"run_cell", "_run_cell", "run_cell_async", "run_ast_nodes", "run_code", "showtraceback",
                  "showsyntaxerror", "_showtraceback", "get_exception_only", "excepthook", "transform_cell",
                  "should_run_async", "ex", "ev"}


#: CPython's type flags (Include/object.h): a heap type (made by Python code) and an immutable one.
_TPFLAGS_IMMUTABLETYPE = 1 << 8
_TPFLAGS_HEAPTYPE = 1 << 9


def _is_immutable_type(cls) -> bool:
    """True for types Python code cannot change (static types, or flagged immutable)."""
    flags = getattr(cls, "__flags__", 0)
    return not flags & _TPFLAGS_HEAPTYPE or bool(flags & _TPFLAGS_IMMUTABLETYPE)




def bound_names(shell, source: str) -> set[str]:
    """The names a cell's own code binds (assignments, imports, definitions)."""
    import ast

    try:
        tree = ast.parse(shell.transform_cell(source))
    except Exception:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names
