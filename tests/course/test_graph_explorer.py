"""The graph explorer reads the real graph and replays the real backward run, with either engine.

Every test runs on the kit's engine and, where PyTorch is installed, on PyTorch
(the ``torch`` parameter is skipped only when PyTorch is missing).
"""
import importlib
import math
import sys

import pytest

from kit_paths import ROOT
from torch_needed import import_torch
from graph_explorer import (
    GraphExplorer, show_graph, arrange, count_ops, draw, extract_graph, fold_chains, has_saved_tensors, layout, render_png,
    saved_tensors_freed, trace_backward,
)
from graph_explorer.draw import describe_step, format_grad
from graph_explorer.labels import columns, number


@pytest.fixture(params=["autograd_core", "torch"])
def torch(request):
    if request.param == "torch":
        return import_torch()
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


def test_leaves_are_accumulate_grad_nodes_with_their_name_and_data(torch):
    x, _, _, out = lesson_one(torch)
    leaf = extract_graph(out, names={"x": x}).nodes[-1]
    assert leaf.is_leaf and leaf.fn.variable is x
    assert (leaf.label, leaf.names, leaf.value.shape, leaf.value.values) == ("AccumulateGrad", ("x",), (2, 2), (1.0,) * 4)
    assert extract_graph(out).nodes[-1].names == ()


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


def test_layout_puts_every_edge_downwards_and_the_inputs_at_the_bottom(torch):
    (x1, x2, x3), y = three_inputs(torch)
    for names in ({"x1": x1, "x2": x2, "x3": x3}, None):
        graph = extract_graph(y, names=names)
        pos = layout(graph)
        assert all(pos[p][1] > pos[c][1] for p, c, _ in graph.edges)
        assert len(set(pos.values())) == len(pos)
        bottom = min(y for _, y in pos.values())
        assert all(pos[i][1] == bottom for i, n in enumerate(graph.nodes) if n.is_leaf)


def test_a_parameter_used_far_above_the_bottom_sits_just_below_its_user(torch):
    from graph_explorer.layout import NEAR_BOTTOM

    x1, x2, _, _, loss = micrograd_mlp(torch)
    graph = extract_graph(loss, names={"x1": x1, "x2": x2})
    pos = layout(graph)
    assert all(pos[p][1] > pos[c][1] for p, c, _ in graph.edges)
    bottom = min(y for _, y in pos.values())
    beside = 0
    for i, leaf in enumerate(graph.nodes):
        if not leaf.is_leaf:
            continue
        below_user = min(pos[p][1] for p, c, _ in graph.edges if c == i) - 1
        if leaf.names or below_user - bottom <= NEAR_BOTTOM:
            assert pos[i][1] == bottom, leaf.names  # the inputs, and the leaves whose users are near the bottom
        else:
            assert pos[i][1] == below_user
            beside += 1
    assert beside >= 10  # most of the 19 parameters: no long edges down to a crowded bottom row


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
    assert explorer.step() == "step 1/5: out · MeanBackward0 receives grad 1"
    assert explorer.step() == "step 2/5: MulBackward0 receives grad [[0.25, 0.25], [0.25, 0.25]]"  # a 2×2, as its rows
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
    # shown at its own size in JupyterLab: a big graph scrolls instead of shrinking its text
    assert output.outputs[-1]["metadata"] == {"image/png": {"unconfined": True}}


def test_snapshot_is_a_static_png(torch):
    pytest.importorskip("IPython")
    x, _, _, out = lesson_one(torch)
    explorer = GraphExplorer(out, names={"x": x})
    image = explorer.snapshot(3)
    assert image.data.startswith(b"\x89PNG")
    assert render_png(explorer.trace, 0).startswith(b"\x89PNG")


def test_table_lists_each_step_with_its_gradient(torch):
    x, y, z, out = lesson_one(torch)  # named here: the explorer finds them among its caller's variables
    lines = GraphExplorer(out).table().splitlines()
    assert lines[0].split() == ["1.", "out", "·", "MeanBackward0", "grad", "1"]
    # a 2×2 gradient as its two rows, as the boxes show it, not flattened into four numbers
    assert lines[1].startswith(" 2. z · MulBackward0 ") and lines[1].endswith("grad [[0.25, 0.25], [0.25, 0.25]]  (saved tensors freed)")
    assert lines[-1].split()[1:] == ["x", "·", "AccumulateGrad", "grad", "[[4.5,", "4.5],", "[4.5,", "4.5]]"]


def test_table_writes_each_gradient_with_its_shape(torch):
    a = torch.arange(12.0, requires_grad=True)
    m = a.reshape(3, 4) * torch.arange(12.0).reshape(3, 4)
    lines = GraphExplorer(m.sum(), names={"a": a, "m": m}).table().splitlines()
    assert lines[1].endswith("grad [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]  (saved tensors freed)")  # 3×4
    assert lines[2].endswith("grad [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]")  # the view's: 3×4 again
    assert lines[-1].endswith("grad [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]")  # the leaf's: 12 entries in one row
    c = torch.arange(20.0, requires_grad=True)
    lines = GraphExplorer((c * c).sum(), names={"c": c}).table().splitlines()
    assert lines[1].endswith("grad 20 entries all 1  (saved tensors freed)")
    assert lines[-1].endswith("grad 20 entries [0, 2, 4, 6, 8, 10, 12, …]")
    w = torch.ones(2, 3, 4, requires_grad=True)
    assert GraphExplorer((w * 2).sum(), names={"w": w}).table().splitlines()[-1].endswith("grad 2×3×4 all 2")


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
    leaves = sorted((pos[i][0], n.names[0]) for i, n in enumerate(graph.nodes) if n.is_leaf)
    assert [name for _, name in leaves] == ["x1", "x2", "x3"]
    graph = extract_graph(y, names={"x3": x3, "x1": x1, "x2": x2})
    pos = layout(graph)
    assert [name for _, name in sorted((pos[i][0], n.names[0]) for i, n in enumerate(graph.nodes) if n.is_leaf)] == \
        ["x3", "x1", "x2"]


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
    assert [s for tx, ty, s in texts if (tx, ty) == pos[add]] == [
        "AddBackward0\ndata [[3, 3],\n      [3, 3]]\ngrad [[4.5, 4.5],\n      [4.5, 4.5]]"]
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
    assert [n.label for n in view.graph.nodes] == ["MulBackward0 ×10", "AccumulateGrad"]
    assert view.members[0] == list(range(10))
    png = render_png(trace, len(trace.steps))
    height = int.from_bytes(png[20:24], "big")  # the PNG header's height field
    assert height < 500
    texts = [s for _, _, s in drawn_texts(draw(trace, len(trace.steps)))]
    # the chain's box: the output's data (1.5 * 2**10), and the gradients its first and last node received
    assert "MulBackward0 ×10\ndata 1536\ngrad 1 … 512" in texts and "1024" in texts
    assert "a · AccumulateGrad\ndata 1.5\ngrad 1024" in texts
    assert "MulBackward0 ×10\ndata 1536\n3/10 run\ngrad 1 … 4" in [s for _, _, s in drawn_texts(draw(trace, 3))]


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
    assert explorer.step() == "第 1/5 步：out · MeanBackward0 收到梯度 1"
    assert "梯度 [[4.5, 4.5], [4.5, 4.5]]" in explorer.table()
    ax = draw(explorer.trace, 5, language="zh")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["尚未执行", "正在执行", "已执行", "持有保存的张量",
                                                                  "保存的张量已释放"]
    with pytest.raises(ValueError, match="language"):
        GraphExplorer(out, language="fr")


def test_a_chinese_explorer_calls_a_scalar_leaf_a_scalar_in_chinese(torch):
    a, d = lesson_five(torch)
    explorer = GraphExplorer(d, names={"a": a}, language="zh")
    assert [s for _, _, s in drawn_texts(draw(explorer.trace, 0, language="zh")) if "AccumulateGrad" in s] == [
        "a · AccumulateGrad\n值 1.5"]
    assert [s for _, _, s in drawn_texts(draw(explorer.trace, 11, language="zh")) if "AccumulateGrad" in s] == [
        "a · AccumulateGrad\n值 1.5\n梯度 1024"]
    # the table's columns line up on screen, where a Chinese character takes two columns
    lines = explorer.table().splitlines()
    assert lines[-1].startswith("11. a · AccumulateGrad ") and lines[-1].endswith("梯度 1024")
    assert lines[-1].index("梯度") == lines[0].index("梯度")
    # a tensor the explorer knows only the shape of, and a scalar, in Chinese
    from graph_explorer.labels import value_lines
    from graph_explorer.values import Shown

    assert value_lines(Shown((2, 2), known=False), 20, "zh") == ["（2×2，未保留）"]
    assert value_lines(Shown((3, 4), (0.25,) * 12, 12, True), 20, "zh") == ["3×4 全为 0.25"]


def test_edge_labels_keep_clear_of_other_edges_and_of_each_other(torch):
    from matplotlib.patches import FancyArrowPatch

    from graph_explorer.draw import EDGE_TEXT

    _, y = three_inputs(torch)
    trace = trace_backward(y, gradient=torch.tensor([0.1, 0.2, 0.3]))
    ax = draw(trace, len(trace.steps))
    labels = [t.get_position() for t in ax.texts if t.get_color() == EDGE_TEXT]
    # the arrows as drawn (their curves flattened into lines), in the axes' coordinates
    lines = [[tuple(p) for polygon in arrow.get_path().to_polygons(closed_only=False) for p in polygon]
             for arrow in ax.patches if isinstance(arrow, FancyArrowPatch)]
    assert len(labels) == len(lines) == 17
    inches = ax.explorer_page.inches

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


# -- names and values in the boxes ------------------------------------------------------------------


def test_boxes_are_named_after_the_callers_variables_and_explicit_names_come_first(torch):
    x, y, z, out = lesson_one(torch)
    _hidden = z  # an underscore name (IPython's _, _3, ...) names nothing
    other = torch.ones(3, requires_grad=True) * 2  # a tensor of another graph names nothing here
    explorer = GraphExplorer(out, retain_graph=True)
    assert [n.names for n in explorer.graph.nodes] == [("out",), ("z",), (), ("y",), ("x",)]
    explorer = GraphExplorer(out, names={"input": x, "w": y}, retain_graph=True)
    assert [n.names for n in explorer.graph.nodes] == [("out",), ("z",), (), ("w",), ("input",)]
    assert [n.names for n in GraphExplorer(out, names={"x": x}, caller_names=False).graph.nodes] == [(), (), (), (), ("x",)]
    assert other.grad_fn is not None and _hidden is z


def test_a_list_of_tensors_names_each_one_by_its_index(torch):
    x = torch.tensor(2.0, requires_grad=True)
    powers = [x, x * x, x * x * x]
    total = powers[1] + powers[2]
    names = {n.names for n in GraphExplorer(total).graph.nodes}
    assert {("total",), ("powers[1]",), ("powers[2]",), ("x", "powers[0]")} <= names
    assert show_graph(total).data.startswith(b"\x89PNG")


def test_a_box_shows_the_value_that_a_name_or_a_saved_tensor_holds_and_else_the_shape(torch):
    x = torch.tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad=True)
    graph = GraphExplorer((torch.exp(x + 1) * 3).sum(), caller_names=False).graph
    by_name = {n.name: n.value for n in graph.nodes}
    assert by_name["SumBackward0"].values == (pytest.approx(float((torch.exp(x + 1) * 3).sum().detach())),)  # the output
    assert by_name["ExpBackward0"].values == pytest.approx(tuple(torch.exp(x + 1).detach().reshape(-1).tolist()))  # saved result
    assert by_name["AccumulateGrad"].values == (1.0, -2.0, 0.5, 4.0)  # the leaf itself
    add = by_name["AddBackward0"]  # x + 1: exp saves its result, not its input, and no variable holds it
    assert (add.known, add.shape) == (False, (2, 2))
    assert [n.value for n in extract_graph((x * 2).sum(), read_values=False).nodes] == [None, None, None]


def test_a_value_is_written_as_rows_or_as_its_shape_and_first_numbers(torch):
    from graph_explorer.labels import value_lines
    from graph_explorer.values import summarize

    def lines(t, width=20):
        return value_lines(summarize(t), width)

    assert lines(torch.tensor(4.5)) == ["4.5"]
    assert lines(torch.tensor([[1.0, 22.0], [333.0, 4.0]])) == ["[[  1, 22],", " [333,  4]]"]
    assert lines(torch.arange(3.0)) == ["[0, 1, 2]"]
    assert lines(torch.full((3, 4), 0.25)) == ["3×4 all 0.25"]
    assert lines(torch.arange(100.0).reshape(10, 10) / 3) == ["10×10 [0, 0.3333, …]"]
    assert lines(torch.tensor([-0.0, 1e-7, 123456.0]), 24) == ["[0, 1e-07, 1.235e+05]"]
    assert lines(torch.tensor([-0.0, 1e-7, 123456.0])) == ["3 entries [0, …]"]


# -- the labelled picture, drawn by a real browser ------------------------------------------------------
# The SVG the explorer makes is opened in Chromium, which lays out its text with its own fonts; the tests
# read what it drew (each box's lines, where the box and each line landed on the page) and keep a screenshot
# of each picture in artifacts/explorer/.

EXPLORER_ARTIFACTS = ROOT / "artifacts" / "explorer"
READ_BOXES = """() => [...document.querySelectorAll('g[id^="node-"]')].map(g => {
    const rect = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const texts = [...g.querySelectorAll('text')];
    return {box: rect(g.querySelector('path')), lines: texts.map(t => t.textContent.replace(/\u00a0/g, ' ')),
            spans: texts.map(rect)};
})"""


@pytest.fixture(scope="module")
def chromium():
    from browser_support import launch_chromium

    EXPLORER_ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield from launch_chromium("CI must draw the explorer's pictures in Chromium (.ci/run installs it, `make test` "
                               "Playwright)")


def in_chromium(chromium, svg: str, name: str):
    """The boxes Chromium drew for ``svg`` ([{"box", "lines", "spans"}], in the SVG's order) and its screenshot's PNG."""
    page = chromium.new_page(viewport={"width": 800, "height": 600})
    try:
        page.set_content(f"<!DOCTYPE html><html><body style='margin:0; background:white'>{svg}</body></html>")
        boxes = page.evaluate(READ_BOXES)
        png = page.screenshot(path=str(EXPLORER_ARTIFACTS / f"{name}.png"), full_page=True)
    finally:
        page.close()
    return boxes, png


def by_title(boxes) -> dict:
    """{first line: box} of the boxes whose first line no other box has."""
    titles = [box["lines"][0] for box in boxes]
    return {title: box for title, box in zip(titles, boxes) if titles.count(title) == 1}


def assert_boxes_apart_and_their_lines_inside(boxes):
    rects = [box["box"] for box in boxes]
    for i, (l1, t1, r1, b1) in enumerate(rects):
        for l2, t2, r2, b2 in rects[i + 1:]:
            assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, "two boxes overlap"
    for box in boxes:
        left, top, right, bottom = box["box"]
        for (x0, y0, x1, y1), line in zip(box["spans"], box["lines"]):
            assert left <= x0 and x1 <= right and top <= y0 and y1 <= bottom, f"{line!r} sticks out of its box"


def two_by_two(torch):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x + 2
    z = y * y * 3
    out = z.mean()
    return x, y, z, out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_chromium_draws_a_labelled_2x2_graph_with_names_data_and_gradients(chromium, torch, language):
    from graph_explorer import render_svg

    x, y, z, out = two_by_two(torch)  # named here: the explorer finds x, y, z and out among its caller's variables
    explorer = GraphExplorer(out, language=language)
    name = f"two-by-two-{language}-{torch.__name__.split('.')[0]}"
    drawn, png = in_chromium(chromium, render_svg(explorer.trace, len(explorer.steps), language), name)
    boxes = by_title(drawn)
    data, grad = ("data", "grad") if language == "en" else ("值", "梯度")
    # a matrix's second row under its first: the label's columns (a Chinese character takes two), a space, " ["
    pad_data, pad_grad = " " * (columns(data) + 2), " " * (columns(grad) + 2)
    assert boxes["out · MeanBackward0"]["lines"] == ["out · MeanBackward0", f"{data} 64.5", f"{grad} 1"]
    assert boxes["z · MulBackward0"]["lines"] == [
        "z · MulBackward0", f"{data} [[27,  48],", f"{pad_data}[75, 108]]", f"{grad} [[0.25, 0.25],", f"{pad_grad}[0.25, 0.25]]"]
    assert boxes["y · AddBackward0"]["lines"] == [
        "y · AddBackward0", f"{data} [[3, 4],", f"{pad_data}[5, 6]]", f"{grad} [[4.5, 6],", f"{pad_grad}[7.5, 9]]"]
    assert boxes["x · AccumulateGrad"]["lines"] == [
        "x · AccumulateGrad", f"{data} [[1, 2],", f"{pad_data}[3, 4]]", f"{grad} [[4.5, 6],", f"{pad_grad}[7.5, 9]]"]
    # y * y: no variable and no saved tensor holds it
    not_kept = "data (2×2, not kept)" if language == "en" else "值（2×2，未保留）"
    assert boxes["MulBackward0"]["lines"][:2] == ["MulBackward0", not_kept]
    assert len(drawn) == 5
    assert_boxes_apart_and_their_lines_inside(drawn)
    from browser_support import count_colour
    from graph_explorer.draw import CURRENT, DONE

    assert count_colour(png, DONE) > 5000 and count_colour(png, CURRENT) > 1000  # four boxes done, the last running


def micrograd_mlp(torch):
    """The graph of micrograd's lecture, in scalars: 2 inputs, 4 tanh neurons, 1 output neuron, a halved squared error."""
    generator = torch.Generator().manual_seed(0)

    def parameter():
        return (torch.rand((), generator=generator) * 2 - 1).requires_grad_()

    x1, x2 = torch.tensor(0.5, requires_grad=True), torch.tensor(-1.0, requires_grad=True)
    hidden = [torch.tanh(parameter() * x1 + parameter() * x2 + parameter()) for _ in range(4)]
    out = parameter()
    for h in hidden:
        out = out + parameter() * h
    loss = (out - 1.0) ** 2 / 2
    return x1, x2, hidden, out, loss


def test_chromium_draws_a_50_node_graph_readably(chromium, torch):
    from graph_explorer import render_svg

    x1, x2, hidden, out, loss = micrograd_mlp(torch)
    explorer = GraphExplorer(loss)
    assert len(explorer.graph.nodes) == 50
    drawn, png = in_chromium(chromium, render_svg(explorer.trace, len(explorer.steps)), f"fifty-nodes-{torch.__name__}")
    assert len(drawn) == 50
    boxes = by_title(drawn)
    titles = set(boxes)
    assert {"loss · DivBackward0", "out · AddBackward0", "x1 · AccumulateGrad", "x2 · AccumulateGrad",
            "hidden[0] · TanhBackward0", "hidden[3] · TanhBackward0"} <= titles
    assert boxes["x1 · AccumulateGrad"]["lines"][1:] == ["data 0.5", f"grad {number(x1.grad.item())}"]
    tanh = boxes["hidden[2] · TanhBackward0"]["lines"]
    assert tanh[1] == f"data {number(hidden[2].detach().item())}" and tanh[2].startswith("grad ")
    assert_boxes_apart_and_their_lines_inside(drawn)
    # readable at the page's own scale: a box's lines are at least 8 pixels apart, so the text is not shrunk
    spans = boxes["x1 · AccumulateGrad"]["spans"]
    assert spans[1][1] - spans[0][1] >= 8
    width = int.from_bytes(png[16:20], "big")
    assert width < 2600, "the picture of 50 nodes should fit a wide screen, or two"
