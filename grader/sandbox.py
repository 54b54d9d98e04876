"""Inside a grading process: the limits, the audit hook and the integrity guard around student code.

A worker prepares one *template* interpreter (``Template``: IPython shell created, common modules
imported, a snapshot of everything tests rely on) and forks a fresh copy of it for every
submission. The copy (``run_submission``) scrubs its environment, closes inherited files, lowers
its resource limits, installs an audit hook and then runs the notebook's cells one by one,
streaming each cell's outputs to the worker as JSON lines. Nothing from one submission survives
into the next: each is a new process.

Before every instructor cell (tests and read-only cells) the guard puts back what student code may
have replaced: the IPython error reporting, ``sys`` hooks, builtins, the functions of every module
loaded before student code ran (``numpy.testing``, ``numpy.allclose``, ...), and the names the
instructor's cells bound. Whether a test cell failed is taken from the shell's own execution
result, never from what was printed.
"""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import sys
import types
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_not

#: Audit events that student code may never trigger while it is graded.
DENIED_EVENTS = {
    "subprocess.Popen": "starting a process", "os.system": "starting a process",
    "os.exec": "starting a process", "os.posix_spawn": "starting a process", "os.spawn": "starting a process",
    "os.fork": "forking", "os.forkpty": "forking", "pty.spawn": "starting a process",
    "os.kill": "signalling a process", "os.killpg": "signalling a process", "signal.pthread_kill": "signalling a process",
    "_thread.start_new_thread": "starting a thread",
    "socket.connect": "network access", "socket.bind": "network access", "socket.getaddrinfo": "network access",
    "socket.sendto": "network access", "sqlite3.connect": "opening a database", "sqlite3.connect/handle": "opening a database",
    "sys.settrace": "installing a tracer", "sys.setprofile": "installing a profiler",
    "sys.addaudithook": "installing an audit hook", "os.chroot": "changing root",
    "webbrowser.open": "opening a browser",
}
#: Audit events whose first argument is a path that is only read (or listed).
PATH_READ_EVENTS = {"os.listdir", "os.scandir", "glob.glob", "os.chdir", "os.startfile"}
#: Audit events that change the file system at the path(s) in their arguments.
PATH_WRITE_EVENTS = {
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr",
    "shutil.rmtree", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.chown", "shutil.make_archive", "shutil.unpack_archive",
}
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
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@dataclass
class SandboxPolicy:
    """What one graded notebook may do."""

    scratch_dir: str
    protected_paths: list[str] = field(default_factory=list)
    forbidden_imports: list[str] = field(default_factory=list)
    memory_limit_mb: int = 2048
    file_size_limit_mb: int = 64
    output_limit_bytes: int = 200_000


class Template:
    """A pre-warmed interpreter state that every submission starts from (by ``fork``)."""

    def __init__(self, preload_modules=()):
        os.environ["MPLBACKEND"] = "Agg"  # (a worker process of the grader: no screen)
        for name in preload_modules:
            try:
                __import__(name)
            except Exception:  # a missing optional module is not an error of the grader
                pass
        if "matplotlib.pyplot" in sys.modules:  # settle its lazily chosen backend and font cache now
            pyplot = sys.modules["matplotlib.pyplot"]
            pyplot.figure()
            pyplot.close("all")
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.enabled = False
        config.HistoryManager.hist_file = ":memory:"
        config.InteractiveShell.colors = "nocolor"
        config.InteractiveShell.autocall = 0
        config.InteractiveShell.xmode = "Context"
        self.shell = InteractiveShell.instance(config=config)
        self.recorder = OutputRecorder(self.shell)
        self.guard = IntegrityGuard(self.shell)
        self._readable: dict[tuple, list[str]] = {}

    def readable_roots(self, protected: list[str]) -> list[str]:
        """The folders a grading process may read (computed once per worker and protected set)."""
        from . import landlock

        key = tuple(protected)
        if key not in self._readable:
            self._readable[key] = landlock.readable_roots(protected)
        return self._readable[key]


class OutputRecorder:
    """Turns what a cell prints and displays into nbformat outputs, within a byte budget."""

    def __init__(self, shell):
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher

        recorder = self

        class RecordingDisplayHook(DisplayHook):
            def write_output_prompt(self):
                pass

            def write_format_data(self, format_dict, md_dict=None):
                recorder.add({"output_type": "execute_result", "data": format_dict,
                              "metadata": md_dict or {}, "execution_count": self.shell.execution_count})

            def finish_displayhook(self):
                self._is_active = False

        class RecordingDisplayPublisher(DisplayPublisher):
            def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
                recorder.add({"output_type": "display_data", "data": data, "metadata": metadata or {}})

            def clear_output(self, wait=False):
                recorder.outputs.clear()

        class RecordingStream(io.TextIOBase):
            def __init__(self, name):
                self.name = name

            def write(self, text):
                if not isinstance(text, str):
                    raise TypeError(f"write() argument must be str, not {type(text).__name__}")
                recorder.add_stream(self.name, text)
                return len(text)

            def writable(self):
                return True

            def isatty(self):
                return False

        self.shell = shell
        self.displayhook = RecordingDisplayHook(shell=shell)
        self.display_pub = RecordingDisplayPublisher(shell=shell)
        self.stdout = RecordingStream("stdout")
        self.stderr = RecordingStream("stderr")
        self.outputs: list[dict] = []
        self.budget = 0
        self.truncated = False

        def show_traceback(etype, evalue, stb):
            # always kept (a failure must show), but never larger than a few screens
            recorder.add({"output_type": "error", "ename": _clip(getattr(etype, "__name__", str(etype))),
                          "evalue": _clip(str(evalue)), "traceback": [_clip(line) for line in list(stb)[-60:]]},
                         force=True)

        self.show_traceback = show_traceback

    def install(self):
        """(Re)connect the shell and ``sys`` to this recorder."""
        shell = self.shell
        shell.displayhook = self.displayhook
        shell.display_trap.hook = self.displayhook
        shell.display_pub = self.display_pub
        shell._showtraceback = self.show_traceback
        sys.displayhook = self.displayhook
        sys.stdout, sys.stderr = self.stdout, self.stderr

    def begin(self):
        self.outputs = []

    def add(self, output, force=False):
        size = len(json.dumps(output, default=str))
        if not force and size > self.budget:
            self.truncated = True
            return
        self.budget = max(0, self.budget - size)
        self.outputs.append(output)

    def add_stream(self, name, text):
        if self.budget <= 0:
            self.truncated = True
            return
        if len(text) > self.budget:
            text, self.truncated = text[: self.budget], True
        self.budget -= len(text)
        if self.outputs and self.outputs[-1].get("output_type") == "stream" and self.outputs[-1]["name"] == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})


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


def _is_immutable_type(cls) -> bool:
    """True for types Python code cannot change (static types, or flagged immutable)."""
    flags = getattr(cls, "__flags__", 0)
    return not flags & (1 << 9) or bool(flags & (1 << 8))


class AuditHook:
    """Denies what student code may not do, and remembers each denial."""

    def __init__(self, policy: SandboxPolicy, trusted_filenames: set[str]):
        self.protected = [os.path.realpath(p) for p in policy.protected_paths]
        self.scratch = os.path.realpath(policy.scratch_dir)
        self.forbidden = {name.split(".")[0] for name in policy.forbidden_imports}
        self.forbidden_dirs = []
        self.trusted_filenames = trusted_filenames
        self.denials: list[str] = []
        self.active = False
        self._busy = False
        # The grader's own frames (whatever started this process, down to run_submission) are
        # not student code, even where their file name looks like one ("<string>" under -c).
        self.grader_frames = set()

    def forbidden_package_dirs(self):
        """The folders of forbidden packages (so they cannot be loaded by path either)."""
        import importlib.util

        for name in self.forbidden:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is not None:
                for location in (spec.submodule_search_locations or [os.path.dirname(spec.origin or "")]):
                    if location:
                        self.forbidden_dirs.append(os.path.realpath(location))

    def __call__(self, event, args):
        if not self.active or self._busy:
            return
        reason = DENIED_EVENTS.get(event)
        if reason is None and event.startswith("ctypes."):
            reason = "raw memory access (ctypes)"
        if reason is None:
            if event == "open":
                reason = self._check_open(args)
            elif event == "import":
                reason = self._check_import(args[0])
            elif event in PATH_READ_EVENTS or event in PATH_WRITE_EVENTS:
                reason = self._check_paths(event, args)
        if reason is not None:
            message = f"{reason} ({event}{_describe(args)})"
            self.denials.append(message)
            raise PermissionError(f"not allowed while grading: {message}")

    def _inside(self, path, roots):
        return any(path == root or path.startswith(root + os.sep) for root in roots)

    def _resolve(self, path):
        self._busy = True
        try:
            if isinstance(path, bytes):
                path = os.fsdecode(path)
            return os.path.realpath(os.path.join(os.getcwd(), os.fspath(path)))
        finally:
            self._busy = False

    def _check_open(self, args):
        path, mode, flags = (list(args) + [None, None, None])[:3]
        if path is None or isinstance(path, int):
            return None
        resolved = self._resolve(path)
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
        if self._inside(resolved, self.protected):
            return ("writing to instructor or other students' files" if writing
                    else "reading instructor or other students' files")
        if resolved.startswith("/proc/") and not resolved.startswith(f"/proc/{os.getpid()}/") \
                and resolved.split("/")[2].isdigit():
            return "reading another process"
        if writing and not self._inside(resolved, [self.scratch]) and resolved != os.devnull:
            return "writing outside the submission's scratch folder"
        if self.forbidden_dirs and self._inside(resolved, self.forbidden_dirs) and self._student_on_stack():
            return "loading a module this exercise forbids"
        return None

    def _check_paths(self, event, args):
        for arg in args:
            if isinstance(arg, (str, bytes, os.PathLike)):
                resolved = self._resolve(arg)
                if self._inside(resolved, self.protected):
                    return "touching instructor or other students' files"
                if event in PATH_WRITE_EVENTS and not self._inside(resolved, [self.scratch]):
                    return "changing files outside the submission's scratch folder"
        return None

    def _check_import(self, name):
        if isinstance(name, str) and name.split(".")[0] in self.forbidden and self._student_on_stack():
            return "importing a module this exercise forbids"
        return None

    def _student_on_stack(self) -> bool:
        frame = sys._getframe(2)
        while frame is not None and frame not in self.grader_frames:
            filename = frame.f_code.co_filename
            if filename not in self.trusted_filenames and not filename.startswith("<frozen ") \
                    and (filename.startswith("<") or not os.path.isabs(filename)):
                return True
            frame = frame.f_back
        return False


def _restore_machinery(hook, guard, recorder) -> list:
    """Put back what student code replaced (the audit hook is off meanwhile: this is the grader)."""
    hook.active = False
    try:
        return guard.restore(recorder)
    finally:
        hook.active = True


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


def _clip(text: str, limit: int = 4000) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} characters dropped]"


def _describe(args):
    shown = [a for a in args if isinstance(a, (str, bytes, int))][:2]
    return (": " + ", ".join(repr(a)[:120] for a in shown)) if shown else ""


def apply_limits(policy: SandboxPolicy) -> None:
    """Lower this process's resource limits (they cannot be raised again)."""
    mib = 1024 * 1024
    for limit, value in ((resource.RLIMIT_AS, policy.memory_limit_mb * mib),
                         (resource.RLIMIT_FSIZE, policy.file_size_limit_mb * mib),
                         (resource.RLIMIT_CORE, 0)):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, value))


def run_submission(template: Template, cells: list[dict], policy: SandboxPolicy, channel: int) -> None:
    """Run ``cells`` in this (freshly forked) process and report each one on ``channel``.

    Each cell is ``{"source": str, "trusted": bool}``; trusted cells are the instructor's (tests and
    read-only cells). Messages are JSON lines: ``{"start": i}``, ``{"done": i, ...}``, ``{"end": true}``.
    """
    def send(message):
        data = (json.dumps(message, default=str) + "\n").encode()
        while data:
            written = os.write(channel, data)
            data = data[written:]

    os.chdir(policy.scratch_dir)
    keep = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8")}
    os.environ.clear()
    os.environ.update(keep, HOME=policy.scratch_dir, TMPDIR=policy.scratch_dir, MPLBACKEND="Agg",
                      MPLCONFIGDIR=policy.scratch_dir, NBGRADER_EXECUTION="autograde")
    import tempfile
    tempfile.tempdir = policy.scratch_dir
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    c_output = os.open(os.path.join(policy.scratch_dir, ".c_output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(c_output, 1)
    os.dup2(c_output, 2)
    os.closerange(3, channel)
    os.closerange(channel + 1, 65536)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.path[:] = [p for p in sys.path if p and not p.startswith(tuple(policy.protected_paths))]

    shell, recorder, guard = template.shell, template.recorder, template.guard
    recorder.budget = policy.output_limit_bytes
    trusted_filenames: set[str] = set()
    hook = AuditHook(policy, trusted_filenames)
    frame = sys._getframe()
    while frame is not None:
        hook.grader_frames.add(frame)
        frame = frame.f_back
    hook.forbidden_package_dirs()
    forbidden_modules = [name for name in sys.modules if name.split(".")[0] in hook.forbidden]
    for name in forbidden_modules:
        del sys.modules[name]
        guard.modules.pop(name, None)
    guard.rebaseline(recorder)
    apply_limits(policy)
    from . import landlock

    protected = [os.path.realpath(p) for p in policy.protected_paths]
    isolated = landlock.restrict_process(template.readable_roots(protected), [os.path.realpath(policy.scratch_dir)])
    send({"kernel_isolation": isolated})
    sys.addaudithook(hook)
    hook.active = True
    compiler = shell.compile

    for index, cell in enumerate(cells):
        findings: list[str] = []
        try:
            send({"start": index})
            if cell["trusted"]:
                changed = _restore_machinery(hook, guard, recorder)
                if changed:
                    findings.append("student code changed the test machinery: " + ", ".join(sorted(set(changed))[:12]))
            else:
                recorder.install()
                for name in [n for n in sys.modules if n.split(".")[0] in hook.forbidden]:
                    del sys.modules[name]
            recorder.begin()
            denials_before = len(hook.denials)
            known_files = set(compiler._filename_map)
            if cell["trusted"]:  # the name IPython will compile this cell under, trusted while it runs
                try:
                    from IPython.core.compilerop import code_name

                    trusted_filenames.add(code_name(shell.transform_cell(cell["source"]), shell.execution_count))
                except Exception:
                    pass
            result = shell.run_cell(cell["source"], store_history=True, silent=False)
            if not hook.active or hook._busy:
                findings.append("student code switched off the audit hook (switched back on)")
                hook.active, hook._busy = True, False
            error = result.error_before_exec or result.error_in_exec
            outputs = recorder.outputs
            if cell["trusted"]:
                trusted_filenames.update(set(compiler._filename_map) - known_files)
                guard.remember_instructor_names(shell.user_ns, bound_names(shell, cell["source"]))
            if cell.get("test"):
                # student code the test called may have changed the machinery for the test's later lines
                changed = _restore_machinery(hook, guard, recorder)
                if changed:
                    findings.append("student code changed the test machinery while this test ran; test failed: "
                                    + ", ".join(sorted(set(changed))[:12]))
                    outputs.append({"output_type": "error", "ename": "TamperingDetected",
                                    "evalue": "student code changed the test machinery while this test ran",
                                    "traceback": ["TamperingDetected: student code changed the test machinery "
                                                  "while this test ran"]})
                    error = error or RuntimeError("tampering detected")
            if error is not None and not any(o.get("output_type") == "error" for o in outputs):
                findings.append("the error report of a failing cell was suppressed")
                outputs.append({"output_type": "error", "ename": type(error).__name__, "evalue": _clip(str(error)),
                                "traceback": [_clip(f"{type(error).__name__}: {error}")]})
            findings.extend(f"denied: {d}" for d in hook.denials[denials_before:])
            if isinstance(error, MemoryError):
                findings.append(f"ran out of memory (cap {policy.memory_limit_mb} MiB)")
            if recorder.truncated:
                findings.append("output over the limit was dropped")
                recorder.truncated = False
            send({"done": index, "outputs": outputs, "failed": error is not None,
                  "execution_count": result.execution_count, "findings": findings})
        except KeyboardInterrupt:
            send({"done": index, "outputs": recorder.outputs, "failed": True, "interrupted": True,
                  "execution_count": None, "findings": findings})
    send({"end": True})
    os._exit(0)
