"""What the sandbox may read: the allow-list bubblewrap binds read-only (``bubblewrap.py``) and
Landlock enforces again (``landlock.py``).

It is derived from the installed distributions a notebook may import (``IMPORTABLE_DISTRIBUTIONS``
and everything they require), the standard library, the kit's own ``autograd_core`` and
``grader.checks`` (``KIT_PATHS``, with the sandbox's own modules), the interpreter and the shared
libraries of the system, fonts, and a named list of ``/etc`` files. Never from ``sys.path`` or the
current folder. Reading every distribution's file list is the slow part (0.15 s): it is read once
per worker, and a zygote takes its worker's list (``use_allow_list``).
"""

from __future__ import annotations

import functools
import glob
import os
import sys
import sysconfig

from .mounts import installed_under_tmp

#: Distributions a graded notebook may import, with everything they require (the rest of the
#: grading environment, nbgrader, dask, jupyterhub, torch, ... is not in the sandbox): the lab's own,
#: which students are given (ipywidgets: the course's widgets are made with it).
IMPORTABLE_DISTRIBUTIONS = ("numpy", "matplotlib", "ipython", "ipykernel", "ipywidgets")
#: The kit's own importable code, relative to its package root: the engine, the checks a trusted
#: test uses, and the sandbox the zygote and the student's process run (nothing else of the checkout).
KIT_PATHS = ("autograd_core", "grader/__init__.py", "grader/checks.py", "grader/method_checks.py", "grader/student_language.py",
             "grader/script_tasks.py", "grader/plain_values.py", "grader/sandbox")
#: Files of /etc a Python process reads: the dynamic linker's cache, the time zone, font configuration.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/fonts")
#: Fonts for matplotlib besides its own.
FONT_FOLDERS = ("/usr/share/fonts", "/usr/local/share/fonts")


def _requirement_names(dist) -> list[str]:
    from packaging.requirements import InvalidRequirement, Requirement

    names = []
    for text in dist.requires or []:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        names.append(requirement.name)
    return names


def importable_distributions(roots=IMPORTABLE_DISTRIBUTIONS) -> list:
    """The installed distributions ``roots`` and everything they require (missing ones are skipped)."""
    from importlib import metadata

    found, queue = {}, list(roots)
    while queue:
        name = queue.pop()
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        queue.extend(_requirement_names(dist))
    return list(found.values())


def distribution_paths(dist) -> set[str]:
    """The top-level files and folders a distribution installed (its packages, libraries, metadata)."""
    tops = set()
    for file in dist.files or []:
        parts = file.parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith(".pth"):
            continue
        tops.add(os.path.normpath(str(dist.locate_file(parts[0]))))
    return {path for path in tops if os.path.isabs(path) and os.path.lexists(path)}


def kit_root() -> str:
    """The folder that holds the ``grader`` and ``autograd_core`` packages."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stdlib_paths() -> list[str]:
    """The standard library: its folder (without site-packages), and the zip form if there is one."""
    stdlib = sysconfig.get_paths()["stdlib"]
    paths = [os.path.join(stdlib, name) for name in os.listdir(stdlib) if name not in ("site-packages", "dist-packages")]
    zipped = os.path.join(os.path.dirname(stdlib), f"python{sys.version_info[0]}{sys.version_info[1]}.zip")
    return paths + ([zipped] if os.path.exists(zipped) else [])


def interpreter() -> str:
    """The real Python binary (a venv's ``python`` is a link to it)."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def library_paths() -> list[str]:
    """The interpreter's own shared library and the system's shared library folders."""
    paths = glob.glob(os.path.join(sysconfig.get_config_var("LIBDIR") or "/usr/lib", "libpython3*.so*"))
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for folder in ("/lib64", "/usr/lib64", f"/lib/{multiarch}", f"/usr/lib/{multiarch}"):
        if multiarch or folder.endswith("64"):
            paths.append(folder)
    return paths


@functools.lru_cache(maxsize=1)
def _installed_paths() -> tuple[str, ...]:
    """What the importable distributions installed, each distribution's paths sorted (read once per
    worker: reading every distribution's file list is the slow part of the allow-list)."""
    return tuple(path for dist in importable_distributions() for path in sorted(distribution_paths(dist)))


def import_roots() -> list[str]:
    """The folders a sandboxed interpreter imports from (its ``sys.path``), in order."""
    stdlib = sysconfig.get_paths()["stdlib"]
    roots = [p for p in stdlib_paths() if p.endswith(".zip")] + [stdlib, os.path.join(stdlib, "lib-dynload")]
    for path in _installed_paths():
        folder = os.path.dirname(path)
        if folder not in roots:
            roots.append(folder)
    roots.append(kit_root())
    return roots


_given_allow_list: list[tuple[str, ...]] = []  # the worker's, in a zygote (``use_allow_list``)


def readable_paths() -> tuple[str, ...]:
    """Everything the sandbox may read (before links are followed): the allow-list."""
    return _given_allow_list[0] if _given_allow_list else _computed_readable_paths()


@functools.lru_cache(maxsize=1)
def _computed_readable_paths() -> tuple[str, ...]:
    paths = [interpreter(), *library_paths(), *stdlib_paths(), *_installed_paths()]
    paths.extend(os.path.join(kit_root(), relative) for relative in KIT_PATHS)
    paths.extend(ETC_FILES)
    paths.extend(FONT_FOLDERS)
    return tuple(p for p in paths if os.path.lexists(p))


def use_allow_list(paths: list[str]) -> None:
    """In a zygote: take the allow-list its worker sent (the list the worker mounted the sandbox
    with) instead of reading every distribution's file list again (0.15 s per zygote)."""
    _given_allow_list[:] = [tuple(str(p) for p in paths)]


def allow_list_entries_of_tmp() -> list[str]:
    """The entries of ``/tmp`` that hold something of the allow-list (a kit or Python under ``/tmp``)."""
    if not installed_under_tmp():
        return []
    names = set()
    for path in readable_paths():
        real = os.path.realpath(path)
        if real.startswith("/tmp/"):
            names.add(real.split("/")[2])
    return [os.path.join("/tmp", name) for name in sorted(names)]
