"""The grader's speed tricks (``grader/speed.py``) keep nbgrader's and nbformat's behaviour."""
import subprocess
import sys
import threading

import nbformat
from nbgrader.api import Gradebook

from grader.course import ensure_nbgrader_tools_on_path
from grader.speed import shared_gradebook_engines

ensure_nbgrader_tools_on_path()  # a new gradebook asks nbgrader's alembic for its version


def test_a_process_that_imports_speed_first_validates_notebooks_without_the_iri_grammar():
    program = ("import sys, grader.speed, nbformat\n"
               "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('x = 1')])\n"
               "nbformat.validate(nb)\n"
               "bad = nbformat.v4.new_notebook(); bad.cells.append({'cell_type': 'code'})\n"
               "try:\n    nbformat.validate(bad)\nexcept nbformat.ValidationError:\n    print('invalid refused')\n"
               "print('rfc3987_syntax' in sys.modules and sys.modules['rfc3987_syntax'] is not None)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["invalid", "refused", "False"]


def test_a_process_that_has_jsonschema_already_is_left_as_it_is():
    program = "import jsonschema, sys, grader.speed\nprint(sys.modules.get('rfc3987_syntax', 'absent') is None)\n"
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
