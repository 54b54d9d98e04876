"""The grader's speed tricks (``grader/foundations/speed.py``) keep nbgrader's and nbformat's behaviour."""
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from grader.course import ensure_nbgrader_tools_on_path
from grader.foundations.speed import shared_gradebook_engines

ensure_nbgrader_tools_on_path()  # a new gradebook asks nbgrader's alembic for its version


def test_a_process_that_imports_speed_first_validates_notebooks_without_the_iri_grammar():
    program = ("import sys, grader.foundations.speed, nbformat\n"
               "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
               "nbformat.validate(nb)\n"
               "bad = nbformat.v4.new_notebook(); bad.cells.append({'cell_type': 'code'})\n"
               "try:\n    nbformat.validate(bad)\nexcept nbformat.ValidationError:\n    print('invalid refused')\n"
               "print('rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is not None)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["invalid", "refused", "False"]


def test_a_process_that_has_jsonschema_already_is_left_as_it_is():
    program = "import jsonschema, sys, grader.foundations.speed\nprint(sys.modules.get('rfc3987_syntax', 'absent') is None)\n"
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_gradebooks_share_an_engine_within_the_context_only_and_in_its_own_thread(tmp_path):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as first, Gradebook(url) as second:
        assert first.engine is not second.engine  # nbgrader's own behaviour outside the context
    with shared_gradebook_engines():
        with Gradebook(url) as first, Gradebook(url) as second:
            assert first.engine is second.engine
            first.add_student("alice")
            assert second.find_student("alice").id == "alice"
            other = {}
            thread = threading.Thread(target=lambda: other.update(engine=Gradebook(url).engine))
            thread.start()
            thread.join()
            assert other["engine"] is not first.engine  # another thread opens its own
    with Gradebook(url) as after:
        assert after.engine is not first.engine and after.find_student("alice").id == "alice"


def test_a_new_file_at_the_same_path_is_read_as_new_after_the_context(tmp_path):
    """A run's copy of the gradebook is made again at the same path by the next run: never read stale."""
    path = tmp_path / "gradebook.db"
    url = f"sqlite:///{path}"
    with shared_gradebook_engines(), Gradebook(url) as gradebook:
        gradebook.add_student("alice")
    path.unlink()
    with shared_gradebook_engines(), Gradebook(url) as gradebook:
        assert [s.id for s in gradebook.students] == []


def test_notebooks_still_read_and_write(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
    nbformat.write(nb, tmp_path / "a.ipynb")
    assert nbformat.read(tmp_path / "a.ipynb", as_version=4).cells[0].source == "x"


def test_an_assignment_preloads_only_the_configured_modules_its_source_notebooks_import(tmp_path):
    from grader.course import modules_imported
    from grader.foundations.settings import KitGrade, preload_for

    assert modules_imported("import numpy as np, matplotlib.pyplot as plt") == {"numpy", "matplotlib"}
    assert modules_imported("from autograd_core import tensor; import math") == {"autograd_core", "math"}
    assert modules_imported("if ok:\n    import scipy.stats  # import nothing\nx = 'a'") == {"scipy"}
    assert modules_imported("%matplotlib inline\nfrom . import sibling") == {"matplotlib"}
    assert modules_imported("%pylab inline") == {"matplotlib", "numpy"}
    defaults = KitGrade().preload_modules
    assert preload_for(defaults, ["numpy"]) == ["numpy", "numpy.testing"]
    assert preload_for(defaults, ["matplotlib", "autograd_core", "grader"]) == ["matplotlib.pyplot", "autograd_core"]
    assert preload_for(defaults, []) == []


def test_an_assignment_preloads_what_students_are_given_imports_never_a_solution_or_hidden_tests_import(tmp_path):
    """The list reaches the student's process (the zygote's arguments, its ``sys.modules``): it is read
    from the released notebooks and the Python files shipped beside them, never from the source."""
    import json
    import shutil

    from grader.cli import main as kitgrade
    from grader.course import Course
    from grader.commands.release import generate_release
    from grader.foundations.settings import KitGrade, preload_for

    exercises = tmp_path / "exercises"
    shutil.copytree(Path(__file__).parent / "grader_fixtures" / "exercises", exercises)
    path = exercises / "sample_ex" / "sample_ex.ipynb"
    nb = json.loads(path.read_text())
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    code[1]["source"] = "".join(code[1]["source"]).replace("### BEGIN SOLUTION\n", "### BEGIN SOLUTION\n    import scipy\n")
    code[2]["source"] = "".join(code[2]["source"]).replace("### BEGIN HIDDEN TESTS\n",
                                                           "### BEGIN HIDDEN TESTS\nimport matplotlib.pyplot as plt\n")
    path.write_text(json.dumps(nb))
    (exercises / "sample_ex" / "helpers.py").write_text("try: import autograd_core as torch\nexcept ImportError: pass\n")
    assert kitgrade(["init", str(tmp_path / "course"), "--course-id", "c1", "--exercises", str(exercises)]) == 0
    course = Course(tmp_path / "course")
    assert course.imported_modules("sample_ex") == ["autograd_core"]  # the helper: no notebook released yet
    generate_release(course, "sample_ex")
    assert course.imported_modules("sample_ex") == ["autograd_core", "numpy"]
    assert preload_for(KitGrade().preload_modules, course.imported_modules("sample_ex")) == [
        "numpy", "numpy.testing", "autograd_core"]
    assert course.preload("sample_ex") == ["numpy", "numpy.testing", "autograd_core"]


def test_what_a_check_preloads_is_what_the_notebook_and_the_files_beside_it_import(tmp_path):
    """``kitgrade check``'s zygote loads the default modules the notebook, or a Python file at the top
    of its folder, imports; a FIFO or a device named ``x.py`` is not read (it would hang the command)."""
    import os

    import nbformat

    from grader.commands.check import _preload
    from grader.foundations.settings import KitGrade

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import numpy as np"),
                                         nbformat.v4.new_markdown_cell("import matplotlib")])
    assert _preload(nb, tmp_path, KitGrade()) == ["numpy", "numpy.testing"]
    (tmp_path / "helper.py").write_text("import autograd_core\nimport scipy\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deeper.py").write_text("import matplotlib.pyplot\n")
    os.mkfifo(tmp_path / "a_fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    assert _preload(nb, tmp_path, KitGrade()) == ["numpy", "numpy.testing", "autograd_core"]


def test_a_grading_interpreter_loads_what_it_is_given_and_its_worker_sends_the_allow_list():
    """A student's process starts with the preloaded modules and nothing of the others, and walls
    itself in with its worker's allow-list (the zygote no longer reads it again)."""
    from grader.sandbox.policy import policy_for
    from grader.sandbox.scratch import scratch_folder
    from grader.sandbox.supervisor import run_notebook
    from grader.sandbox.zygote import Zygote
    from grader.foundations.settings import KitGrade

    probe = ("import sys\nprint(sorted(m for m in ('numpy', 'matplotlib', 'autograd_core') if m in sys.modules))\n"
             "from grader.sandbox import allow_list\nprint(allow_list._given_allow_list == [allow_list.readable_paths()])")
    policy = policy_for(KitGrade())
    for preload, loaded in ((["numpy"], ["numpy"]), (["numpy", "matplotlib.pyplot"], ["matplotlib", "numpy"])):
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)])
        with Zygote(preload) as zygote, scratch_folder({}) as scratch:
            run_notebook(zygote, notebook, policy.for_scratch(scratch))
        printed = "".join(output.get("text", "") for output in notebook.cells[0].outputs).split("\n")
        assert printed[0] == str(loaded), notebook.cells[0].outputs
        assert printed[1] == "True", notebook.cells[0].outputs  # the worker's list, not read again


def test_within_the_context_a_gradebook_moved_over_the_old_one_is_the_one_read_and_written(tmp_path):
    """Connections outlive each gradebook within a run, but never one to a file that was replaced
    (an instructor moving a backup over the gradebook mid-run): the backup is read and written."""
    import shutil

    path = tmp_path / "gradebook.db"
    url = f"sqlite:///{path}"
    with Gradebook(url) as gradebook:
        gradebook.add_student("alice")
    shutil.copy(path, tmp_path / "backup.db")
    with shared_gradebook_engines():
        with Gradebook(url) as gradebook:
            gradebook.add_student("bob")
            engine = gradebook.engine
        assert engine.pool.checkedin() == 1  # kept for the next gradebook
        with Gradebook(url) as gradebook:
            assert sorted(s.id for s in gradebook.students) == ["alice", "bob"]
        (tmp_path / "backup.db").replace(path)
        with Gradebook(url) as gradebook:
            assert sorted(s.id for s in gradebook.students) == ["alice"]
            gradebook.add_student("carol")
    assert engine.pool.checkedin() == 0  # disposed of when the context ended
    with Gradebook(url) as gradebook:
        assert sorted(s.id for s in gradebook.students) == ["alice", "carol"]


def _allow_list_already_read() -> int:
    from grader.sandbox import allow_list

    return allow_list._computed_readable_paths.cache_info().currsize


def test_a_local_worker_is_forked_with_the_allow_list_read():
    """The forkserver reads the sandbox's allow-list once; a worker forked from it has it (it used to
    read it again, 0.15 s per worker, before its zygote could start)."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    from grader.sandbox import workers

    workers.start_forkserver()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"),
                             initializer=workers.init_worker, initargs=([], os.getpid())) as pool:
        assert pool.submit(_allow_list_already_read).result() == 1
