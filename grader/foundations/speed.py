"""The grader's speed tricks, kept in this one room (each measured by ``benchmarks/bench_grading.py``).

Importing this module is the first trick; it is imported first by every process of a grading
run (the ``kitgrade`` command, and the forkserver workers come from where they are not forked from it):

* **An import nbformat does not need.** jsonschema, which nbformat imports, loads
  ``rfc3987_syntax`` when it is installed (the Jupyter server's ``jsonschema[format-nongpl]``
  installs it) and builds a lark grammar with it at import: 0.75 s of the 0.85 s that
  ``import nbformat`` takes on a 2-core machine, paid by the command and by a workers' forkserver
  on every run. It only checks the ``iri`` string format, which no notebook schema uses; jsonschema
  treats it as optional. In a process that has not imported jsonschema yet it is marked missing,
  as if it were not installed; a process that already has jsonschema is left as it is.

* ``shared_gradebook_engines()``: nbgrader opens a new SQLAlchemy engine for every ``Gradebook``
  (about ten times per student as it grades, each time inspecting the tables and compiling every
  query again) and closes its connections when the gradebook is closed. Within the context, in the
  current thread, one engine serves each database and keeps its connections from one gradebook to
  the next (a new SQLite connection reads the whole schema again before its first query: about
  0.6 ms of the 2 ms a gradebook took to open and close). A connection is used again only while
  the file at the database's path is the one it opened: a gradebook replaced meanwhile (a backup
  moved over it) is opened anew, as nbgrader would. The engines are disposed of when the context
  ends, so no connection outlives it (a later run's copy of the gradebook is a new file, never
  read through an old connection).

* ``before_forking_workers()``: the same ``gc.freeze()`` when the command forks its local workers,
  for everything it has made so far (nbgrader, SQLAlchemy and the rest): no collection, in the
  command or in a worker, walks those objects again, and so none copies their memory pages into a
  worker (a worker shares them with the command until it writes to them). Measured: 3-6% of a run
  of the sample, 7% of its CPU.

* ``ending_quickly()``: a command that has imported nbgrader, SQLAlchemy and the rest holds about
  a million objects, and the interpreter's own tear-down walked them all with the garbage collector
  several times: 0.3 s after the command had done everything (measured on ``kitgrade autograde``
  of 16 submissions). The command's last step moves them out of the collector's reach
  (``gc.freeze``); the tear-down still runs (``atexit`` hooks, files flushed and closed).

* The local workers' start-up (``sandbox/spare_zygotes.py``): their zygotes start first thing, and
  the workers are forked from the command instead of a forkserver that imported everything again.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from contextlib import contextmanager

if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # ``import rfc3987_syntax`` raises ImportError

_active = threading.local()  # .engines: {key: engine} while a context is open in this thread
_patch_lock = threading.Lock()


@contextmanager
def shared_gradebook_engines():
    """Within the context, every ``nbgrader.api.Gradebook`` opened in this thread shares one engine per database."""
    if getattr(_active, "engines", None) is not None:  # nested: the outer context shares and disposes
        yield
        return
    _install()
    _active.engines = {}
    try:
        yield
    finally:
        engines, _active.engines = _active.engines, None
        for engine in engines.values():
            type(engine).dispose(engine)  # nbgrader's ``Gradebook.close`` no longer does (``_kept``)


def before_forking_workers() -> None:
    """Called by the command just before it forks its workers (never by a process that goes on)."""
    gc.freeze()


def ending_quickly() -> None:
    """Called as the command's process ends (never in a process that goes on: a test run, a notebook)."""
    gc.freeze()


def forget_gradebook_engines() -> None:
    """In a process forked from one inside the context (the command's local workers): leave the
    engines, and their connections, to the process that made them, and share none of them here."""
    _active.engines = None


def _install() -> None:
    """Route ``nbgrader.api.create_engine`` through ``_create_engine`` (once per process)."""
    import nbgrader.api as api

    with _patch_lock:
        if getattr(api.create_engine, "shared_by_kitgrade", False):
            return
        original = api.create_engine

        def _create_engine(url, *args, **kwargs):
            engines = getattr(_active, "engines", None)
            if engines is None:  # outside a context: nbgrader's own behaviour
                return original(url, *args, **kwargs)
            key = (str(url), args, tuple(sorted(kwargs.items())))
            try:
                hash(key)
            except TypeError:  # options this room does not know how to compare: an engine of its own
                return original(url, *args, **kwargs)
            if key not in engines:
                engines[key] = _kept(original(url, *args, **kwargs))
            return engines[key]

        _create_engine.shared_by_kitgrade = True
        api.create_engine = _create_engine


def _kept(engine):
    """``engine``, whose connections outlive each gradebook until the context ends; an SQLite one
    never reuses a connection to a file that is no longer at the database's path."""
    from sqlalchemy import event, exc

    engine.dispose = lambda *args, **kwargs: None  # Gradebook.close's; the context disposes of it
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:"):
        return engine

    def identity():
        try:
            status = os.stat(path)
        except OSError:
            return None
        return status.st_dev, status.st_ino

    @event.listens_for(engine, "connect")
    def remember(dbapi_connection, record):
        record.info["kitgrade_file"] = identity()

    @event.listens_for(engine, "checkout")
    def same_file(dbapi_connection, record, proxy):
        if record.info.get("kitgrade_file") != identity():  # the pool drops it and connects again
            raise exc.DisconnectionError("the gradebook's file was replaced")

    return engine
