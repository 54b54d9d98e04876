"""The graph explorer reads the real graph and replays the real backward run, with either engine.

Every test runs on the kit's engine and, where PyTorch is installed, on PyTorch
(the ``torch`` parameter is skipped only when PyTorch is missing).
"""
import importlib
import math
import sys

import pytest

from conftest import ROOT
from graph_explorer import (
    GraphExplorer, arrange, count_ops, draw, extract_graph, fold_chains, has_saved_tensors, layout, render_png,
    saved_tensors_freed, trace_backward,
)
from graph_explorer.draw import describe_step, format_grad


@pytest.fixture(params=["autograd_core", "torch"])
def torch(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return importlib.import_module(request.param)


def lesson_one(torch):
    x = torch.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return x, y, z, out


def three_inputs(torch):
    xs = [torch.tensor(v, requires_grad=True) for v in (1.0, 2.0, 3.0)]
    x1, x2, x3 = xs
    y = torch.zeros(3)
    y[0] = x1 * x2 * x3
    y[1] = x1 + x2 + x3
    y[2] = x1 + x2 * x3
    return xs, y


# -- reading the graph -----------------------------------------------------------------------


def test_nodes_are_the_grad_fns_named_as_the_engine_names_them(torch):
    x, y, z, out = lesson_one(torch)
    graph = extract_graph(out, names={"x": x})
    assert [n.name for n in graph.nodes] == ["MeanBackward0", "MulBackward0", "MulBackward0", "AddBackward0",
                                              "AccumulateGrad"]
    assert graph.nodes[0].fn is out.grad_fn and graph.nodes[1].fn is z.grad_fn
    assert graph.node_of(y.grad_fn).name == "AddBackward0"


def test_edges_follow_next_functions(torch):
    x, y, z, out = lesson_one(torch)
    graph = extract_graph(out)
    for parent, child, position in graph.edges:
        assert graph.nodes[parent].fn.next_functions[position][0] is graph.nodes[child].fn


def test_an_input_used_twice_gives_two_edges_to_one_node(torch):
    x = torch.arange(4.0, requires_grad=True)
    graph = extract_graph((x * x).sum())
    leaves = [n for n in graph.nodes if n.is_leaf]
    assert len(leaves) == 1
    assert [e[:2] for e in graph.edges].count((1, 2)) == 2


def test_leaves_are_accumulate_grad_nodes_labelled_with_name_and_shape(torch):
    x, _, _, out = lesson_one(torch)
    leaf = extract_graph(out, names={"x": x}).nodes[-1]
    assert leaf.is_leaf and leaf.fn.variable is x
    assert leaf.label == "AccumulateGrad\nx (2×2)"
    assert extract_graph(out).nodes[-1].label == "AccumulateGrad\n(2×2)"


def test_a_tensor_without_history_has_no_graph(torch):
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="no grad_fn"):
        extract_graph(x)
    assert count_ops(x) == 0


def test_count_ops_counts_the_operations_that_ran(torch):
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        return b if b.sum() > 0 else 100 * b

    assert count_ops(f(torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True))) == 8  # a*2 and 7 doublings
    assert count_ops(f(torch.tensor(-1.5, requires_grad=True))) == 11  # a*2, 9 doublings, 100*b


def test_a_long_chain_does_not_hit_the_recursion_limit(torch):
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(sys.getrecursionlimit() + 200):
        y = y * 1.0
    graph = extract_graph(y)
    assert len(graph.nodes) == sys.getrecursionlimit() + 201
    assert len(layout(graph)) == len(graph.nodes)


# -- layout --------------------------------------------------------------------------------


def test_layout_puts_every_edge_downwards_and_leaves_at_the_bottom(torch):
    _, y = three_inputs(torch)
    graph = extract_graph(y)
    pos = layout(graph)
    assert all(pos[p][1] > pos[c][1] for p, c, _ in graph.edges)
    bottom = min(y for _, y in pos.values())
    assert all(pos[i][1] == bottom for i, n in enumerate(graph.nodes) if n.is_leaf)
    assert len(set(pos.values())) == len(pos)


# -- saved tensors ---------------------------------------------------------------------------


def test_a_sum_saves_no_tensors_a_product_does(torch):
    x = torch.arange(4.0, requires_grad=True)
    assert not has_saved_tensors(x.sum().grad_fn)
    assert has_saved_tensors((x * x).grad_fn)


def test_backward_frees_saved_tensors_unless_retained(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = (x * x).sum()
    mul = y.grad_fn.next_functions[0][0]
    y.backward(retain_graph=True)
    assert not saved_tensors_freed(mul) and has_saved_tensors(mul)
    y.backward()
    assert saved_tensors_freed(mul) and has_saved_tensors(mul)


# -- tracing a real backward run ------------------------------------------------------------------


def test_steps_follow_the_order_backward_ran_the_nodes(torch):
    # an independent witness: tensor hooks fire as backward reaches each tensor's node
    x, y, z, out = lesson_one(torch)
    fired = []
    for name, t in [("y", y), ("z", z), ("x", x)]:
        t.register_hook(lambda g, name=name: fired.append(name))
    trace = trace_backward(out, names={"x": x})
    node_of = {"y": y.grad_fn, "z": z.grad_fn, "x": trace.graph.nodes[-1].fn}
    order = [trace.graph.nodes[s.node].fn for s in trace.steps]
    assert [n for n in fired] == sorted(fired, key=lambda name: order.index(node_of[name]))
    assert trace.order() == ["MeanBackward0", "MulBackward0", "MulBackward0", "AddBackward0", "AccumulateGrad"]


def test_every_node_runs_once_and_the_leaves_get_their_gradient_once(torch):
    x, _, _, out = lesson_one(torch)
    trace = trace_backward(out)
    assert sorted(s.node for s in trace.steps) == list(range(len(trace.graph.nodes)))
    assert torch.equal(x.grad, torch.full((2, 2), 4.5))  # one backward, not two


def test_gradients_shown_are_the_real_ones(torch):
    x, y, z, out = lesson_one(torch)
    seen = {}
    y.register_hook(lambda g: seen.setdefault("y", g.clone()))
    trace = trace_backward(out)
    assert torch.equal(trace.grad_of(trace.graph.index[id(y.grad_fn)]), seen["y"])
    assert torch.equal(trace.grad_of(len(trace.graph.nodes) - 1), x.grad)
    assert float(trace.steps[0].grads[0]) == 1.0  # d out / d out


def test_the_gradient_argument_reaches_the_leaves_as_a_vector_jacobian_product(torch):
    (x1, x2, x3), y = three_inputs(torch)
    trace = trace_backward(y, gradient=torch.tensor([0.1, 0.2, 0.3]))
    leaves = {id(n.fn.variable): float(trace.grad_of(i)) for i, n in enumerate(trace.graph.nodes) if n.is_leaf}
    assert all(math.isclose(leaves[id(v)], want, rel_tol=1e-6) for v, want in [(x1, 1.1), (x2, 1.4), (x3, 1.0)])
    assert [leaves[id(v)] for v in (x1, x2, x3)] == [float(v.grad) for v in (x1, x2, x3)]


def test_saved_tensors_are_freed_as_their_node_runs(torch):
    x, _, _, out = lesson_one(torch)
    trace = trace_backward(out)
    holders = {i for i, n in enumerate(trace.graph.nodes) if n.saves_tensors}
    assert holders == {1, 2}  # the two multiplications
    for k in range(len(trace.steps) + 1):
        ran = {s.node for s in trace.steps[:k]}
        assert trace.freed_at(k) == frozenset(holders & ran)
    assert trace.freed_after == frozenset(holders)


def test_with_retain_graph_nothing_is_freed_and_backward_can_run_again(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = (x * x).sum()
    trace = trace_backward(y, retain_graph=True)
    assert trace.freed_after == frozenset()
    y.backward()
    assert torch.equal(x.grad, 4 * x.detach())


def test_the_recording_hooks_are_removed_afterwards(torch):
    x = torch.arange(4.0, requires_grad=True)
    y = (x * x).sum()
    trace = trace_backward(y, retain_graph=True)
    n = len(trace.steps)
    y.backward()
    assert len(trace.steps) == n


# -- the explorer ------------------------------------------------------------------------------------


def test_step_and_reset_walk_through_the_recorded_run(torch):
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x})
    assert explorer.position == 0
    assert explorer.step() == "step 1/5: MeanBackward0 receives grad 1"
    for _ in range(10):
        explorer.step()
    assert explorer.position == 5
    explorer.reset()
    assert explorer.position == 0


def test_the_widget_follows_buttons_and_slider(torch):
    pytest.importorskip("ipywidgets")
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x})
    box = explorer.widget()
    (reset, step, slider), output = box.children[0].children, box.children[1]
    step.click()
    step.click()
    assert explorer.position == 2 and slider.value == 2
    slider.value = 4
    assert explorer.position == 4
    reset.click()
    assert explorer.position == 0 and slider.value == 0 and slider.max == 5
    assert output.outputs and "image/png" in output.outputs[-1]["data"]


def test_snapshot_is_a_static_png(torch):
    pytest.importorskip("IPython")
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x})
    image = explorer.snapshot(3)
    assert image.data.startswith(b"\x89PNG")
    assert render_png(explorer.trace, 0).startswith(b"\x89PNG")


def test_table_lists_each_step_with_its_gradient(torch):
    x, _, _, out = lesson_one(torch)
    lines = GraphExplorer(out, names={"x": x}).table().splitlines()
    assert lines[0].split() == ["1.", "MeanBackward0", "grad", "1"]
    assert lines[1].endswith("grad [0.25, 0.25, 0.25, 0.25]  (saved tensors freed)")
    assert lines[-1].split()[1:] == ["AccumulateGrad", "x", "(2×2)", "grad", "[4.5,", "4.5,", "4.5,", "4.5]"]


def test_describe_and_format_keep_gradients_short(torch):
    assert format_grad(torch.tensor(4.5)) == "4.5"
    assert format_grad(torch.arange(6.0)) == "[0, 1, 2, 3, …]"
    assert format_grad(None) == "None"
    x, _, _, out = lesson_one(torch)
    assert describe_step(trace_backward(out), 0) == "before backward: 5 nodes, 5 steps to run"


def test_the_engine_imports_nothing_from_the_explorer_or_the_notebooks():
    for path in (ROOT / "autograd_core").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert "graph_explorer" not in source and "notebooks" not in source, path


def test_named_leaves_are_drawn_in_the_order_they_were_named(torch):
    (x1, x2, x3), y = three_inputs(torch)
    graph = extract_graph(y, names={"x1": x1, "x2": x2, "x3": x3})
    pos = layout(graph)
    leaves = sorted((pos[i][0], n.label.split("\n")[1].split()[0]) for i, n in enumerate(graph.nodes) if n.is_leaf)
    assert [name for _, name in leaves] == ["x1", "x2", "x3"]


# -- what the picture says: gradients on the edges they flow along ------------------------------------


def lesson_five(torch):
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        return b if b.sum() > 0 else 100 * b

    a = torch.tensor(1.5, requires_grad=True)
    return a, f(a)


def drawn_texts(ax):
    """Every text in the picture with its place: (x, y, string)."""
    return [(t.get_position()[0], t.get_position()[1], t.get_text()) for t in ax.texts]


def test_each_edge_carries_what_its_parent_sent_to_that_input(torch):
    x, y, z, out = lesson_one(torch)
    trace = trace_backward(out, names={"x": x})
    graph = trace.graph
    sent = {(graph.nodes[p].name, graph.nodes[c].name, pos): trace.edge_grad(p, pos) for p, c, pos in graph.edges}
    quarter = torch.full((2, 2), 0.25)
    assert torch.equal(sent["MeanBackward0", "MulBackward0", 0], quarter)           # d mean / d z: 1/4, not 1
    assert torch.equal(sent["MulBackward0", "AddBackward0", 0], 0.75 * y.detach())  # each use of y in y * y
    assert torch.equal(sent["MulBackward0", "AddBackward0", 1], 0.75 * y.detach())
    assert torch.equal(sent["AddBackward0", "AccumulateGrad", 0], x.grad)


@pytest.mark.parametrize("example", ["lesson one", "three inputs"])
def test_what_a_node_received_is_the_sum_of_its_incoming_edges(torch, example):
    if example == "lesson one":
        x, _, _, out = lesson_one(torch)
        trace, leaves = trace_backward(out), [x]
    else:
        leaves, y = three_inputs(torch)
        trace = trace_backward(y, gradient=torch.tensor([0.1, 0.2, 0.3]))
    graph = trace.graph
    for c in range(1, len(graph.nodes)):
        incoming = [trace.edge_grad(p, pos) for p, child, pos in graph.edges if child == c]
        total = incoming[0]
        for g in incoming[1:]:
            total = total + g
        assert torch.allclose(total, trace.grad_of(c)), graph.nodes[c].name
    received = {id(n.fn.variable): trace.grad_of(i) for i, n in enumerate(graph.nodes) if n.is_leaf}
    assert all(torch.equal(received[id(leaf)], leaf.grad) for leaf in leaves)


def test_the_picture_writes_edge_gradients_on_edges_and_received_gradients_in_boxes(torch):
    x, _, _, out = lesson_one(torch)
    trace = trace_backward(out, names={"x": x})
    ax = draw(trace, len(trace.steps))
    pos = layout(trace.graph)
    texts = drawn_texts(ax)
    mean_y, first_mul_y = pos[0][1], pos[1][1]
    between = [s for _, ty, s in texts if first_mul_y < ty < mean_y]
    assert between == ["[0.25 ×4]"]  # on the Mean -> Mul edge: a quarter flows, not 1
    add = trace.graph.index[id(out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0])]
    assert [s for tx, ty, s in texts if (tx, ty) == pos[add]] == ["AddBackward0\nreceived [4.5 ×4]"]
    above_add = [s for _, ty, s in texts if pos[add][1] < ty < pos[2][1]]
    assert above_add == ["[2.25 ×4]", "[2.25 ×4]"]  # two uses of y, each carrying 3/4 * 3


def test_edge_labels_appear_once_their_parent_has_run(torch):
    x, _, _, out = lesson_one(torch)
    trace = trace_backward(out, names={"x": x})
    labels = [s for _, _, s in drawn_texts(draw(trace, 1)) if s.startswith("[")]
    assert labels == ["[0.25 ×4]"]
    assert not [s for _, _, s in drawn_texts(draw(trace, 0)) if s.startswith("[")]


def test_a_long_chain_of_one_operation_is_drawn_as_one_box(torch):
    a, d = lesson_five(torch)
    trace = trace_backward(d, names={"a": a})
    view = fold_chains(trace.graph)
    assert [n.label for n in view.graph.nodes] == ["MulBackward0 ×10", "AccumulateGrad\na (scalar)"]
    assert view.members[0] == list(range(10))
    png = render_png(trace, len(trace.steps))
    height = int.from_bytes(png[20:24], "big")  # the PNG header's height field
    assert height < 500
    texts = [s for _, _, s in drawn_texts(draw(trace, len(trace.steps)))]
    assert "MulBackward0 ×10\nreceived 1 … 512" in texts and "1024" in texts


def test_short_runs_and_branches_are_not_folded(torch):
    x, _, _, out = lesson_one(torch)
    assert len(fold_chains(extract_graph(out)).graph.nodes) == 5  # two MulBackward0 in a row: drawn as two


def test_edges_are_routed_around_boxes_not_through_them(torch):
    _, y = three_inputs(torch)
    graph = extract_graph(y)
    arrangement = arrange(graph)
    pos = arrangement.positions
    for e, (p, c, _) in enumerate(graph.edges):
        route = arrangement.routes[e]
        assert route[0] == pos[p] and route[-1] == pos[c]
        assert all(y1 - y0 == -1 for (_, y0), (_, y1) in zip(route, route[1:]))  # one layer per segment
        for point in route[1:-1]:  # every waypoint keeps clear of the boxes in its layer
            assert all(abs(point[0] - bx) >= 0.6 for i, (bx, by) in pos.items() if by == point[1])


def test_step_is_disabled_at_the_last_step_and_reset_at_the_first(torch):
    pytest.importorskip("ipywidgets")
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x})
    reset, step, _ = explorer.widget().children[0].children
    assert reset.disabled and not step.disabled
    for _ in range(len(explorer.steps)):
        step.click()
    assert step.disabled and not reset.disabled
    reset.click()
    assert not step.disabled


def test_the_explorer_speaks_chinese_in_the_chinese_lessons(torch):
    pytest.importorskip("ipywidgets")
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x}, language="zh")
    reset, step, slider = explorer.widget().children[0].children
    assert (step.description, reset.description, slider.description) == ("下一步", "重置", "步骤")
    assert explorer.step() == "第 1/5 步：MeanBackward0 收到梯度 1"
    assert "梯度 [4.5, 4.5, 4.5, 4.5]" in explorer.table()
    ax = draw(explorer.trace, 5, language="zh")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["尚未执行", "正在执行", "已执行", "持有保存的张量",
                                                                  "保存的张量已释放"]
    with pytest.raises(ValueError, match="language"):
        GraphExplorer(out, language="fr")


def test_a_chinese_explorer_calls_a_scalar_leaf_a_scalar_in_chinese(torch):
    a, d = lesson_five(torch)
    explorer = GraphExplorer(d, names={"a": a}, language="zh")
    assert explorer.graph.nodes[-1].label == "AccumulateGrad\na (标量)"
    assert [s for _, _, s in drawn_texts(draw(explorer.trace, 0, language="zh")) if "AccumulateGrad" in s] == [
        "AccumulateGrad\na (标量)"]
    # the table's columns line up on screen, where a Chinese character takes two columns
    lines = explorer.table().splitlines()
    assert lines[-1].startswith("11. AccumulateGrad a (标量) ") and lines[-1].endswith("梯度 1024")
    assert lines[-1].index("梯度") + 2 == lines[0].index("梯度")  # two characters of the label take four columns
    a, d = lesson_five(torch)
    assert trace_backward(d, names={"a": a}, language="zh").graph.nodes[-1].label.endswith("(标量)")


def test_edge_labels_keep_clear_of_other_edges_and_of_each_other(torch):
    from graph_explorer.draw import EDGE_TEXT, X_INCH, Y_INCH, _along

    _, y = three_inputs(torch)
    trace = trace_backward(y, gradient=torch.tensor([0.1, 0.2, 0.3]))
    ax = draw(trace, len(trace.steps))
    labels = [t.get_position() for t in ax.texts if t.get_color() == EDGE_TEXT]
    arrangement = arrange(fold_chains(trace.graph).graph)
    lines = [_along([(r[0][0], r[0][1] - 0.2)] + r[1:-1] + [(r[-1][0], r[-1][1] + 0.2)]) for r in arrangement.routes]
    assert len(labels) == len(lines) == 17

    def inches(p):
        return p[0] * X_INCH, p[1] * Y_INCH

    def distance(p, a, b):
        (px, py), (ax_, ay), (bx, by) = inches(p), inches(a), inches(b)
        dx, dy = bx - ax_, by - ay
        t = max(0.0, min(1.0, ((px - ax_) * dx + (py - ay) * dy) / ((dx * dx + dy * dy) or 1.0)))
        return math.hypot(px - ax_ - t * dx, py - ay - t * dy)

    for label in labels:
        own = min(range(len(lines)), key=lambda e: min(distance(label, a, b) for a, b in zip(lines[e], lines[e][1:])))
        others = [distance(label, a, b) for e, line in enumerate(lines) if e != own for a, b in zip(line, line[1:])]
        assert min(others) > 0.2, "a label sits on another edge"
        assert all(math.dist(inches(label), inches(other)) > 0.4 for other in labels if other is not label)


def test_without_a_chinese_font_figures_draw_with_one_note_and_no_glyph_warnings(monkeypatch, capsys):
    import io
    import warnings as warnings_module

    from matplotlib.figure import Figure

    from graph_explorer import fonts

    monkeypatch.setattr(fonts, "find_chinese_font", lambda: None)
    monkeypatch.setattr(fonts, "_chosen", [])
    monkeypatch.setattr(warnings_module, "filters", list(warnings_module.filters))  # undo the filter afterwards
    assert fonts.use_chinese_font() is None and fonts.use_chinese_font() is None
    assert capsys.readouterr().out.count("no font with Chinese glyphs") == 1
    figure = Figure()
    figure.add_subplot().set_title("反向传播")
    with warnings_module.catch_warnings(record=True) as caught:
        figure.savefig(io.BytesIO(), format="png")
    assert not [w for w in caught if "missing from font" in str(w.message)]


def test_a_chinese_font_is_used_after_the_default_font(monkeypatch):
    import matplotlib

    from graph_explorer import fonts

    monkeypatch.setattr(fonts, "find_chinese_font", lambda: "WenQuanYi Micro Hei")
    monkeypatch.setattr(fonts, "_chosen", [])
    with matplotlib.rc_context({"font.family": ["sans-serif"]}):  # as on a fresh start
        assert fonts.use_chinese_font() == "WenQuanYi Micro Hei"
        fonts.use_chinese_font()
        # Latin text keeps the default font; only glyphs it lacks come from the Chinese one
        assert matplotlib.rcParams["font.family"] == ["sans-serif", "WenQuanYi Micro Hei"]
