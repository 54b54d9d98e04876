"""The kernel refuses the student's process every new process and program, memory no limit counts,
the keyrings, and every system call Docker's default profile refuses a container (seccomp).

A filter on system calls, installed by the student's process on itself just before student code
runs (it cannot be removed, and is inherited). It refuses, with ``EPERM`` as Docker does:

* what Docker's default profile (moby/profiles ``seccomp/default.json``) refuses a container that
  holds no capability, group by group in ``REFUSED`` with the reason for each (``io_uring`` among
  them, as Docker has since 25.0; sockets of the kernel's crypto API and of virtual machines'
  hosts, ``AF_ALG`` and ``AF_VSOCK``; ``personality`` but for the values Docker allows; ``clone``
  with a namespace flag);
* and more than Docker, as a notebook needs neither: every new process and program (``fork``,
  ``vfork``, ``clone`` without ``CLONE_THREAD``, ``execve``, ``execveat``; threads still start:
  NumPy's BLAS uses them) and memory that no limit counts (``UNCOUNTED_MEMORY``).

``clone3`` answers ``ENOSYS`` (so the C library starts threads with ``clone``, as Docker has it),
and so does every call newer than the table (``NEWEST``): a call the kit has not judged is refused
as an older kernel would refuse it, and the C library falls back as it does there. Calls made
through another architecture's entry (32-bit ``int 0x80``, x32) all fail. This is what stops a
fork bomb, ``/bin/sh``, a keyring read and a new namespace even where the audit hook is bypassed
(``_posixsubprocess.fork_exec`` has no audit event) and where ``RLIMIT_NPROC`` does not count
(root's processes). docs/threat-model.md lists every call beside Docker's profile.

x86-64 and arm64; elsewhere ``install`` returns False and the other walls stand alone.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_ABS_W, _JEQ, _JGT, _JGE, _JSET, _RET = 0x20, 0x15, 0x25, 0x35, 0x45, 0x06
_CLONE_THREAD = 0x00010000
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: Docker's mask for ``clone``
_CLONE_NAMESPACES = 0x7E020000
#: The sockets Docker refuses: the kernel's crypto API (AF_ALG) and a virtual machine's host (AF_VSOCK).
REFUSED_SOCKETS = (38, 40)
#: The only ``personality`` values Docker allows: Linux, with UNAME26 and/or the query 0xffffffff.
ALLOWED_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

#: Refused calls, by reason: ``{group: (why, names)}``. The first groups are Docker's refusals; the
#: last two are the kit's own.
REFUSED = {
    "keyrings": ("the kernel's keyrings: the instructor's session keys, and a message left for the next "
                 "submission in a user keyring", ("add_key", "keyctl", "request_key")),
    "namespaces and mounts": ("a namespace or a mount of its own (Landlock refuses the mounts too)",
                              ("unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
                               "fsmount", "fspick", "open_tree", "open_tree_attr", "move_mount", "mount_setattr",
                               "listns")),
    "the kernel's attack surface": ("interfaces that have let containers out (io_uring's rings, eBPF, perf events, "
                                    "userfaultfd) or look into other processes' files and memory",
                                    ("bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
                                     "io_uring_register", "kcmp", "pidfd_getfd", "process_madvise", "lookup_dcookie",
                                     "fanotify_init", "open_by_handle_at", "lsm_get_self_attr", "lsm_set_self_attr",
                                     "lsm_list_modules", "file_getattr", "file_setattr")),
    "the machine's settings": ("the machine's own state, which needs a capability the process does not hold",
                               ("reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
                                "delete_module", "swapon", "swapoff", "acct", "settimeofday", "clock_settime",
                                "sethostname", "setdomainname", "syslog", "vhangup", "iopl", "ioperm", "quotactl",
                                "quotactl_fd")),
    "memory placement": ("NUMA placement of memory (Docker allows it with CAP_SYS_NICE only)",
                         ("mbind", "get_mempolicy", "set_mempolicy", "set_mempolicy_home_node", "migrate_pages",
                          "move_pages")),
    "obsolete": ("calls of old kernels, or never implemented",
                 ("_sysctl", "sysfs", "ustat", "uselib", "create_module", "get_kernel_syms", "query_module",
                  "nfsservctl", "afs_syscall", "tuxcall", "security", "vserver", "getpmsg", "putpmsg")),
    "new processes and programs": ("a fork bomb, a shell: a notebook runs in one process (the kit's own; threads "
                                   "still start: clone with CLONE_THREAD)", ("fork", "vfork", "execve", "execveat")),
    "memory no limit counts": ("a memfd is written without being mapped (outside RLIMIT_AS; 20 of them held 1.2 GB "
                               "under a 1 GiB cap), SysV shared memory and message queues outlive the process (the "
                               "kit's own; files go to the quota'd /tmp)",
                               ("shmget", "msgget", "memfd_create", "memfd_secret")),
}
UNCOUNTED_MEMORY = REFUSED["memory no limit counts"][1]

#: Every call the filter names, with its number on x86-64 and on arm64 (None: the call does not exist
#: there). Numbers from 424 on are the same on every architecture.
NUMBERS = {
    "add_key": (248, 217), "keyctl": (250, 219), "request_key": (249, 218),
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41),
    "chroot": (161, 51), "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "open_tree": (428, 428), "open_tree_attr": (467, 467), "move_mount": (429, 429), "mount_setattr": (442, 442),
    "listns": (470, 470),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282), "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426), "io_uring_register": (427, 427), "kcmp": (312, 272), "pidfd_getfd": (438, 438),
    "process_madvise": (440, 440), "lookup_dcookie": (212, 18), "fanotify_init": (300, 262),
    "open_by_handle_at": (304, 265), "lsm_get_self_attr": (459, 459), "lsm_set_self_attr": (460, 460),
    "lsm_list_modules": (461, 461), "file_getattr": (468, 468), "file_setattr": (469, 469),
    "reboot": (169, 142), "kexec_load": (246, 104), "kexec_file_load": (320, 294), "init_module": (175, 105),
    "finit_module": (313, 273), "delete_module": (176, 106), "swapon": (167, 224), "swapoff": (168, 225),
    "acct": (163, 89), "settimeofday": (164, 170), "clock_settime": (227, 112), "sethostname": (170, 161),
    "setdomainname": (171, 162), "syslog": (103, 116), "vhangup": (153, 58), "iopl": (172, None),
    "ioperm": (173, None), "quotactl": (179, 60), "quotactl_fd": (443, 443),
    "mbind": (237, 235), "get_mempolicy": (239, 236), "set_mempolicy": (238, 237), "set_mempolicy_home_node": (450, 450),
    "migrate_pages": (256, 238), "move_pages": (279, 239),
    "_sysctl": (156, None), "sysfs": (139, None), "ustat": (136, None), "uselib": (134, None),
    "create_module": (174, None), "get_kernel_syms": (177, None), "query_module": (178, None), "nfsservctl": (180, 42),
    "afs_syscall": (183, None), "tuxcall": (184, None), "security": (185, None), "vserver": (236, None),
    "getpmsg": (181, None), "putpmsg": (182, None),
    "fork": (57, None), "vfork": (58, None), "execve": (59, 221), "execveat": (322, 281),
    "shmget": (29, 194), "msgget": (68, 186), "memfd_create": (319, 279), "memfd_secret": (447, 447),
    # allowed with a condition on an argument, or answered ENOSYS
    "clone": (56, 220), "clone3": (435, 435), "socket": (41, 198), "personality": (135, 92),
}
#: The newest call the table knows (``listns``, Linux 6.18): any newer one answers ENOSYS.
NEWEST = 470
#: machine -> (its audit architecture, the column of ``NUMBERS``)
_MACHINES = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}


def numbers(machine: str) -> dict[str, int]:
    """``{call: number}`` on ``machine`` (``platform.machine()``), for the calls that exist there."""
    column = _MACHINES[machine][1]
    return {name: pair[column] for name, pair in NUMBERS.items() if pair[column] is not None}


def refused_names() -> list[str]:
    """Every call refused outright, in the order of ``REFUSED``."""
    return [name for _, names in REFUSED.values() for name in names]


def _filter(arch: int, calls: dict[str, int], x86: bool) -> list[tuple[int, int, int, int]]:
    deny, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    program = [(_LD_ABS_W, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, deny), (_LD_ABS_W, 0, 0, 0)]
    if x86:  # x32 calls share the architecture, with this bit set
        program += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, deny)]
    program += [(_JGT, 0, 1, NEWEST), (_RET, 0, 0, enosys), (_JEQ, 0, 1, calls["clone3"]), (_RET, 0, 0, enosys)]
    for name in refused_names():
        if name in calls:
            program += [(_JEQ, 0, 1, calls[name]), (_RET, 0, 0, deny)]
    # socket: any family but REFUSED_SOCKETS (the low word of the first argument)
    program += [(_JEQ, 0, 5, calls["socket"]), (_LD_ABS_W, 0, 0, 16), (_JEQ, 2, 0, REFUSED_SOCKETS[0]),
                (_JEQ, 1, 0, REFUSED_SOCKETS[1]), (_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, deny)]
    # personality: one of ALLOWED_PERSONALITIES
    count = len(ALLOWED_PERSONALITIES)
    program += [(_JEQ, 0, count + 3, calls["personality"]), (_LD_ABS_W, 0, 0, 16)]
    program += [(_JEQ, count - k, 0, value) for k, value in enumerate(ALLOWED_PERSONALITIES)]
    program += [(_RET, 0, 0, deny), (_RET, 0, 0, _RET_ALLOW)]
    # clone: a thread (CLONE_THREAD in its flags, the low word of the first argument) in no new namespace
    program += [(_JEQ, 1, 0, calls["clone"]), (_RET, 0, 0, _RET_ALLOW), (_LD_ABS_W, 0, 0, 16),
                (_JSET, 2, 0, _CLONE_NAMESPACES), (_JSET, 0, 1, _CLONE_THREAD), (_RET, 0, 0, _RET_ALLOW),
                (_RET, 0, 0, deny)]
    return program


def supported() -> bool:
    """Whether the filter exists for this machine's architecture."""
    return platform.machine() in _MACHINES


def install() -> bool:
    """Install the filter on this process (and its threads); True if it is on."""
    machine = platform.machine()
    if machine not in _MACHINES:
        return False
    program = _filter(_MACHINES[machine][0], numbers(machine), machine == "x86_64")
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    fprog = _Program(len(program), ctypes.cast(buffer, ctypes.c_void_p))
    return libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
