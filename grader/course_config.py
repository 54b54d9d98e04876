"""A course's configuration, read the way nbgrader reads it, and checked before any command acts.

nbgrader's own loading (``NbGrader.load_config_file``) reads ``nbgrader_config.py`` (and
``jupyter_config.py``) from Jupyter's config path (``jupyter --paths``: the user's
``~/.jupyter``, the environment's and the system's folders), then the one in the course
directory; whatever no file sets keeps nbgrader's default (``CourseDirectory``'s gradebook URL is
``sqlite:///<root>/gradebook.db``, and so on). The kit uses that same loader, so a course made by
``nbgrader quickstart`` is read exactly as ``nbgrader`` reads it; the kit's ``c.KitGrade`` settings
are optional additions. The working directory's file is not read when the course is elsewhere
(``--course DIR``): the course is the folder named, not the one the shell is in.

Every setting is checked against its trait before a command starts, so a wrong type or value
(``c.KitGrade.cell_timeout = "ten"``, ``c.KitGrade.workers = -2``) or a file that does not run
is one line naming the file and the setting, not a traceback halfway through a run.
"""

from __future__ import annotations

import copy
import os
import traceback
from pathlib import Path

from traitlets import TraitError
from traitlets.config import Config, LazyConfigValue
from traitlets.config.application import Application
from traitlets.config.loader import PyFileConfigLoader

from .foundations.errors import UsageError

CONFIG_FILE = "nbgrader_config.py"


def _loader_class():
    from nbgrader.apps.baseapp import NbGrader

    class CourseConfigLoader(NbGrader):
        """nbgrader's app, used only for its config loading (no command line, no working directory)."""

        load_cwd_config = False
        trait_error: TraitError | None = None

        def init_syspath(self) -> None:  # nbgrader puts the working directory on sys.path; not ours to change
            pass

        def _load_config(self, cfg, **kwargs):
            try:
                super()._load_config(cfg, **kwargs)
            except TraitError as error:  # remembered: traitlets turns it into exit(1) with a log line
                self.trait_error = error
                raise

        def exit(self, exit_status=0):
            raise self.trait_error or UsageError("nbgrader could not load its configuration")

    return CourseConfigLoader


def user_config_files() -> list[Path]:
    """The ``nbgrader_config.py`` files nbgrader reads from Jupyter's config path (user, environment, system)."""
    from jupyter_core.paths import jupyter_config_path

    return [Path(folder, CONFIG_FILE) for folder in jupyter_config_path() if Path(folder, CONFIG_FILE).is_file()]


def load_course_config(root: Path) -> tuple[Config, list[str]]:
    """nbgrader's configuration of the course at ``root``, checked; returns it and the files read.

    Raises ``UsageError`` for a file that does not run, a setting of the wrong type or value, or a
    ``CourseDirectory.root`` that names another folder than ``root`` (a moved course).
    """
    from nbgrader.coursedir import CourseDirectory

    app = _loader_class()()
    app.raise_config_file_errors = True
    app.log.setLevel("CRITICAL")
    app.coursedir = CourseDirectory(parent=app, root=str(root))
    try:
        app.load_config_file()  # jupyter_config.py and nbgrader_config.py from Jupyter's config path
        Application.load_config_file(app, CONFIG_FILE, path=str(root))  # the course's own, last: it wins
    except UsageError:
        raise
    except TraitError as error:
        raise UsageError(_setting_problem(app.loaded_config_files, error)) from None
    except Exception as error:  # the file itself raised: a syntax error, a name that does not exist, ...
        raise UsageError(_file_problem(error)) from None
    config = copy.deepcopy(app.config)
    files = app.loaded_config_files
    check_settings(config, files)
    configured_root = Path(app.coursedir.root).resolve()
    if configured_root != Path(root).resolve():
        setters = [Path(f) for f in files if "root" in _settings_of(Path(f)).get("CourseDirectory", {})]
        where = setters[-1] if setters else CONFIG_FILE
        raise UsageError(f"{where} sets CourseDirectory.root = '{configured_root}', but the course is {root} "
                         "(moved?); remove that line, or make it the course's own folder")
    config.CourseDirectory.root = str(Path(root).resolve())
    return config, files


def _settings_of(path: Path) -> Config:
    try:
        return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()
    except Exception:
        return Config()


def _file_problem(error: BaseException) -> str:
    """``<file>, line N: <what went wrong>`` for an exception raised while a config file ran."""
    if isinstance(error, SyntaxError):
        return f"{error.filename}, line {error.lineno}: {type(error).__name__}: {error.msg} (nbgrader_config.py is Python)"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.endswith(".py")
              and Path(f.filename).name in (CONFIG_FILE, "jupyter_config.py")]
    where = f"{frames[-1].filename}, line {frames[-1].lineno}" if frames else "nbgrader's configuration"
    return f"{where}: {type(error).__name__}: {error}"


def _configurable_classes() -> dict[str, type]:
    """Every class a course's config may set (nbgrader's own, as ``nbgrader --help-all`` lists them, and the kit's)."""
    from nbgrader.apps.nbgraderapp import NbGraderApp

    from .foundations.settings import KitGrade

    classes = {cls.__name__: cls for cls in NbGraderApp().all_configurable_classes()}
    classes[KitGrade.__name__] = KitGrade
    return classes


def check_settings(config: Config, files: list[str]) -> None:
    """Check every value set for a known class against its trait (type, bounds)."""
    classes = None
    for section, values in config.items():
        if not isinstance(values, Config):
            continue
        for name, value in values.items():
            if isinstance(value, (LazyConfigValue, Config)):
                continue
            classes = classes if classes is not None else _configurable_classes()
            cls = classes.get(section)
            trait = cls.class_traits(config=True).get(name) if cls else None
            if trait is None:
                if section == "KitGrade":  # the kit's own settings: a misspelled one would be silently ignored
                    setters = [f for f in files if name in _settings_of(Path(f)).get(section, {})] or files
                    raise UsageError(f"{_files_text(setters[-1:])}: c.KitGrade.{name} is not a setting; the kit's "
                                     f"settings are {', '.join(sorted(cls.class_traits(config=True)))}")
                continue
            try:
                trait.validate(None, value)
            except TraitError as error:
                raise UsageError(_setting_problem(files, error, section=section, name=name, value=value, trait=trait)) from None
            except Exception:  # a trait whose validation needs its object: nbgrader checks it when it runs
                continue


def _setting_problem(files: list[str], error: TraitError, *, section: str = "", name: str = "", value=None,
                     trait=None) -> str:
    """One line: which file, which setting, what it is, what is expected."""
    if not section:
        return f"{_files_text(files)}: {error}"
    setters = [f for f in files if name in _settings_of(Path(f)).get(section, {})] or files
    expected = trait.info() if trait is not None else "another value"
    bounds = [f"{word} {getattr(trait, attr)}" for attr, word in (("min", ">="), ("max", "<="))
              if getattr(trait, attr, None) is not None]
    return (f"{_files_text(setters[-1:])}: c.{section}.{name} = {value!r} is not valid; expected "
            f"{expected}{' ' + ' and '.join(bounds) if bounds else ''}")


def _files_text(files: list[str]) -> str:
    return ", ".join(files) if files else CONFIG_FILE


def find_course_root(directory: str | os.PathLike | None) -> Path:
    """The course a command acts on: ``directory`` if given; else the working directory if it holds
    ``nbgrader_config.py``; else the ``CourseDirectory.root`` set in the user's or system's nbgrader
    config (as on a JupyterHub grader account)."""
    if directory is not None:
        root = Path(directory).expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"{directory}: no such folder" if not root.exists() else f"{directory} is a file, not a course folder")
        if not (root / CONFIG_FILE).is_file() and not _configured_roots_include(root):
            raise UsageError(f"{root} is not an nbgrader course (no {CONFIG_FILE}); "
                             "run `kitgrade init DIR` to make one, or pass the course with --course DIR")
        return root
    here = Path.cwd()
    if (here / CONFIG_FILE).is_file():
        return here.resolve()
    for path in user_config_files():  # the first in Jupyter's path wins, as in nbgrader
        root = _settings_of(path).get("CourseDirectory", {}).get("root")
        if isinstance(root, str) and root:
            if not Path(root).is_dir():
                raise UsageError(f"{path} sets CourseDirectory.root = '{root}', which does not exist")
            return Path(root).resolve()
    raise UsageError(f"{here} is not an nbgrader course (no {CONFIG_FILE} here, and no CourseDirectory.root in "
                     "nbgrader's user config); cd into the course, or pass it with --course DIR")


def _configured_roots_include(root: Path) -> bool:
    for path in user_config_files():
        configured = _settings_of(path).get("CourseDirectory", {}).get("root")
        if isinstance(configured, str) and configured and Path(configured).resolve() == root:
            return True
    return False
