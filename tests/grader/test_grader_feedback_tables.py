"""A markdown table on a feedback page (ps1's table of tasks and points) laid out in Chromium: its cells
apart and ruled as JupyterLab shows them, not run together ("TaskTopic")."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from browser_support import launch_chromium


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium("CI must run the feedback page's layout test (.ci/run installs Chromium)")


def feedback_page(nb) -> str:
    from traitlets.config import Config

    from grader.feedback import TEMPLATES, feedback_exporter, nbgrader_templates

    css = Path(nbgrader_templates()).parent / "static" / "node_modules" / "bootstrap" / "dist" / "css"
    exporter = feedback_exporter()(config=Config({"HTMLExporter": {
        "template_name": "kit_feedback", "extra_template_basedirs": [str(TEMPLATES), nbgrader_templates()],
        "extra_template_paths": [str(css)]}}))
    html, _ = exporter.from_notebook_node(nb, resources={"nbgrader": {
        "notebook": "nb", "score": 1, "max_score": 1, "pending": 0, "late_penalty": 0}})
    return html


def test_a_markdown_tables_cells_stand_apart_on_the_feedback_page(browser, tmp_path):
    table = nbformat.v4.new_markdown_cell("| Task | Topic | Points |\n|---|---|---|\n| 1 | a second derivative | 2 + 2 |\n")
    test = nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {"grade": True, "grade_id": "t1",
                                                                             "points": 1, "score": 1}})
    page = tmp_path / "feedback.html"
    page.write_text(feedback_page(nbformat.v4.new_notebook(cells=[table, test])), encoding="utf-8")
    tab = browser.new_page()
    tab.goto(page.as_uri())
    task, topic = (tab.locator("div.text_cell_render th", has_text=name).first.bounding_box() for name in ("Task", "Topic"))
    cell = tab.locator("div.text_cell_render td", has_text="a second derivative").first
    padding, border = cell.evaluate("c => [parseFloat(getComputedStyle(c).paddingLeft), getComputedStyle(c).borderLeftStyle]")
    words = tab.locator("div.text_cell_render th", has_text="Topic").first.evaluate(
        "th => { const r = document.createRange(); r.selectNodeContents(th); return r.getBoundingClientRect().left; }")
    tab.close()
    assert topic["x"] >= task["x"] + task["width"] - 1  # (the cells side by side)
    assert words - (task["x"] + task["width"]) >= 8, (task, topic, words)  # room between "Task" and "Topic"
    assert padding >= 8 and border == "solid", (padding, border)
