"""The student's process: set up the walls, then answer the supervisor's commands one by one.

Forked by the zygote for one notebook, inside bubblewrap (``bubblewrap.py``). It makes its own
``/proc``, ``/dev`` and ``/tmp`` (a quota of size and files), drops every capability, scrubs what it
inherited (descriptors, environment, signal dispositions and mask, file mode mask), lowers its
resource limits (processes included), applies Landlock (the kernel's second wall: only the
allow-list is readable, nothing may be executed, only ``/tmp`` and ``/dev/shm`` are writable, no
network, no signals or ptrace outside itself), installs seccomp and the audit hook (which explains refusals),
and then runs what the supervisor sends (``protocol.py``). It never sees a test it is not running, nor any expected value.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import signal
import sys
from typing import NamedTuple

from . import allow_list, landlock, mounts, seccomp
from .namespaces import EXTRA_TASKS
from . import scratch as scratch_files
from .audit import AuditHook
from .guard import bound_names, worth_reporting
from .protocol import SETUP_FAULT, send
from .recorder import clip
from ..plain_values import encode


class Channels(NamedTuple):
    """The file descriptors the zygote hands the student's process."""

    commands: int  # the supervisor's commands, read
    replies: int  # its replies, written
    scratch: int  # the scratch folder, open: the assignment's data files are copied from it
    fault: int = -1  # what went wrong while it set itself up (closed before student code runs)


class Session(NamedTuple):
    """What runs a notebook's cells in the student's process, set up once by ``_set_up``."""

    shell: object  # the IPython shell
    recorder: object  # the outputs, in nbformat
    guard: object  # the integrity guard of plain nbgrader test cells
    hook: object  # the audit hook


def apply_limits(memory_limit_mb: int, file_size_limit_mb: int, processes: int | None = None) -> None:
    """Lower this process's resource limits (they cannot be raised again)."""
    mib = 1024 * 1024
    limits = [(resource.RLIMIT_AS, memory_limit_mb * mib), (resource.RLIMIT_FSIZE, file_size_limit_mb * mib),
              (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, OPEN_FILES)]
    if processes is not None:  # counted per user of the sandbox's own user namespace: no fork bomb
        limits.append((resource.RLIMIT_NPROC, processes))
    for limit, value in limits:
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, value))


#: Open files, pipes and sockets: each socket or pipe holds kernel buffers outside ``RLIMIT_AS`` (a
#: root shell's 20,000 would hold gigabytes); a notebook needs a few dozen.
OPEN_FILES = 1024
#: The student's user name (``USER``, ``LOGNAME``), and the file mode mask every notebook starts with.
USER_NAME, UMASK = "student", 0o022
SHARED_MEMORY = "/dev/shm"
#: Signals a fresh Python process ignores (the rest are at their defaults, SIGINT at Python's handler).
IGNORED_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ)


def _fresh_process_state() -> None:
    """What a process inherits that is not a file or a namespace, as a fresh Python process has it,
    not as the instructor's shell left it: signal dispositions (``nohup`` leaves SIGHUP ignored, and
    an ignored signal stays ignored across exec), the signal mask, and the file mode mask."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(number, signal.SIG_IGN if number in IGNORED_SIGNALS else signal.SIG_DFL)
        except (OSError, ValueError):  # a real-time signal the C library keeps for itself
            pass
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.umask(UMASK)


def _tasks_in_sandbox() -> int:
    return sum(len(os.listdir(f"/proc/{pid}/task")) for pid in os.listdir("/proc") if pid.isdigit()
               and os.path.isdir(f"/proc/{pid}/task"))


def run_child(template, policy, channels: Channels, sandboxed: bool = False) -> None:
    """The whole life of the student's process (``policy``: ``SandboxPolicy.to_message()``).

    ``sandboxed``: inside bubblewrap and PID 1 of its own PID namespace; it mounts its own ``/proc``
    and a ``/tmp`` with a size and file-count quota, copies the assignment's data files there from
    ``channels.scratch`` (the scratch folder, opened by the supervisor) and drops every capability.
    Otherwise (``kitgrade check``, ``--unsafe-no-sandbox``) it works in the scratch folder itself.
    A fault while it sets itself up is written to ``channels.fault`` (read by the zygote; closed before
    any student code runs, so nothing a student writes is ever taken for one) and ends it."""
    try:
        session, isolated = _set_up(template, policy, channels, sandboxed)
    except BaseException:
        import traceback

        try:
            os.write(channels.fault, traceback.format_exc()[-3000:].encode())
        except OSError:
            pass
        os._exit(SETUP_FAULT)
    replies = channels.replies
    send(replies, {"ready": True, "landlock": isolated})

    incoming = os.fdopen(channels.commands, "rb")
    while True:
        line = incoming.readline()
        if not line:
            break
        command = json.loads(line)
        if "run" in command:
            send(replies, _run_cell(session, command, policy))
        elif "probe" in command:
            send(replies, _probe(session, command))
        else:
            break
    os._exit(0)


def _set_up(template, policy, channels: Channels, sandboxed: bool) -> tuple[Session, bool]:
    """Every wall, in order; the last step before student code is closing ``channels.fault``. Returns
    the session and whether Landlock is on."""
    scratch_fd, fault_fd = channels.scratch, channels.fault
    os.setsid()  # its own process group: the supervisor ends it and anything it started together
    tasks = None
    if sandboxed:
        tasks = _tasks_in_sandbox() + EXTRA_TASKS
        # mounted at TMPDIR (bubblewrap.SANDBOX_TMP, set by bwrap), seen at /tmp either way
        scratch = mounts.private_tmp_and_proc(policy["scratch_size_limit_mb"], policy["scratch_files_limit"],
                                              os.environ.get("TMPDIR", "/tmp"))
        try:
            scratch_files.copy_from(scratch_fd, scratch)
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise mounts.SetupFailed(error.errno, f"the assignment's data files do not fit in the notebook's {scratch} "
                                     f"(its quota: {policy['scratch_size_limit_mb']} MiB, "
                                     f"{policy['scratch_files_limit']} files)") from None
        os.close(scratch_fd)
        mounts.private_dev()
        mounts.drop_capabilities()
        tmp_mapped = True
        os.chdir(scratch)
    else:
        os.close(scratch_fd)
        scratch = policy["scratch_dir"]
        os.chdir(scratch)  # before /tmp shows the scratch folder (its path under /tmp is then gone)
        tmp_mapped = mounts.map_tmp(scratch, allow_list.allow_list_entries_of_tmp())
        if tmp_mapped:
            scratch = "/tmp"
    keep = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8")}
    os.environ.clear()
    # a user name for getpass.getuser() (the sandbox has no /etc/passwd), the same wherever it is graded
    os.environ.update(keep, HOME=scratch, TMPDIR=scratch, MPLBACKEND="Agg", MPLCONFIGDIR=scratch,
                      NBGRADER_EXECUTION="autograde", USER=USER_NAME, LOGNAME=USER_NAME)
    _fresh_process_state()
    import tempfile
    tempfile.tempdir = scratch
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    c_output = os.open(os.path.join(scratch, ".c_output"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(c_output, 1)
    os.dup2(c_output, 2)
    # what it holds from here on: 0 (/dev/null), 1 and 2 (its own .c_output), the two pipe ends
    # (and, until its walls are up, the fault pipe)
    kept = sorted(fd for fd in (channels.commands, channels.replies, fault_fd) if fd >= 0)
    low = 3
    for fd in kept:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    protected = [os.path.realpath(p) for p in policy["protected_paths"]]
    # a notebook imports the modules it wrote beside itself (%%writefile helper.py), as in Jupyter
    sys.path[:] = [scratch] + [p for p in sys.path if p and not p.startswith(tuple(protected))]

    shell, recorder, guard = template.shell, template.recorder, template.guard
    recorder.budget = policy["output_limit_bytes"]
    # and /dev/shm: a thread pool's lock is a POSIX semaphore there (the notebook's own /dev, in the sandbox)
    writable = sorted({scratch, "/tmp", SHARED_MEMORY} if tmp_mapped else {scratch, SHARED_MEMORY})
    hook = AuditHook(_Policy(policy), writable)
    hook.forbidden_package_dirs()
    guard.rebaseline(recorder)
    apply_limits(policy["memory_limit_mb"], policy["file_size_limit_mb"], tasks)
    readable = template.readable_roots(protected + hook.forbidden_dirs)
    isolated = landlock.restrict_process(readable, [os.path.realpath(p) for p in writable])
    if not seccomp.install() and sandboxed and seccomp.supported():
        raise mounts.SetupFailed(ctypes.get_errno(), "cannot install the seccomp filter")
    if fault_fd >= 0:
        os.close(fault_fd)
    sys.addaudithook(hook)
    hook.active = True
    return Session(shell, recorder, guard, hook), isolated


class _Policy:
    """The policy fields the audit hook reads."""

    def __init__(self, message):
        self.protected_paths = message["protected_paths"]
        self.forbidden_imports = message["forbidden_imports"]


def _run_cell(session: Session, command, policy) -> dict:
    """Run one cell; a plain nbgrader test cell gets the test machinery put back before and after."""
    shell, recorder, guard, hook = session
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
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            notes.append(f"the notebook's scratch space is full (its quota: {policy['scratch_size_limit_mb']} MiB, "
                         f"{policy['scratch_files_limit']} files, {policy['file_size_limit_mb']} MiB a file); "
                         "this cell failed")
        if recorder.truncated:
            notes.append("output over the limit was dropped")
            recorder.truncated = False
        return {"ran": index, "outputs": outputs, "error": error is not None,
                "execution_count": result.execution_count, "notes": notes}
    except KeyboardInterrupt:
        return {"ran": index, "outputs": recorder.outputs, "error": True, "execution_count": None, "notes": notes}


def _probe(session: Session, command) -> dict:
    """Evaluate a trusted test's request in the notebook's namespace; reply with the value as data."""
    shell, recorder = session.shell, session.recorder
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
