"""The exercises in English and Chinese, built from one source (``exercises/build.py``).

The Chinese notebook of an assignment must be its English one in other words: the same cells,
grade ids, points, solutions and hidden tests, code that differs only inside strings and comments,
prose of the same structure, and the course's Chinese terms. One Chinese notebook is graded end to
end by ``kitgrade check`` (the sandbox and the trusted tests): its lines, the test messages and the
hidden-check count speak Chinese, and the points are the same as the English tests give. The
English exercises are graded in full by ``test_exercises.py``; they are not graded twice here.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import re

import nbformat
import pytest

from kit_paths import ROOT
from test_notebooks import CHINESE_TERMS, code_without_words, structure

EXERCISES = ROOT / "exercises"
SOURCES = sorted((EXERCISES / "_src").glob("*.txt"))
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load_build():
    spec = importlib.util.spec_from_file_location("exercise_build", EXERCISES / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load_build()


def built(source):
    """{language: (path relative to exercises/, notebook)} of one source, as the committed files hold it."""
    pairs = build.parse(source)
    assert [target for target, _ in pairs] == [target for target, _ in pairs[:1]] + [build.zh_target(pairs[0][0])]
    return {nb.metadata["kitgrade"]["language"]: (target, nbformat.read(EXERCISES / target, as_version=4))
            for target, nb in pairs}


def nbgrader_meta(cell):
    return cell.metadata.get("nbgrader", {})


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_every_exercise_is_built_in_english_and_chinese(source):
    notebooks = built(source)
    assert sorted(notebooks) == ["en", "zh"]
    en_target, _ = notebooks["en"]
    assert notebooks["zh"][0] == en_target.replace("/", "_zh/", 1)


def _without_helpers(source):
    return "\n".join(line for line in source.splitlines() if not line.startswith(("from grader.checks", "check, check_close")))


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_chinese_twin_has_the_same_cells_tests_points_and_code(source):
    notebooks = built(source)
    (_, en), (_, zh) = notebooks["en"], notebooks["zh"]
    assert [(c.cell_type, nbgrader_meta(c)) for c in en.cells] == [(c.cell_type, nbgrader_meta(c)) for c in zh.cells]
    assert {k: v for k, v in en.metadata.items() if k != "kitgrade"} == \
        {k: v for k, v in zh.metadata.items() if k != "kitgrade"}
    assert {**en.metadata["kitgrade"], "language": "zh"} == zh.metadata["kitgrade"]
    for a, b in zip(en.cells, zh.cells):
        where = nbgrader_meta(a)["grade_id"]
        if a.cell_type == "code":  # the helpers' import differs (their language); nothing else but words
            assert code_without_words(_without_helpers(a.source)) == code_without_words(_without_helpers(b.source)), \
                f"{where}: code differs"
        elif a.cell_type == "markdown":
            assert CJK.search(b.source) and a.source != b.source, f"{where}: not translated"
            assert structure(a.source) == structure(b.source), f"{where}: en and zh differ in structure"


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_chinese_exercises_fail_in_chinese_and_use_the_course_terms(source):
    _, zh = built(source)["zh"]
    code = "\n".join(c.source for c in zh.cells if c.cell_type == "code")
    assert 'check, check_close = checks_in("zh")' in code
    assert not re.search(r"from grader\.checks import [^\n]*\bcheck(_close)?\b", code), "an English check imported"
    text = "\n".join(c.source for c in zh.cells)
    found = [f"{literal!r} (write {term!r})" for literal, term in CHINESE_TERMS.items() if literal in text]
    assert not found, ", ".join(found)


#: English words that are not Python's (a probe's code is full of for, in, and, not, with, from)
ENGLISH_WORDS = re.compile(r"\b(the|of|to|that|its|by|your|this|when|every|each|instead|unchanged|wrong)\b")


def english_left(cell_source):
    """The strings and comments of a cell's student-visible code (before its hidden tests) that read as English
    prose: no Chinese character, not Python code themselves (a probe the test runs), two English words or more."""
    import tokenize

    visible = cell_source.split("### BEGIN HIDDEN TESTS")[0]
    found = []
    for token in tokenize.generate_tokens(io.StringIO(visible).readline):
        if token.type not in (tokenize.STRING, tokenize.COMMENT) or CJK.search(token.string):
            continue
        text = token.string.lstrip("#").strip()
        if token.type == tokenize.STRING:
            text = re.sub(r"^[rbfRBF]*('{3}|\"{3}|'|\")|('{3}|\"{3}|'|\")$", "", text)
            try:
                ast.parse(text)  # (parsed, not compiled: no warning about the code's meaning)
                continue
            except SyntaxError:
                pass
        if len(ENGLISH_WORDS.findall(text)) >= 2 or re.search(r"\b(unchanged|wrong)\b", text):
            found.append(text[:80])
    return found


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_what_a_chinese_student_reads_in_the_code_cells_is_chinese(source):
    """Docstrings, comments and the words of the checks that the student sees (the given code, the visible checks):
    a failed check in a Chinese notebook says its expected value in Chinese (numerical_gradient's "unchanged")."""
    _, zh = built(source)["zh"]
    left = {nbgrader_meta(c).get("grade_id"): english_left(c.source) for c in zh.cells
            if c.cell_type == "code" and not nbgrader_meta(c).get("solution")}
    assert not {cell: texts for cell, texts in left.items() if texts}


def test_build_refuses_a_source_translated_only_in_part(tmp_path):
    source = tmp_path / "px.txt"
    source.write_text("%% notebook px/px.ipynb\n%% markdown a\nOne.\n%% zh\n一。\n%% markdown b\nTwo.\n"
                      "%% code c\nprint('«hi|你好»')\n", encoding="utf-8")
    with pytest.raises(SyntaxError, match=r"without their Chinese.*\['b'\]"):
        build.parse(source)
    source.write_text(source.read_text(encoding="utf-8").replace("Two.\n", "Two.\n%% zh\n二。\n"), encoding="utf-8")
    (_, en), (target, zh) = build.parse(source)
    assert target == "px_zh/px.ipynb" and zh.cells[1].source == "二。" and zh.cells[2].source == "print('你好')"
    assert en.cells[2].source == "print('hi')" and en.metadata["kitgrade"] == {"language": "en"}


def test_kitgrade_init_and_the_class_file_offer_every_set_in_both_languages():
    from grader.commands.course_init import exercise_folders

    staged = {folder.name for folder in exercise_folders(EXERCISES)}
    sets = {build.parse(source)[0][0].split("/")[0] for source in SOURCES}
    assert "ps3_extending_autograd" in sets
    assert staged == sets | {name + "_zh" for name in sets}
    kithub = ast.parse((ROOT / "deploy" / "hub" / "kithub" / "spec.py").read_text(encoding="utf-8"))
    default = next(node.value for node in kithub.body if isinstance(node, ast.Assign)
                   and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["DEFAULT_ASSIGNMENTS"])
    assert sorted(ast.literal_eval(default)) == sorted(sets)


def test_feedback_keeps_a_chinese_hidden_count_and_nothing_else_of_a_hidden_cell():
    from grader.notebook.preprocessors import HIDDEN_COUNT

    assert HIDDEN_COUNT.match("5 项隐藏检查中通过了 3 项") and HIDDEN_COUNT.match("5 项隐藏检查中通过了 3 项；其余的未能运行")
    assert HIDDEN_COUNT.match("3 of 5 hidden checks passed")
    assert not HIDDEN_COUNT.match("x.grad：应为 [1.]，实际得到 [2.]，输入：x=[0.25]")
    assert not HIDDEN_COUNT.match("5 项隐藏检查中通过了 3 项，输入：x=[0.25]")


# --- one Chinese notebook graded end to end ----------------------------------------------------------
ZH_ANSWERS = {
    # the two gradients swapped: the visible check of x.grad fails (0 of 2)
    "hypot": '''\
class Hypot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        h = torch.sqrt(x * x + y * y)
        ctx.save_for_backward(x, y, h)
        return h

    @staticmethod
    def backward(ctx, G):
        x, y, h = ctx.saved_tensors
        return G * y / h, G * x / h''',
    # clips only from above: right on the visible input, wrong where w < -limit (hidden: 0 of 1)
    "clipped_backward": '''\
def clipped_backward(x, w, limit):
    h = x * x
    h.register_hook(lambda g: g.clamp(max=limit))
    (h * w).sum().backward()
    return x.grad''',
    # left as released: the visible checks get no answer (0 of 1, twice)
    "evaluate": '''\
def evaluate(model, x):
    raise NotImplementedError()''',
}


def test_kitgrade_check_grades_a_chinese_notebook_in_chinese(tmp_path):
    from grader.commands.check import check_notebook

    _, zh = built(EXERCISES / "_src" / "ps3_extending_autograd.txt")["zh"]
    for cell in zh.cells:
        if nbgrader_meta(cell).get("grade_id") in ZH_ANSWERS:
            cell.source = ZH_ANSWERS[nbgrader_meta(cell)["grade_id"]]
    path = tmp_path / "extending_autograd.ipynb"
    nbformat.write(zh, path)
    lines = io.StringIO()
    status = check_notebook(path, out=lambda line: print(line, file=lines))
    text = lines.getvalue()
    by_test = {line.split()[1]: line for line in text.splitlines() if line.split()[:1] in (["通过"], ["未通过"])}
    assert status == 1, text
    assert sorted(name for name, line in by_test.items() if line.startswith("未通过")) == \
        ["test_clipped_backward", "test_evaluate", "test_evaluate_leaves_the_model", "test_hypot"], text
    assert re.search(r"test_hypot +0/2 +AssertionError: x\.grad：应为 \[0\.6 *, 0\.89442719\]，实际得到 \[ 0\.8 *, "
                     r"-1\.78885438\]（最大偏差 2\.68；允许：rtol=1e-06，atol=1e-09），"
                     r"输入：x=\[3\.0, 1\.0\], y=\[4\.0, -2\.0\], G=\[1\.0, 2\.0\]$", by_test["test_hypot"]), text
    assert re.search(r"test_clipped_backward +0/1 +AssertionError: 3 项隐藏检查中通过了 [0-2] 项$",
                     by_test["test_clipped_backward"]), text
    assert by_test["test_evaluate"].endswith("0/1  尚未作答：这道题仍然抛出 NotImplementedError（保持发下来时的样子）"), text
    assert text.splitlines()[-1].startswith("合计：7/12（笔记本中的全部测试，包括其中的隐藏测试）"), text  # its own hidden ones
    # what the student reads is Chinese; the notes after "注意：" are the sandbox's findings, for the instructor
    student_lines = "\n".join(line for line in text.splitlines() if not line.startswith("注意："))
    assert not re.search(r"\b(expected|got|for input|hidden checks|PASS|FAIL|total)\b", student_lines), text


def test_feedback_hides_a_hidden_cells_message_in_the_notebooks_language():
    from grader.notebook.preprocessors import HideHiddenTests

    def graded(language, evalue):
        cell = nbformat.v4.new_code_cell("check(True, 'a', 1, 1, 1)\n### BEGIN HIDDEN TESTS\ncheck(x == 3, ...)\n"
                                         "### END HIDDEN TESTS", metadata={"nbgrader": {"grade": True, "grade_id": "t"}})
        cell.outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue=evalue,
                                               traceback=["AssertionError", "check(x == 3, ...)", evalue])]
        nb = nbformat.v4.new_notebook(cells=[cell], metadata={"kitgrade": {"language": language}})
        nb, _ = HideHiddenTests().preprocess(nb, {})
        return nb.cells[0].outputs[0]

    zh = graded("zh", "x：应为 3，实际得到 4，输入：隐藏的输入")
    assert zh.traceback == ["AssertionError（详情已隐藏：这个单元含有隐藏测试）"] and zh.evalue == ""
    assert graded("en", "x: expected 3, got 4").traceback == ["AssertionError (details hidden: this cell holds hidden tests)"]
    assert graded("zh", "5 项隐藏检查中通过了 3 项").evalue == "5 项隐藏检查中通过了 3 项"


def test_the_first_wrong_node_is_named_in_the_notebooks_language():
    import numpy as np

    from grader.checks import first_wrong_node

    nodes = [("y = x * w", np.ones(3), np.ones(3)), ("h = x * w", np.ones(3), np.ones((1, 3))), ("x", 1.0, None)]
    assert first_wrong_node(nodes, language="zh") == ("h = x * w", "形状 (3,)", "形状 (1, 3)")
    assert first_wrong_node(nodes[2:], language="zh") == ("x", "1.0", "没有梯度")
    assert first_wrong_node(nodes) == ("h = x * w", "shape (3,)", "shape (1, 3)")
    _, zh = built(EXERCISES / "_src" / "ps2_build_your_own.txt")["zh"]
    assert any('first_wrong_node(' in c.source and 'language="zh")' in c.source for c in zh.cells)


def test_the_feedback_page_speaks_the_notebooks_language():
    """The page around the messages (scores, pending, labels, comments) in the notebook's language too;
    English where the notebook names none."""
    from pathlib import Path

    from traitlets.config import Config

    from grader.feedback import TEMPLATES, _feedback_exporter, _nbgrader_templates

    def page(metadata):
        written = nbformat.v4.new_markdown_cell("my answer", metadata={"nbgrader": {
            "solution": True, "grade": True, "grade_id": "w1", "points": 2, "score": 0, "pending": True,
            "comment": "see the kink"}})
        test = nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {"grade": True, "grade_id": "t1",
                                                                                 "points": 1, "score": 1}})
        nb = nbformat.v4.new_notebook(cells=[written, test], metadata=metadata)
        css = Path(_nbgrader_templates()).parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
        exporter = _feedback_exporter()(config=Config({"HTMLExporter": {
            "template_name": "kit_feedback", "extra_template_basedirs": [str(TEMPLATES), _nbgrader_templates()],
            "extra_template_paths": [str(css)]}}))
        html, _ = exporter.from_notebook_node(nb, resources={"nbgrader": {
            "notebook": "nb", "score": 1, "max_score": 3, "pending": 2, "late_penalty": 0}})
        return html

    zh, en, unnamed = page({"kitgrade": {"language": "zh"}}), page({"kitgrade": {"language": "en"}}), page({})
    assert "(得分: 1.0 / 3.0, 2.0 分待老师评分)" in zh
    for words in ("待评分 / 2.0", "你的答案", "测试单元", "<b>评语:</b>", "回到顶部"):
        assert words in zh, words
    assert not re.search(r"\b(Score|pending|Comments|Student's answer|Test cell)\b", zh)
    for html in (en, unnamed):
        assert "(Score: 1.0 / 3.0, 2.0 pending hand grading)" in html and "<b>Comments:</b>" in html
        assert not re.search(r"[\u4e00-\u9fff]", html)


def test_a_chinese_message_puts_no_space_between_chinese_words():
    """The template's space beside a field stays where the field meets Chinese with a number or a bracket, and
    goes where it would stand between two Chinese words ("应为 在同一个 y 上" reads as a slip)."""
    from grader.checks import checks_in

    check, _ = checks_in("zh")
    with pytest.raises(AssertionError) as failed:
        check(False, "backward_twice(x) 中的 backward 调用", "同一个 y 上的 2 次调用", "2 个不同的 y 上的 2 次调用（y 被重新构造了）",
              {"x": "arange(4.0)"})
    assert str(failed.value) == ("backward_twice(x) 中的 backward 调用：应为同一个 y 上的 2 次调用，实际得到 2 个不同的 y 上的 2 次调用"
                                 "（y 被重新构造了），输入：x=arange(4.0)")
    with pytest.raises(AssertionError) as failed:
        check(False, "x.grad", "[1.0]", "没有梯度", {"x": [0.25]})
    assert str(failed.value) == "x.grad：应为 [1.0]，实际得到没有梯度，输入：x=[0.25]"


# --- a script task (a cell that defines variables) left as released ------------------------------------
SIN_TESTS = ("test_sin_points", "test_sin_derivative", "test_sin_plot")


@pytest.mark.parametrize("language, answer, expected", [
    # nbgrader's release replaces the solution region with this: every test of the task reads "not answered yet"
    ("en", "# YOUR CODE HERE\nraise NotImplementedError()",
     dict.fromkeys(SIN_TESTS, "not answered yet: the task still raises NotImplementedError, as it was handed out")),
    ("zh", "# YOUR CODE HERE\nraise NotImplementedError()",
     dict.fromkeys(SIN_TESTS, "尚未作答：这道题仍然抛出 NotImplementedError（保持发下来时的样子）")),
    # answered wrongly: the cell ran, x is missing, a function of the student's left blank raised: still "no such variable"
    ("en", "def plot():\n    raise NotImplementedError()\n\ny = 1.0\nplot()",
     {"test_sin_points": "AssertionError: x: expected a variable of that name, got no such variable, for input task 5"}),
    ("en", "y = 1.0", {name: "AssertionError: x: expected a variable of that name, got no such variable, for input task 5"
                       for name in SIN_TESTS[:2]}),
])
def test_a_script_task_left_blank_reads_not_answered_yet(tmp_path, language, answer, expected):
    from grader.commands.check import check_notebook

    _, nb = built(EXERCISES / "_src" / "ps1_autograd_basics.txt")[language]
    for cell in nb.cells:
        if nbgrader_meta(cell).get("grade_id") == "plot_sin":
            cell.source = answer
    path = tmp_path / "autograd_basics.ipynb"
    nbformat.write(nb, path)
    lines = io.StringIO()
    check_notebook(path, out=lambda line: print(line, file=lines))
    text = lines.getvalue()
    by_test = {line.split()[1]: line for line in text.splitlines() if len(line.split()) > 1}
    for name, message in expected.items():
        assert re.search(r" 0/1  " + re.escape(message) + "$", by_test[name]), text
