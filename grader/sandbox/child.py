"""The student's process: set up the walls, then answer the supervisor's commands one by one.

Forked by the zygote for one notebook. It scrubs what it inherited, lowers its resource limits,
maps its scratch folder at ``/tmp``, applies Landlock (the kernel's wall: only the Python
installation is readable, only the scratch folder writable, no network, no signals or ptrace
outside itself), installs the audit hook (which explains refusals), and then runs what the
supervisor sends (``protocol.py``). It never sees a test it is not running, nor any expected value.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys

from . import landlock, mounts
from .audit import AuditHook
from .guard import bound_names, worth_reporting
from .protocol import send
from .recorder import clip
from .values import encode


def apply_limits(memory_limit_mb: int, file_size_limit_mb: int) -> None:
    """Lower this process's resource limits (they cannot be raised again)."""
    mib = 1024 * 1024
    for limit, value in ((resource.RLIMIT_AS, memory_limit_mb * mib),
                         (resource.RLIMIT_FSIZE, file_size_limit_mb * mib),
                         (resource.RLIMIT_CORE, 0)):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, value))


def run_child(template, policy, commands: int, replies: int) -> None:
    """The whole life of the student's process (``policy``: ``SandboxPolicy.to_message()``)."""
    scratch = policy["scratch_dir"]
    os.setsid()  # its own process group: the supervisor ends it and anything it started together
    os.chdir(scratch)
    keep = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8")}
    os.environ.clear()
    os.environ.update(keep, HOME=scratch, TMPDIR=scratch, MPLBACKEND="Agg", MPLCONFIGDIR=scratch,
                      NBGRADER_EXECUTION="autograde")
    import tempfile
    tempfile.tempdir = scratch
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    c_output = os.open(os.path.join(scratch, ".c_output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(c_output, 1)
    os.dup2(c_output, 2)
    low, high = sorted((commands, replies))
    os.closerange(3, low)
    os.closerange(low + 1, high)
    os.closerange(high + 1, 65536)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    protected = [os.path.realpath(p) for p in policy["protected_paths"]]
    sys.path[:] = [p for p in sys.path if p and not p.startswith(tuple(protected))]

    shell, recorder, guard = template.shell, template.recorder, template.guard
    recorder.budget = policy["output_limit_bytes"]
    tmp_mapped = mounts.map_tmp(scratch)
    writable = [scratch] + (["/tmp"] if tmp_mapped else [])
    hook = AuditHook(_Policy(policy), writable)
    hook.forbidden_package_dirs()
    guard.rebaseline(recorder)
    apply_limits(policy["memory_limit_mb"], policy["file_size_limit_mb"])
    readable = template.readable_roots(protected + hook.forbidden_dirs)
    isolated = landlock.restrict_process(readable, [os.path.realpath(p) for p in writable])
    sys.addaudithook(hook)
    hook.active = True
    send(replies, {"ready": True, "landlock": isolated})

    incoming = os.fdopen(commands, "rb")
    while True:
        line = incoming.readline()
        if not line:
            break
        command = json.loads(line)
        if "run" in command:
            send(replies, _run_cell(shell, recorder, guard, hook, command, policy))
        elif "probe" in command:
            send(replies, _probe(shell, recorder, command))
        else:
            break
    os._exit(0)


class _Policy:
    """The policy fields the audit hook reads."""

    def __init__(self, message):
        self.protected_paths = message["protected_paths"]
        self.forbidden_imports = message["forbidden_imports"]


def _run_cell(shell, recorder, guard, hook, command, policy) -> dict:
    """Run one cell; a plain nbgrader test cell gets the test machinery put back before and after."""
    index, source, is_test = command["run"], command["source"], bool(command.get("test"))
    notes: list[str] = []
    try:
        if is_test:
            changed = worth_reporting(_restore(hook, guard, recorder))
            if changed:
                notes.append("student code changed what this test relies on (put back before it ran): "
                             + ", ".join(sorted(set(changed))[:12]))
        else:
            recorder.install()
        recorder.begin()
        denials_before = len(hook.denials)
        skipped_before = len(shell.skipped_shell_lines)
        result = shell.run_cell(source, store_history=not command.get("instructor"), silent=False)
        if not hook.active or hook._busy:
            notes.append("student code switched off the audit hook (switched back on)")
            hook.active, hook._busy = True, False
        error = result.error_before_exec or result.error_in_exec
        outputs = recorder.outputs
        if command.get("instructor"):
            guard.remember_instructor_names(shell.user_ns, bound_names(shell, source))
        if is_test:
            changed = _restore(hook, guard, recorder)
            if changed:
                notes.append("student code changed what this test relies on while it ran; test failed: "
                             + ", ".join(sorted(set(changed))[:12]))
                outputs.append(_error_output("TamperingDetected",
                                             "student code changed the test machinery while this test ran"))
                error = error or RuntimeError("tampering detected")
        if error is not None and not any(o.get("output_type") == "error" for o in outputs):
            notes.append("the error report of a failing cell was suppressed")
            outputs.append(_error_output(type(error).__name__, clip(str(error))))
        notes.extend(f"denied: {d}" for d in hook.denials[denials_before:])
        notes.extend(f"shell command skipped (not run while grading): !{line}"
                     for line in shell.skipped_shell_lines[skipped_before:])
        if isinstance(error, MemoryError):
            notes.append(f"ran out of memory (cap {policy['memory_limit_mb']} MiB)")
        if recorder.truncated:
            notes.append("output over the limit was dropped")
            recorder.truncated = False
        return {"ran": index, "outputs": outputs, "error": error is not None,
                "execution_count": result.execution_count, "notes": notes}
    except KeyboardInterrupt:
        return {"ran": index, "outputs": recorder.outputs, "error": True, "execution_count": None, "notes": notes}


def _probe(shell, recorder, command) -> dict:
    """Evaluate a trusted test's request in the notebook's namespace; reply with the value as data."""
    from ..checks import run_code

    index = command["probe"]
    recorder.install()
    recorder.begin()
    try:
        value = run_code(command["code"], shell.user_ns)
        return {"probed": index, "value": encode(value)}
    except KeyboardInterrupt:
        return {"probed": index, "error": _error_output("KeyboardInterrupt", "interrupted")}
    except BaseException as error:  # the student's code raised: that is the answer
        import traceback

        lines = traceback.format_exception(type(error), error, error.__traceback__)
        return {"probed": index, "error": _error_output(type(error).__name__, clip(str(error)),
                                                        [clip(line) for line in lines[-30:]])}


def _restore(hook, guard, recorder) -> list:
    """Put back what student code replaced (the audit hook is off meanwhile: this is the grader)."""
    hook.active = False
    try:
        return guard.restore(recorder)
    finally:
        hook.active = True


def _error_output(ename: str, evalue: str, traceback=None) -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue,
            "traceback": traceback or [f"{ename}: {evalue}"]}
