"""The system calls a student's process is refused (``grader/sandbox/seccomp.py``) and the keyring it
holds (``grader/sandbox/keyrings.py``), each checked in a process of its own with the filter on.

The filter refuses what Docker's default profile refuses a container without capabilities, and the
kit's own refusals; docs/threat-model.md lists every call beside Docker's profile.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import re
import socket
import threading
from pathlib import Path

import pytest

from grader.sandbox import keyrings, seccomp

pytestmark = pytest.mark.skipif(not seccomp.supported(), reason="the kit's seccomp filter is for x86-64 and arm64")

ROOT = Path(__file__).resolve().parents[2]
#: The kernel's own tables of system call numbers, as the C library's headers give them (linux-libc-dev)
HEADERS = {"x86_64": (Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), Path("/usr/include/asm/unistd_64.h")),
           "aarch64": (Path("/usr/include/aarch64-linux-gnu/asm/unistd.h"), Path("/usr/include/asm-generic/unistd.h"))}
_CLONE_THREAD_FLAGS = 0x10000 | 0x800 | 0x100  # CLONE_THREAD | CLONE_SIGHAND | CLONE_VM


def _in_a_child(check) -> dict:
    """``check()`` run in a forked process with the filter on; what it returned (a dict)."""
    import json

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            if not seccomp.install():
                raise RuntimeError("the filter could not be installed")
            result = check()
        except BaseException as error:  # noqa: BLE001 - reported to the test
            result = {"error": repr(error)}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as reading:
        data = reading.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _call(number: int, *args) -> tuple[int, str]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    ctypes.set_errno(0)
    result = libc.syscall(number, *[ctypes.c_long(a) for a in args])
    return result, errno.errorcode.get(ctypes.get_errno(), "") if result == -1 else ""


def test_every_call_docker_refuses_and_the_kits_own_are_refused_with_eperm():
    calls = seccomp.numbers(platform.machine())

    def check():
        # arguments that would fail anyway (null pointers, bad descriptors): only the errno says who refused
        return {name: _call(calls[name], -1, 0, 0, 0, 0, 0)[1] for name in seccomp.refused_names() if name in calls
                and name not in ("fork", "vfork")} | {name: _call(calls[name])[1] for name in ("fork", "vfork")
                                                      if name in calls}

    answered = _in_a_child(check)
    assert answered and set(answered.values()) == {"EPERM"}, {k: v for k, v in answered.items() if v != "EPERM"}
    for name in ("add_key", "keyctl", "request_key", "unshare", "setns", "io_uring_setup", "bpf", "userfaultfd"):
        assert name in answered


def test_calls_newer_than_the_table_and_clone3_answer_enosys_as_an_older_kernel_would():
    calls = seccomp.numbers(platform.machine())
    answered = _in_a_child(lambda: {"newer": _call(seccomp.NEWEST + 1)[1], "clone3": _call(calls["clone3"], 0, 0)[1]})
    assert answered == {"newer": "ENOSYS", "clone3": "ENOSYS"}


def test_arguments_decide_for_socket_personality_and_clone_as_in_dockers_profile():
    calls = seccomp.numbers(platform.machine())

    def check():
        done = {}
        for family in (socket.AF_UNIX, socket.AF_INET, *seccomp.REFUSED_SOCKETS):
            result, why = _call(calls["socket"], family, socket.SOCK_DGRAM, 0)
            done[f"socket {family}"] = why or "allowed"
            if result >= 0:
                os.close(result)
        for persona in (*seccomp.ALLOWED_PERSONALITIES, 0x0040000):  # ADDR_NO_RANDOMIZE: refused
            done[f"personality {persona:#x}"] = _call(calls["personality"], persona)[1] or "allowed"
        ran = []
        thread = threading.Thread(target=ran.append, args=(1,))
        thread.start()
        thread.join()
        done["a thread"] = "allowed" if ran else "refused"
        done["a thread in a new namespace"] = _call(calls["clone"], _CLONE_THREAD_FLAGS | 0x40000000, 0, 0, 0, 0)[1]
        try:
            os.fork()
            done["fork"] = "allowed"
        except OSError as error:
            done["fork"] = errno.errorcode[error.errno]
        return done

    answered = _in_a_child(check)
    assert answered == {f"socket {socket.AF_UNIX}": "allowed", f"socket {socket.AF_INET}": "allowed",
                        "socket 38": "EPERM", "socket 40": "EPERM",
                        **{f"personality {p:#x}": "allowed" for p in seccomp.ALLOWED_PERSONALITIES},
                        "personality 0x40000": "EPERM", "a thread": "allowed", "a thread in a new namespace": "EPERM",
                        "fork": "EPERM"}, answered


def test_the_tables_numbers_are_the_kernels():
    """Each number of ``seccomp.NUMBERS`` on this machine is the one the kernel's headers give (a wrong
    number would refuse another call and let this one through); calls newer than the headers are
    numbered alike on every architecture, from 424 on."""
    machine = platform.machine()
    header = next((path for path in HEADERS[machine] if path.is_file()), None)
    assert header is not None, f"none of {HEADERS[machine]}: install linux-libc-dev"
    known = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", header.read_text())}
    ours = seccomp.numbers(machine)
    differ = {name: (number, known[name]) for name, number in ours.items() if name in known and known[name] != number}
    assert not differ, differ
    newer = {name: number for name, number in ours.items() if name not in known}
    assert all(number >= 424 for number in newer.values()), newer
    assert max(ours.values()) <= seccomp.NEWEST


def test_the_threat_model_lists_every_refused_call_and_says_why():
    doc = (ROOT / "docs" / "threat-model.md").read_text()
    section = doc.split("### System calls refused", 1)[1].split("\n## ", 1)[0]
    missing = [name for name in seccomp.refused_names() if f"`{name}`" not in section]
    assert not missing, missing
    assert all(why.split(",")[0].split("(")[0].strip() in " ".join(section.split())
               for why, _ in seccomp.REFUSED.values()), "each group's reason"


def test_the_zygote_leaves_the_session_keyring_it_inherited():
    """A process that joined a session keyring with a bait key, then left it as the zygote does:
    the bait is no longer found (searched before the filter is on; with it, every keyring call is
    refused)."""
    keyctl, add_key = (seccomp.numbers(platform.machine())[name] for name in ("keyctl", "add_key"))
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        found = []
        try:
            assert _call(keyctl, 1, 0)[0] >= 0  # KEYCTL_JOIN_SESSION_KEYRING: the instructor's session
            bait = ctypes.CDLL(None, use_errno=True).syscall(add_key, b"user", b"kitgrade-bait", b"BAIT", 4, -3)
            description = ctypes.c_char_p(b"kitgrade-bait")
            libc = ctypes.CDLL(None, use_errno=True)
            found.append(libc.syscall(keyctl, 10, -3, b"user", description, 0) == bait)
            found.append(keyrings.leave_the_session_keyring())
            found.append(libc.syscall(keyctl, 10, -3, b"user", description, 0))
        finally:
            os.write(write, repr(found).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as reading:
        found = reading.read()
    os.waitpid(pid, 0)
    assert found == "[True, True, -1]", found
