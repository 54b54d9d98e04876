"""The kit's build backend: setuptools, once the exercises' student versions are made.

``pyproject.toml`` names it (``build-backend``, ``backend-path``). Before the sdist or the wheel
is built, ``course_files/student/`` is made from the exercises when it is missing or out of date
(``course_files/student_versions.py``, nbgrader's ``generate_assignment``): building from a
checkout then asks for nbgrader in the build environment, building from the sdist (which carries
``student/``) does not. Every other hook (metadata, editable installs) is setuptools' own; an
editable install makes ``student/`` when it is first asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (every hook not changed below)

PROJECT = Path(__file__).resolve().parent.parent


def _student_versions():
    if str(PROJECT) not in sys.path:
        sys.path.insert(0, str(PROJECT))
    import course_files
    from course_files import student_versions

    return course_files, student_versions


def _needs_making() -> bool:
    course_files, student_versions = _student_versions()
    return not student_versions.up_to_date(course_files.exercises(), course_files.root() / course_files.STUDENT)


def _make() -> None:
    course_files, _ = _student_versions()
    course_files.student_exercises()


def get_requires_for_build_sdist(config_settings=None):
    return _setuptools.get_requires_for_build_sdist(config_settings) + _nbgrader_if_needed()


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + _nbgrader_if_needed()


def _nbgrader_if_needed() -> list[str]:
    _, student_versions = _student_versions()
    return [student_versions.NBGRADER] if _needs_making() else []


def build_sdist(sdist_directory, config_settings=None):
    _make()
    return _setuptools.build_sdist(sdist_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _make()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
