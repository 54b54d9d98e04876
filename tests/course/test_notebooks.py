"""The course notebooks: one source per lesson, two languages, run top to bottom, showing the documents' results.

Every notebook is executed once per language with the kit's engine and once
more with its engine line switched to ``import torch`` (where PyTorch is
installed; CI installs it). The executions run concurrently in module-scoped
fixtures, and the tests below only read their outputs; a fixture executes only the
lessons that the selected tests read (``-k 05_control`` runs lesson 5's four notebooks).
"""
import asyncio
import importlib.util
import io
import json
import os
import re
import tokenize

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from kit_paths import ROOT
from torch_needed import import_torch

NOTEBOOKS = ROOT / "notebooks"
# notebooks/build.py, loaded under its own name (other folders have a build.py too)
_spec = importlib.util.spec_from_file_location("course_build", NOTEBOOKS / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

LESSONS = [p.stem for p in build.lessons()]
LANGUAGES = build.LANGUAGES
RUNS = [(lesson, lang) for lesson in LESSONS for lang in LANGUAGES]
RUN_IDS = [f"{lesson}-{lang}" for lesson, lang in RUNS]
CELL_TIMEOUT = 120
#: How long nbclient waits for a cell's last outputs after the kernel said it finished (its default, 4 s,
#: drops them on a loaded machine: the figure audit's last line went missing once in a CI run)
IOPUB_TIMEOUT = 60
PARALLEL = 3  # kernels at a time; each is a separate process
#: Each kernel's environment: PyTorch computes on one thread. Three kernels already share two cores, and
#: PyTorch's idle threads spin: a 300-step training of lesson 12's network took 8.1 s with two threads
#: and 0.6 s with one, on this loaded machine. The results are the same.
KERNEL_ENV = {**os.environ, "OMP_NUM_THREADS": "1"}

FREED = (
    "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)

# What a student must see in each lesson: the results of the two documents, printed exactly
# (a dict where the words differ between the English and the Chinese notebook).
KEY_RESULTS = {
    "01_recording_history": [
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)",
        "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)\n<AddBackward0 object at 0x",
        "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>)\ntensor(27., grad_fn=<MeanBackward0>)",
        "None True\n<AddBackward0 object at 0x",
        "False\nTrue\n<SumBackward0 object at 0x",
        "tensor(67.5000, grad_fn=<SumBackward0>)",
        "False True\nFalse True None\n",  # computed without tracking: still a leaf
        "Does `u + v` require gradients?: False\nDoes `u + w` require gradients?: True",  # the Gentle Introduction's rule
    ],
    "02_backward_and_grad": [
        "None\ntensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])",
        "None\nUserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being accessed\n"
        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])",  # retain_grad(): y's gradient, 1.5 * 3
        "[4.5000, 4.5000]], dtype=torch.float64)\nTrue",
        "tensor(28., grad_fn=<MulBackward0>)",
        "tensor([ 0.,  4.,  8., 12.])\ntensor([True, True, True, True])",
        {"en": "central difference is best near h = 1e-05", "zh": "中心差分在 h = 1e-05 附近最准确"},
        "tensor([1., 1., 1., 1.])",  # d2l's x.sum() after zero_()
        {"en": "after pass 3: tensor([6., 6., 6., 6.])\nafter zero_(): tensor([0., 0., 0., 0.])\n"
               "one more pass: tensor([2., 2., 2., 2.])",
         "zh": "第 3 次反向传播后: tensor([6., 6., 6., 6.])\nzero_() 之后: tensor([0., 0., 0., 0.])\n"
               "再反向传播一次: tensor([2., 2., 2., 2.])"},
    ],
    "03_nonscalar_outputs": [
        "RuntimeError: grad can be implicitly created only for scalar outputs",
        "tensor([0., 2., 4., 6.])\ntensor([0., 2., 4., 6.])",
        "tensor([1., 2., 3.]) False\nUserWarning: Converting a tensor with requires_grad=True to a scalar",
        "tensor([6., 6., 7.], grad_fn=<CopySlices>)",
        "tensor(1.1000) tensor(1.4000) tensor(1.)",
        "tensor([[6., 3., 2.],\n        [1., 1., 1.],\n        [1., 3., 2.]])",
        # torch.autograd.functional: the same J in one call, .grad untouched; the Hessian of x1 * x2 * x3
        "tensor([[6., 3., 2.],\n        [1., 1., 1.],\n        [1., 3., 2.]])\nTrue tensor(1.1000)\n"
        "tensor([[0., 3., 2.],\n        [3., 0., 1.],\n        [2., 1., 0.]])\n",
        "tensor([1.1000, 1.4000, 1.0000])\nTrue",
        "tensor([True, True])\ntensor([True, True])",  # the Gentle Introduction's Q = 3a^3 - b^2
        "tensor([ 256., -512., 1024.], grad_fn=<MulBackward0>)\ntensor([5.1200e+01, 5.1200e+02, 5.1200e-02])\nTrue",
    ],
    "04_stopping_gradients": [
        "tensor([0., 1., 4., 9.])\ntensor([True, True, True, True])\nFalse None",
        "tensor([ 0.,  3., 12., 27.])\ntensor([True, True, True, True])",
        "tensor([0., 2.], grad_fn=<MvBackward0>)\nFalse\ntensor([0., 2.]) False None\nTrue",
        "training=True: requires_grad=True, grad_fn=<MvBackward0 object at 0x",
        "tensor([100.,   1.,   2.,   3.], grad_fn=<MulBackward0>)\nTrue True False",
        "0\n1\nRuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of",  # the version counter, before lesson 9 relies on it
        "\nHint: enable anomaly detection to find the operation that failed to compute its gradient",
        "tensor([20., 40.]) 0\nRuntimeError: one of the variables needed for gradient computation has been modified by an "
        "inplace operation\n",  # .data hides a change from the version counter; no_grad does not
        "training=False: requires_grad=False, grad_fn=None",
        # an in-place change through a view: the base gets CopySlices, the view is rebased, one version counter
        "tensor([1., 2., 3.], grad_fn=<CloneBackward0>) tensor(1., grad_fn=<SelectBackward0>) 0\n"
        "tensor([2., 2., 3.], grad_fn=<CopySlices>) tensor(2., grad_fn=<AsStridedBackward0>) 1 1\n"
        "True CloneBackward0\ntensor([8., 4., 6.])\n",
        "1 1\nRuntimeError: one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]], which is output 0 of torch::autograd::CopySlices, is at version 1; "
        "expected version 0 instead.\n",
    ],
    "05_control_flow": [
        "tensor(1536., grad_fn=<MulBackward0>) tensor(1024.)\ntensor(True)",
        "tensor([[ 256.,  512.],\n        [ 768., 1024.]], grad_fn=<MulBackward0>)\n"
        "tensor([[256., 256.],\n        [256., 256.]])\ntensor([[True, True],\n        [True, True]])",
        "RuntimeError: grad can be implicitly created only for scalar outputs",
        "tensor([[102400.],\n        [102400.]])\nTrue",  # the study notes printed 1024 here
        "20 tensor([2.7183, 0.1353, 1.6487], dtype=torch.float64)\nTrue",
        {"en": "doublings  = 7 (in the while loop, after b = a * 2)\nbranch     = c = b\nops in graph of d = 8",
         "zh": "翻倍次数   = 7（while 循环中，在 b = a * 2 之后）\n分支       = c = b\nd 的计算图中的运算个数 = 8"},
        {"en": "branch     = c = 100 * b\nops in graph of d = 21", "zh": "分支       = c = 100 * b\nd 的计算图中的运算个数 = 21"},
        "a.grad == d / a: [[True, True], [True, True]]",
    ],
    "06_graph_lifetime": [
        "tensor([2., 2., 2., 2.])",
        FREED,
        {"en": "x.sum()  SumBackward0   saves tensors: False\nx * x    MulBackward0   saves tensors: True",
         "zh": "x.sum()  SumBackward0   保存了张量: False\nx * x    MulBackward0   保存了张量: True"},
        "True True\nTrue\n",  # _saved_self and _saved_other are x itself; exp saves its result
        {"en": "after backward, saved tensors of x * x freed: True\nRuntimeError: Trying to backward through the graph a "
               "second time (or directly access saved tensors after they have already been freed)\n<SumBackward0 object at 0x",
         "zh": "反向传播之后 x * x 保存的张量已被释放: True\nRuntimeError: Trying to backward through the graph a "
               "second time (or directly access saved tensors after they have already been freed)\n<SumBackward0 object at 0x"},
        "((<MulBackward0 object at 0x",  # the nodes outlive backward
        {"en": "freed after the first pass: False\nfreed after the second pass: True\n"
               "tensor([ 0.,  4.,  8., 12.])\ntensor([True, True, True, True])",
         "zh": "第一次反向传播后已释放: False\n第二次反向传播后已释放: True\n"
               "tensor([ 0.,  4.,  8., 12.])\ntensor([True, True, True, True])"},
        {"en": "saved:     tensor([1., 2., 3.], requires_grad=True)\nsaved:     tensor([1., 2., 3.], requires_grad=True)\n"
               "backward:\nread back: tensor([1., 2., 3.], requires_grad=True)\n"
               "read back: tensor([1., 2., 3.], requires_grad=True)\ntensor([2., 4., 6.])",
         "zh": "保存: tensor([1., 2., 3.], requires_grad=True)\n保存: tensor([1., 2., 3.], requires_grad=True)\n"
               "反向传播:\n读回: tensor([1., 2., 3.], requires_grad=True)\n"
               "读回: tensor([1., 2., 3.], requires_grad=True)\ntensor([2., 4., 6.])"},
    ],
    "07_higher_derivatives": [
        "tensor(6.7500, grad_fn=<MulBackward0>)\ntensor(9.)",
        {"en": "first derivative is cos: True\nsecond derivative is -sin: True\n<SinBackward0 object at 0x",
         "zh": "一阶导数等于 cos: True\n二阶导数等于 -sin: True\n<SinBackward0 object at 0x"},
        {"en": "forward  largest error: 5.00e-03\ncentral  largest error: 1.67e-05\nslipped  largest error: 1.00e+00",
         "zh": "前向差分     最大误差: 5.00e-03\n中心差分     最大误差: 1.67e-05\n写错公式     最大误差: 1.00e+00"},
        {"en": "E solves Kepler's equation: True\nautograd's dE/dM = 1 / (1 - e cos E): True",
         "zh": "E 满足开普勒方程: True\n自动微分的 dE/dM = 1 / (1 - e cos E): True"},
    ],
    "08_under_the_hood": [
        # the explorer's table names each node's tensor as the notebook does (out, z, y, x), a 2×2 gradient as its rows
        {"en": " 1. out · MeanBackward0          grad 1\n 2. z · MulBackward0             grad [[0.25, 0.25], [0.25, 0.25]]",
         "zh": " 1. out · MeanBackward0          梯度 1\n 2. z · MulBackward0             梯度 [[0.25, 0.25], [0.25, 0.25]]"},
        {"en": "(saved tensors freed)", "zh": "（保存的张量已释放）"},
        {"en": "x · AccumulateGrad           grad [[4.5, 4.5], [4.5, 4.5]]\ntensor([[4.5000, 4.5000],",
         "zh": "x · AccumulateGrad           梯度 [[4.5, 4.5], [4.5, 4.5]]\ntensor([[4.5000, 4.5000],"},
        {"en": "x1 · AccumulateGrad          grad 1.1\n", "zh": "x1 · AccumulateGrad          梯度 1.1\n"},
        {"en": "x2 · AccumulateGrad          grad 1.4\n", "zh": "x2 · AccumulateGrad          梯度 1.4\n"},
        {"en": "x3 · AccumulateGrad          grad 1\n", "zh": "x3 · AccumulateGrad          梯度 1\n"},
        # the leaves in PyTorch's order: x3 as soon as it is ready, then x1 and x2, ready together
        {"en": " 9. x3 · AccumulateGrad          grad 1\n10. MulBackward0                 grad 0.3  (saved tensors freed)\n"
               "11. x1 · AccumulateGrad          grad 1.1\n12. x2 · AccumulateGrad          grad 1.4\n",
         "zh": " 9. x3 · AccumulateGrad          梯度 1\n10. MulBackward0                 梯度 0.3  （保存的张量已释放）\n"
               "11. x1 · AccumulateGrad          梯度 1.1\n12. x2 · AccumulateGrad          梯度 1.4\n"},
        {"en": "MulBackward0    edges in: 1\nMulBackward0    edges in: 1\nAddBackward0    edges in: 2\n"
               "AccumulateGrad  edges in: 1\n",
         "zh": "MulBackward0    入边数: 1\nMulBackward0    入边数: 1\nAddBackward0    入边数: 2\nAccumulateGrad  入边数: 1\n"},
        {"en": "f(2) = 1.760554  1.760554\nforward mode: 0.082395   reverse mode: 0.082395   by hand: 0.082395",
         "zh": "f(2) = 1.760554  1.760554\n前向模式: 0.082395   反向模式: 0.082395   手算: 0.082395"},
        "tensor([True, True, True, True])",
    ],
    "09_linear_regression": [
        "torch.Size([200, 2]) torch.Size([200])",
        {"en": "close to the true parameters: True True", "zh": "接近真实参数: True True"},
        "RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.",
    ],
    "10_modules_and_optimizers": [
        {"en": "Linear(in_features=2, out_features=1, bias=True)\nweight (1, 2) leaf: True requires_grad: True grad: None\n"
               "bias (1,) leaf: True requires_grad: True grad: None\nTrue",
         "zh": "Linear(in_features=2, out_features=1, bias=True)\nweight (1, 2) 是叶子: True requires_grad: True grad: None\n"
               "bias (1,) 是叶子: True requires_grad: True grad: None\nTrue"},
        "True\n<AddmmBackward0 object at 0x",
        "MSELoss()\nSGD (\nParameter Group 0\n    dampening: 0\n",
        "<MseLossBackward0 object at 0x",
        {"en": "close to the true parameters: True True", "zh": "接近真实参数: True True"},
        {"en": "the same after every step: True", "zh": "每一步之后都相同: True"},
        "False\nNone",
        "['w', 'b']\nOrderedDict",
        "0.0.weight requires_grad=False\n0.0.bias   requires_grad=False\n1.weight   requires_grad=True\n"
        "1.bias     requires_grad=True\n",
        {"en": "body unchanged: True  body[0].weight.grad: None\nhead trained: True  loss 0.1881\n"
               "body's output recorded: False",
         "zh": "body 未变: True  body[0].weight.grad: None\n输出层已训练: True  损失 0.1881\nbody 的输出被记录: False"},
    ],
    "11_extending_autograd": [
        "X.grad (2, 3) True\nW.grad (3, 2) True",
        "tensor([2., 2., 2.]) True\ntensor([[ 3.],\n        [12.]]) True",
        "dtype=torch.float64, grad_fn=<MatMulBackward>)\nMatMulBackward\nTrue\n"
        "GradcheckError: Jacobian mismatch for output 0 with respect to input 1,\nFalse",
        {"en": "gradient reaching h: tensor([10., 10., 10.])\ntensor([ 20.,  80., 150.])",
         "zh": "到达 h 的梯度: tensor([10., 10., 10.])\ntensor([ 20.,  80., 150.])"},
        "0: Linear  (5, 4) -> (5, 8)\n1: ReLU    (5, 8) -> (5, 8)\n2: Linear  (5, 8) -> (5, 2)\n"
        "train()  enable_grad     y = 7  requires_grad=True   is_inference=False\n",  # the hooks removed: printed once
        "train()  inference_mode  y = 7  requires_grad=False  is_inference=True\n"
        "eval()   enable_grad     y = 6  requires_grad=True   is_inference=False\n"
        "eval()   no_grad         y = 6  requires_grad=False  is_inference=False\n"
        "eval()   inference_mode  y = 6  requires_grad=False  is_inference=True\n<AddBackward0 object at 0x",
        "RuntimeError: Inference tensors cannot be saved for backward\nTrue",  # y + w is recorded, y * w is refused
        "abs        tensor([-1.,  0.,  1.])\nrelu       tensor([0., 0., 1.])\nsqrt(x*x)  tensor([-1., nan,  1.])",
        "tensor([-0.0000,     nan, -0.2500])\ntensor([ 0.0000,  0.0000, -0.2500])",  # torch.where's branch not taken
    ],
    "12_nonlinear_classifier": [
        "torch.Size([200, 2]) torch.Size([200]) 95",
        "tensor([-0.0397,  0.0896,  0.2075])\nTrue",  # the logistic loss's gradient is (sigmoid(s) - y) / n
        "tensor(0.6667) False None",  # accuracy is not recorded
        {"en": "linear model: loss 0.2962, training accuracy 86%, test accuracy 88%",
         "zh": "线性模型：损失 0.2962，训练准确率 86%，测试准确率 88%"},
        "(4): Linear(in_features=16, out_features=1, bias=True)\n)\n",
        {"en": "parameters: 337", "zh": "参数个数: 337"},
        {"en": "after 500 steps: loss 0.0027, training accuracy 100%, test accuracy 98.2%",
         "zh": "500 步之后：损失 0.0027，训练准确率 100%，测试准确率 98.2%"},
    ],
}
# How many plots (image/png outputs in the cells themselves) each lesson shows.
IMAGES = {"01_recording_history": 1, "02_backward_and_grad": 2, "07_higher_derivatives": 3, "08_under_the_hood": 5,
          "09_linear_regression": 1, "10_modules_and_optimizers": 1, "12_nonlinear_classifier": 3}
WIDGETS = {"05_control_flow": 1, "08_under_the_hood": 2, "12_nonlinear_classifier": 1}


# Run before a lesson: every figure shown with plt.show() is described (labels, title, legend,
# how many plotted points its legend covers); a last cell prints the descriptions.
FIGURE_AUDIT = r'''
import json as _audit_json
import matplotlib.pyplot as _audit_plt
_audited_figures = []
_audit_show = _audit_plt.show

def _audited_show(*args, **kwargs):
    for number in _audit_plt.get_fignums():
        figure = _audit_plt.figure(number)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        for ax in figure.axes:
            legend = ax.get_legend()
            covered = 0
            if legend is not None:
                box = legend.get_window_extent(renderer)
                for line in ax.get_lines():
                    x, y = ax.transData.transform(line.get_xydata()).T
                    covered += int(((x > box.x0) & (x < box.x1) & (y > box.y0) & (y < box.y1)).sum())
            _audited_figures.append({"xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "title": ax.get_title(),
                                     "legend": legend is not None, "points under the legend": covered,
                                     "legend texts": [t.get_text() for t in legend.get_texts()] if legend else []})
    return _audit_show(*args, **kwargs)

_audit_plt.show = _audited_show
'''
FIGURE_REPORT = 'print("FIGURES", _audit_json.dumps(_audited_figures))'


def figures_shown(nb):
    """The audit's description of every plotted Axes, from the last cell's output."""
    for out in nb.cells[-1].get("outputs", []):
        if out.output_type == "stream" and out.text.startswith("FIGURES "):
            return json.loads(out.text[len("FIGURES "):])
    raise AssertionError("the figure audit printed nothing")


def key_results(lesson, lang):
    return [r[lang] if isinstance(r, dict) else r for r in KEY_RESULTS[lesson]]


def switch_to_pytorch(nb):
    """The one marked line becomes ``import torch``; nothing else changes."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = cell.source.replace(build.ENGINE_LINE, "import torch")
    return nb


def execute_all(engine, runs=RUNS):
    """Run each ``(lesson, lang)`` of ``runs``, a few kernels at a time; ``{(lesson, lang): (nb, error)}``."""

    async def run(lesson, lang, gate):
        path = NOTEBOOKS / lang / f"{lesson}.ipynb"
        nb = nbformat.read(path, as_version=4)
        if engine == "torch":
            switch_to_pytorch(nb)
        nb.cells.insert(0, nbformat.v4.new_code_cell(FIGURE_AUDIT))
        nb.cells.append(nbformat.v4.new_code_cell(FIGURE_REPORT))
        client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", iopub_timeout=IOPUB_TIMEOUT,
                                resources={"metadata": {"path": str(path.parent)}})
        async with gate:
            try:
                await client.async_execute(env=KERNEL_ENV)
            except CellExecutionError as error:
                return nb, str(error)
        return nb, None

    async def main():
        gate = asyncio.Semaphore(PARALLEL)
        return await asyncio.gather(*(run(lesson, lang, gate) for lesson, lang in runs))

    return dict(zip(runs, asyncio.run(main())))


def runs_wanted(request, fixture):
    """The ``(lesson, lang)`` runs that the tests selected in this session read from ``fixture``
    (``-k 05_control`` executes lesson 5 only)."""
    wanted = {(item.callspec.params["lesson"], item.callspec.params["lang"]) for item in request.session.items
              if fixture in getattr(item, "fixturenames", ())}  # each of them is parametrized by lesson and lang
    return [run for run in RUNS if run in wanted]


@pytest.fixture(scope="module")
def kit_runs(request):
    return execute_all("kit", runs_wanted(request, "kit_runs"))


@pytest.fixture(scope="module")
def torch_runs(request):
    import_torch()
    return execute_all("torch", runs_wanted(request, "torch_runs"))


def outputs(nb):
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])]


def shown_text(nb):
    """Everything a student reads below the cells: printed text and plain-text results, in order."""
    parts = []
    for out in outputs(nb):
        if out.output_type == "stream" and out.name == "stdout":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data") and "image/png" not in out.data:
            parts.append(out.data.get("text/plain", "") + "\n")
    return "".join(parts)


def without_pytorch_only(nb):
    """The notebook without its PyTorch-only cells (``pytorch-only`` tag), which print on PyTorch alone."""
    copy = nbformat.from_dict(json.loads(json.dumps(nb)))
    copy.cells = [c for c in copy.cells if build.PYTORCH_ONLY not in c.metadata.get("tags", [])]
    return copy


def pytorch_only_cells(nb):
    return [c for c in nb.cells if build.PYTORCH_ONLY in c.metadata.get("tags", [])]


def count_outputs(nb, mime):
    return sum(1 for out in outputs(nb) if mime in out.get("data", {}))


def read(lang, lesson):
    return nbformat.read(NOTEBOOKS / lang / f"{lesson}.ipynb", as_version=4)


def code_cells(nb):
    return [c.source for c in nb.cells if c.cell_type == "code"]


# -- the committed notebooks ---------------------------------------------------------


def test_there_are_twelve_lessons_each_with_its_key_results():
    assert len(LESSONS) == 12 and set(KEY_RESULTS) == set(LESSONS)


def test_committed_notebooks_are_exactly_what_the_build_writes():
    found = build.problems()
    assert not found, "\n".join(found)


def code_without_words(source):
    """A code cell's tokens with comments dropped and the text of strings blanked: the code itself."""
    kept = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            continue
        if token.type == tokenize.STRING:
            kept.append(re.match(r"[a-zA-Z]*('''|\"\"\"|'|\")", token.string).group(0))  # prefix and quote
        elif token.type == getattr(tokenize, "FSTRING_MIDDLE", None):
            kept.append("…")
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            kept.append(token.string)
    return kept


def structure(markdown):
    """What a cell of prose is made of, whatever its language: headings, questions, answers, formulas, code."""
    blocks = re.findall(r"^```.*?^```", markdown, re.S | re.M)
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return {
        "code blocks": [code_without_words(b.strip("`").removeprefix("python")) for b in blocks],
        "headings": re.findall(r"^#+ ", markdown, re.M),
        "numbered items": re.findall(r"^\s*\d+\. ", markdown, re.M),
        "questions": re.findall(r"^\*\*\d+\.\*\*", markdown, re.M),
        "answers": markdown.count("<details>"),
        "table rows": len(re.findall(r"^\|", markdown, re.M)),
        "formulas": markdown.count("$"),
        "code": set(re.findall(r"`([^`]+)`", markdown)),
    }


@pytest.mark.parametrize("lesson", LESSONS)
def test_english_and_chinese_notebooks_run_the_same_code(lesson):
    en, zh = code_cells(read("en", lesson)), code_cells(read("zh", lesson))
    assert len(en) == len(zh)
    for a, b in zip(en, zh):
        assert code_without_words(a) == code_without_words(b), f"code differs beyond strings and comments:\n{a}\n---\n{b}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_english_and_chinese_prose_have_the_same_structure(lesson):
    en, zh = read("en", lesson), read("zh", lesson)
    assert [c.cell_type for c in en.cells] == [c.cell_type for c in zh.cells]
    for a, b in zip(en.cells, zh.cells):
        if a.cell_type == "markdown":
            assert structure(a.source) == structure(b.source), f"en and zh differ in:\n{a.source[:300]}"


def test_code_without_words_sees_code_changes_but_not_translations():
    assert code_without_words('plt.title("sin")  # plot') == code_without_words('plt.title("正弦")  # 作图')
    assert code_without_words('f"{x:.2f} steps"') == code_without_words('f"{x:.2f} 步"')
    assert code_without_words("y = x * 2") != code_without_words("y = x * 3")
    assert code_without_words('print("a", x)') != code_without_words('print("a", y)')


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_notebook_has_its_own_prose(lesson):
    en, zh = read("en", lesson), read("zh", lesson)
    prose = [(a.source, b.source) for a, b in zip(en.cells, zh.cells) if a.cell_type == "markdown"]
    assert prose and all(a != b and re.search(r"[\u4e00-\u9fff]", b) for a, b in prose)


# Terms a Chinese course uses, and the literal renderings it does not (the course's glossary).
# The text speaks to the learner (你, 我们), never of "the user"; "epoch" is 迭代周期, as in d2l-zh.
CHINESE_TERMS = {"要求梯度": "需要梯度", "梯度会累积": "梯度累加", "倒着走": "反向传播", "走两遍": "两次反向传播",
                 "再走一遍": "再次反向传播", "没有来历": "不是运算的结果", "用户": "你", "轮次": "迭代周期",
                 "轮数": "迭代周期数", "前向计算": "前向传播", "前向传递": "前向传播（前向模式：前向模式的一遍计算）",
                 "保留保存的": "不释放保存的", "这不可能正确": "这个输入不可能得到这个结果"}
# Claims the course has corrected once and must not make again: lesson 9's model is linear in its
# features [t, sin 3t], and its fit, plotted against t, is a curve (a linear classifier's boundary is a
# line, lesson 12); results of inference mode can enter a graph where no node saves them (PyTorch 2.13:
# y_inf + w records AddBackward0); Kepler's iteration multiplies the error by at most e; the doubling loop
# is the pre-2020 blitz's, not the current tutorial's; the notebooks ship without outputs, so no picture is
# "included" for a rendered page.
WRONG_CLAIMS = {"en": [r"\b(fits|fit|trained|trains) a (straight )?line\b", r"can never enter a graph",
                       r"times closer", r"autograd tutorial makes the same point with a loop",
                       r"for readers of a rendered page"],
                "zh": [r"(训练|拟合)了?一条直线", r"以后也不能进入计算图", r"缩小为原来的 \$e\$ 倍",
                       r"自动微分教程用一个循环说明同一件事", r"供阅读渲染后页面的读者查看"]}


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_uses_the_course_terms_and_no_corrected_claim_returns(lesson):
    for lang in LANGUAGES:
        text = "\n".join(c.source for c in read(lang, lesson).cells)
        found = [f"{literal!r} (write {term!r})" for literal, term in CHINESE_TERMS.items() if literal in text] if lang == "zh" else []
        found += [claim for claim in WRONG_CLAIMS[lang] if re.search(claim, text, re.I)]
        assert not found, f"{lang}/{lesson}: " + ", ".join(found)


@pytest.mark.parametrize("lesson", LESSONS)
def test_chinese_prose_stresses_words_in_bold_not_italics(lesson):
    """As d2l-zh does: a slanted CJK glyph is hard to read, and most CJK fonts have no italic."""
    import mistune

    render = mistune.create_markdown(escape=False)
    for number, cell in enumerate(read("zh", lesson).cells):
        if cell.cell_type == "markdown":
            slanted = re.findall(r"<em>([^<]*[\u4e00-\u9fff][^<]*)</em>", render(cell.source))
            assert not slanted, f"zh/{lesson} cell {number}: {slanted}"


# A pointer to a section by its name: section "..." (en), “...”一节 (zh).
SECTION_POINTERS = {"en": r'section\s+"([^"]+)"', "zh": r"“([^”]+)”\s*一节"}


def headings(lang, lesson):
    return {line.lstrip("#").strip() for cell in read(lang, lesson).cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("#")}


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_pointer_to_a_section_names_a_heading_of_that_language(lesson):
    for lang in LANGUAGES:
        text = "\n".join(c.source for c in read(lang, lesson).cells if c.cell_type == "markdown")
        names = {re.sub(r"\s+", " ", n) for n in re.findall(SECTION_POINTERS[lang], text)}
        assert names <= headings(lang, lesson), f"{lang}/{lesson}: no heading {sorted(names - headings(lang, lesson))}"


def test_the_section_pointer_check_sees_a_name_only_the_other_language_has():
    assert re.findall(SECTION_POINTERS["zh"], "上面“Lesson 6: keeping the graph”一节") == ["Lesson 6: keeping the graph"]
    assert "Lesson 6: keeping the graph" not in headings("zh", "08_under_the_hood")


def test_the_version_counter_is_explained_in_the_lesson_whose_in_place_error_a_learner_meets_first():
    inplace_error = "modified by an inplace operation"
    shown = [lesson for lesson in LESSONS if any(inplace_error in r for r in key_results(lesson, "en"))]
    for lang, name in (("en", "version counter"), ("zh", "版本计数器")):
        explained = [lesson for lesson in LESSONS if any(name in h for h in headings(lang, lesson))]
        assert shown and explained and explained[0] == shown[0], (lang, shown, explained)
        earlier = "\n".join(c.source for lesson in LESSONS[:LESSONS.index(shown[0])] for c in read(lang, lesson).cells)
        assert inplace_error not in earlier and "_version" not in earlier


def test_gradients_accumulate_is_taught_before_a_lesson_clears_a_gradient():
    clears = re.compile(r"\.grad\.zero_\(\)|zero_grad\(\)|\.grad = None")
    for lang, name in (("en", "Gradients accumulate"), ("zh", "梯度累加")):
        cells = [(lesson, cell) for lesson in LESSONS for cell in read(lang, lesson).cells]
        taught = next(n for n, (_, cell) in enumerate(cells) if cell.cell_type == "markdown"
                      and re.search(rf"^#+ {name}", cell.source, re.M))
        first_clear = next(n for n, (_, cell) in enumerate(cells) if cell.cell_type == "code" and clears.search(cell.source))
        assert taught < first_clear, f"{lang}: {cells[first_clear][0]} clears a gradient before {cells[taught][0]} says why"


def test_lesson_8_quotes_and_names_what_is_in_the_engines_backward_py():
    import textwrap

    import autograd_core.backward as engine_backward

    for lang in LANGUAGES:
        [cell] = [c.source for c in read(lang, "08_under_the_hood").cells
                  if c.cell_type == "markdown" and "`autograd_core/backward.py`" in c.source.split("\n")[0]]
        [quoted] = re.findall(r"^```python\n(.*?)^```", cell, re.S | re.M)
        assert textwrap.indent(quoted, "    ") in engine_backward.__doc__, f"{lang}: not the walk of backward.py's docstring"
        cited = {"walk", "count_dependencies", "_send", "_add_to_buffer", "ReadyQueue"}
        assert cited <= set(re.findall(r"`(\w+)`", cell)), f"{lang}: lesson 8 no longer cites {cited}"
        assert all(hasattr(engine_backward, name) for name in cited), [n for n in cited if not hasattr(engine_backward, n)]


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_engine_files_and_functions_a_lesson_cites_exist(lesson):
    import importlib

    for lang in LANGUAGES:
        prose = "\n".join(c.source for c in read(lang, lesson).cells if c.cell_type == "markdown")
        # "`sum_to_shape` in `autograd_core/broadcast.py`": the file, and the function in it
        for name, path in re.findall(r"(?:`(\w+)`[^`\n]{0,12})?`(autograd_core/[\w/]+)\.py`", prose):
            assert (ROOT / f"{path}.py").is_file(), f"{lang}/{lesson}: no {path}.py"
            if name:
                assert hasattr(importlib.import_module(path.replace("/", ".")), name), f"{lang}/{lesson}: no {name} in {path}.py"


@pytest.mark.parametrize("lesson", LESSONS)
def test_first_code_cell_chooses_the_engine_on_one_marked_line(lesson):
    for lang in LANGUAGES:
        cells = code_cells(read(lang, lesson))
        assert cells[0].splitlines()[0] == build.ENGINE_LINE
        assert sum(c.count("import autograd_core") for c in cells) == 1


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_notebooks_carry_no_outputs_and_a_python3_kernel(lesson):
    for lang in LANGUAGES:
        nb = read(lang, lesson)
        assert nb.metadata.kernelspec.name == "python3"
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_ends_with_self_study_questions(lesson):
    assert read("en", lesson).cells[-1].source.startswith("## Self-study questions")
    assert read("zh", lesson).cells[-1].source.startswith("## 自学思考题")


CLOSING = {"en": ("## Summary\n", "## Common mistakes\n"), "zh": ("## 小结\n", "## 常见错误\n")}


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_closes_with_a_summary_and_its_common_mistakes(lesson):
    for lang in LANGUAGES:
        summary, mistakes = (cell.source for cell in read(lang, lesson).cells[-3:-1])
        assert summary.startswith(CLOSING[lang][0]) and mistakes.startswith(CLOSING[lang][1]), f"{lang}/{lesson}"
        points = re.findall(r"^\* .{30,}", summary, re.M)
        named = re.findall(r"^\* \*\*[^*]+\*\* .{20,}", mistakes, re.M)  # "* **The mistake.** Its symptom and fix."
        assert len(points) >= 3 and len(named) >= 3, f"{lang}/{lesson}: {len(points)} points, {len(named)} mistakes"


# The two study notes the course starts from, and the pages it follows, named and linked in lesson 1.
SOURCES = {"en": ["The blitz notes", "The d2l notes"], "zh": ["Blitz 笔记", "d2l 笔记"]}
SOURCE_LINKS = ["docs.pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html", "docs.pytorch.org/docs/stable/notes/autograd.html",
                "d2l.ai/chapter_preliminaries/autograd.html", "zh.d2l.ai/chapter_preliminaries/autograd.html",
                "github.com/karpathy/micrograd", "github.com/fastai/fastbook",
                "www.cnblogs.com/bytesfly/p/why-need-gradient-arg-in-pytorch-backward.html"]  # (the post the d2l notes quote)
#: Each study note as its first line names it; the copies name no author and no address, and the cell says so.
NOTE_TITLES = ["Pytorch学习笔记--1 AUTOGRAD",
               "跟李沐学AI:chapter_preliminaries/index/autograd、自动求导、动态构建计算图、requires_grad_(True)&detach、backward()函数"]
NO_AUTHOR = {"en": "names no author and no address", "zh": "没有注明作者和网址"}


def test_lesson_1_names_the_study_notes_and_links_the_pages_the_course_follows():
    for lang, heading in (("en", "## Sources\n"), ("zh", "## 参考资料\n")):
        [cell] = [c.source for c in read(lang, "01_recording_history").cells if c.source.startswith(heading)]
        assert all(name in cell for name in SOURCES[lang]), lang
        assert all(f"(https://{link}" in cell for link in SOURCE_LINKS), lang
        assert all(title in cell for title in NOTE_TITLES), lang
        assert cell.count(NO_AUTHOR[lang]) == 2, lang


def exercise_numbers_cited(text, lang):
    """d2l exercises cited by number: "exercise 3", "exercises 5–8", "练习 3"."""
    return re.findall(r"\bexercises? \d" if lang == "en" else r"练习 ?\d", text, re.I)


@pytest.mark.parametrize("lesson", LESSONS)
def test_d2l_exercise_numbers_are_given_only_in_lesson_1s_table(lesson):
    """The two editions number the exercises differently; the lessons name an exercise by its topic."""
    for lang in LANGUAGES:
        for cell in read(lang, lesson).cells:
            if cell.cell_type == "markdown" and not cell.source.startswith(("## Sources", "## 参考资料")):
                assert not exercise_numbers_cited(cell.source, lang), f"{lang}/{lesson}: {cell.source[:200]}"


def test_lessons_7_and_8_say_they_are_optional():
    for lesson in ("07_higher_derivatives", "08_under_the_hood"):
        assert "(optional)" in read("en", lesson).cells[0].source.splitlines()[0]
        assert "（选学）" in read("zh", lesson).cells[0].source.splitlines()[0]
    index = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    assert index.count("(optional) [") == 2 and index.count("（选学）[") == 2


GOALS = {"en": "In this lesson you will\n\n", "zh": "本课的学习目标：\n\n"}
ANSWER = {"en": "<details><summary>Answer</summary>", "zh": "<details><summary>参考答案</summary>"}


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_states_its_goals_at_the_top(lesson):
    for lang in LANGUAGES:
        top = read(lang, lesson).cells[0].source
        assert top.startswith("# ") and GOALS[lang] in top, f"{lang}: no goals in the first cell"
        goals = top.split(GOALS[lang], 1)[1].split("\n\n")[0].splitlines()
        assert len(goals) >= 2 and all(g.startswith("* ") for g in goals), goals


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_self_study_question_has_an_answer_to_open(lesson):
    for lang in LANGUAGES:
        questions = read(lang, lesson).cells[-1].source
        parts = re.split(r"^\*\*(\d+)\.\*\* ", questions, flags=re.M)
        numbers, bodies = parts[1::2], parts[2::2]
        assert numbers == [str(n) for n in range(1, len(numbers) + 1)] and len(numbers) >= 3, numbers
        for n, body in zip(numbers, bodies):
            question, _, rest = body.partition("\n\n")
            answer = rest.strip()
            assert answer.startswith(ANSWER[lang]) and answer.endswith("</details>"), f"{lang} question {n}: {body[:200]}"
            text = answer[len(ANSWER[lang]):-len("</details>")].strip()
            assert len(text) > 40 and "<details>" not in text, f"{lang} question {n}: the answer is missing"


def test_course_index_lists_every_lesson_in_both_languages():
    index = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    for lesson in LESSONS:
        assert f"en/{lesson}.ipynb" in index and f"zh/{lesson}.ipynb" in index


def markup_left_as_text(markdown):
    """Markdown syntax a CommonMark renderer leaves as literal characters in a cell: ``**``, ``*`` or a
    backtick outside code and formulas. The usual cause: a line right after an HTML line such as
    ``</details>``, which CommonMark keeps in the HTML block, unrendered, until a blank line."""
    import mistune  # nbconvert's Markdown renderer, CommonMark's rules for HTML blocks

    rendered = mistune.create_markdown(escape=False)(markdown)
    text = re.sub(r"<(code|pre)>.*?</\1>", "", rendered, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", "", text, flags=re.S)
    return [text[max(0, m.start() - 40):m.end() + 40]
            for m in re.finditer(r"\*\*|`|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])", text)]


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_markdown_is_left_unrendered(lesson):
    for lang in LANGUAGES:
        for number, cell in enumerate(read(lang, lesson).cells):
            if cell.cell_type == "markdown":
                left = markup_left_as_text(cell.source)
                assert not left, f"{lang}/{lesson} cell {number}: {left}"


def test_unrendered_markup_is_found_after_an_html_line():
    answer = "<details><summary>Answer</summary>\n\nYes.\n\n</details>\n"
    assert markup_left_as_text(answer + "**2.** Why `x`?")
    assert not markup_left_as_text(answer + "\n**2.** Why `x` and $a * b$?")


#: Plain English: a sentence of a lesson has at most this many words, a list item at most that many (a code
#: span, a formula or a link counts as one word). A longer one is split, not packed with colons and asides.
SENTENCE_WORDS, ITEM_WORDS = 32, 45


def sentences_and_list_items(markdown):
    """The sentences and the list items of a cell of English prose, each as its words; tables and code left out."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    text = re.sub(r"\$\$.*?\$\$|`[^`]*`|\$[^$]*\$|\[[^\]]*\]\([^)]*\)", "X", text, flags=re.S)
    text = re.sub(r"^> ?", "", text, flags=re.M)
    sentences, items = [], []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[*-]|\d+\.) )", text):
        if block.lstrip().startswith("|"):
            continue
        block = " ".join(block.split())
        if re.match(r"(?:[*-]|\d+\.) ", block):
            items.append(block.split())
        sentences += [s.split() for s in re.split(r"(?<=[.!?])\s+", block)]
    return sentences, items


@pytest.mark.parametrize("lesson", LESSONS)
def test_english_prose_keeps_its_sentences_and_list_items_short(lesson):
    long = []
    for number, cell in enumerate(read("en", lesson).cells):
        if cell.cell_type == "markdown":
            sentences, items = sentences_and_list_items(cell.source)
            long += [f"cell {number}, {len(s)} words: {' '.join(s)}" for s in sentences if len(s) > SENTENCE_WORDS]
            long += [f"cell {number}, item of {len(i)} words: {' '.join(i)}" for i in items if len(i) > ITEM_WORDS]
    assert not long, "\n".join(long)


def test_sentence_length_counts_code_and_formulas_as_one_word_each():
    sentences, items = sentences_and_list_items("* `x.grad.zero_()` clears $\\nabla f$. Two more.\n\n| a | b c d |\n")
    assert [len(s) for s in sentences] == [4, 2] and [len(i) for i in items] == [6]


def test_build_rejects_english_prose_without_its_chinese_twin():
    with pytest.raises(ValueError, match="zh"):
        build.parse_lesson("%%% en\nHello\n%%% code\nx = 1\n")




# -- executed with the kit's engine ------------------------------------------------------


@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_notebook_runs_top_to_bottom_without_errors_or_warnings(kit_runs, lesson, lang):
    nb, error = kit_runs[lesson, lang]
    assert error is None, error
    stderr = [o.text for o in outputs(nb) if o.output_type == "stream" and o.name == "stderr"]
    assert not stderr, stderr


@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_notebook_shows_the_documents_results(kit_runs, lesson, lang):
    nb, error = kit_runs[lesson, lang]
    assert error is None, error
    text = shown_text(nb)
    for expected in key_results(lesson, lang):
        assert expected in text


@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_plots_are_also_saved_as_static_images(kit_runs, lesson, lang):
    nb, _ = kit_runs[lesson, lang]
    assert count_outputs(nb, "image/png") == IMAGES.get(lesson, 0)


@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_every_plot_has_labelled_axes_a_title_and_a_legend_off_its_curves(kit_runs, lesson, lang):
    nb, error = kit_runs[lesson, lang]
    assert error is None, error
    plots = figures_shown(nb)
    for plot in plots:
        assert plot["xlabel"] and plot["ylabel"] and plot["title"], plot
        assert plot["points under the legend"] == 0, plot
        if lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", plot["title"] + plot["ylabel"]), f"not in Chinese: {plot}"
            # a label with English words in it (not a formula such as "sin(x)" or "t") is in Chinese too
            for label in [plot["xlabel"], plot["ylabel"], plot["title"], *plot["legend texts"]]:
                if re.search(r"\b(?!(?:sin|cos|exp|log|relu|abs)\b)[A-Za-z]{3,}\b", re.sub(r"\$[^$]*\$", "", label)):
                    assert re.search(r"[\u4e00-\u9fff]", label), f"an English label in the Chinese notebook: {label!r}"
    assert len(plots) >= IMAGES.get(lesson, 0) - (5 if lesson == "08_under_the_hood" else 0) - (lesson < "03")


@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_widgets_are_displayed(kit_runs, lesson, lang):
    nb, _ = kit_runs[lesson, lang]
    assert count_outputs(nb, "application/vnd.jupyter.widget-view+json") == WIDGETS.get(lesson, 0)


# -- executed with PyTorch -----------------------------------------------------------------


# Lesson 11: detect_anomaly stops backward at the node that returned nan and names the forward line
ANOMALY = ("RuntimeError: Function 'MulBackward0' returned nan values in its 0th output.\n"
           "UserWarning: Error detected in MulBackward0. Traceback of forward call that caused the error:\n"
           "    y = torch.sqrt(a * a)\n")
ANOMALY_RUNS = [("11_extending_autograd", lang) for lang in LANGUAGES]


@pytest.mark.parametrize("lesson, lang", ANOMALY_RUNS)
def test_anomaly_detection_names_the_node_that_returned_nan_on_the_kit(kit_runs, lesson, lang):
    nb, error = kit_runs[lesson, lang]
    assert error is None, error
    assert ANOMALY in shown_text(nb)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("lesson, lang", ANOMALY_RUNS)
def test_anomaly_detection_names_the_node_that_returned_nan_on_pytorch(torch_runs, lesson, lang):
    nb, error = torch_runs[lesson, lang]
    assert error is None, error
    assert ANOMALY in shown_text(nb)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_notebook_runs_on_pytorch_and_shows_the_same_results(torch_runs, lesson, lang):
    nb, error = torch_runs[lesson, lang]
    assert error is None, error
    assert "import autograd_core" not in "".join(code_cells(nb))
    text = shown_text(without_pytorch_only(nb))  # the results both engines show
    for expected in key_results(lesson, lang):
        assert expected in text
    assert count_outputs(nb, "image/png") == IMAGES.get(lesson, 0)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("lesson, lang", RUNS, ids=RUN_IDS)
def test_the_kit_prints_exactly_what_pytorch_prints(kit_runs, torch_runs, lesson, lang):
    """Every line a lesson prints, not only its key results, is the same on both engines (object addresses aside)."""
    shown = []
    for runs in (kit_runs, torch_runs):
        nb, error = runs[lesson, lang]
        assert error is None, error
        shown.append(re.sub(r"0x[0-9a-f]+", "0x…", shown_text(without_pytorch_only(nb))).splitlines())
    kit, pytorch = shown
    assert kit == pytorch


# -- PyTorch-only cells: what PyTorch has and the engine does not, shown where a lesson needs it -------------

# What each PyTorch-only cell prints on PyTorch 2.13 (forward mode at x = 2, as lesson 8's dual numbers; the
# module backward hooks in reverse order of the layers, and the joint norm of the gradients clipped to 1)
PYTORCH_ONLY_PRINTS = {
    "08_under_the_hood": ["forward_ad: f(2) = 1.760554, f'(2) = 0.082395\n"
                          "torch.func.jvp: 0.082395   torch.func.jacrev: 0.082395\n"],
    "11_extending_autograd": [{"en": "backward through 2: Linear  gradient of the output (5, 2)\n"
                                     "backward through 1: ReLU    gradient of the output (5, 8)\n"
                                     "backward through 0: Linear  gradient of the output (5, 8)\n",
                               "zh": "反向传播经过 2: Linear  输出的梯度 (5, 2)\n"
                                     "反向传播经过 1: ReLU    输出的梯度 (5, 8)\n"
                                     "反向传播经过 0: Linear  输出的梯度 (5, 8)\n"},
                              {"en": " before clipping, 1.0000 after\n", "zh": "，裁剪后 1.0000\n"}],
}
PYTORCH_ONLY_RUNS = [(lesson, lang) for lesson in PYTORCH_ONLY_PRINTS for lang in LANGUAGES]


@pytest.mark.parametrize("lesson", LESSONS)
def test_pytorch_only_cells_are_marked_guarded_and_said_so_in_both_languages(lesson):
    for lang in LANGUAGES:
        nb = read(lang, lesson)
        cells = pytorch_only_cells(nb)
        assert len(cells) == (lesson in PYTORCH_ONLY_PRINTS), f"{lang}/{lesson}"
        for cell in cells:
            code = [line for line in cell.source.splitlines() if not line.startswith("#")]
            assert code[0] == build.PYTORCH_ONLY_GUARD and all(not line or line.startswith(" ") for line in code[1:])
            before = nb.cells[nb.cells.index(cell) - 1].source
            assert before.startswith("### PyTorch only (optional)" if lang == "en" else "### 仅限 PyTorch（选学）")


def test_build_rejects_a_pytorch_only_cell_without_its_guard():
    with pytest.raises(ValueError, match="starts with"):
        build.parse_lesson("%%% code pytorch-only\n# PyTorch only\nimport torch.func\n")


@pytest.mark.parametrize("lesson, lang", PYTORCH_ONLY_RUNS)
def test_pytorch_only_cells_do_nothing_on_the_kit(kit_runs, lesson, lang):
    nb, error = kit_runs[lesson, lang]
    assert error is None, error
    assert [cell.get("outputs") for cell in pytorch_only_cells(nb)] == [[]]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("lesson, lang", PYTORCH_ONLY_RUNS)
def test_pytorch_only_cells_run_on_pytorch(torch_runs, lesson, lang):
    nb, error = torch_runs[lesson, lang]
    assert error is None, error
    [cell] = pytorch_only_cells(nb)
    printed = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
    for expected in PYTORCH_ONLY_PRINTS[lesson]:
        assert (expected[lang] if isinstance(expected, dict) else expected) in printed, printed
