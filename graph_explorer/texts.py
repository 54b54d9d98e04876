"""Every word the explorer shows, in English and in Chinese (``language="en"`` or ``"zh"``)."""
from __future__ import annotations

LANGUAGES = ("en", "zh")

TEXTS = {
    "en": {
        "before": "before backward: {nodes} nodes, {steps} steps to run",
        "step": "step {k}/{total}: {name} receives grad {grad}",
        "ran": "{done}/{count} run",
        "pending": "not run yet",
        "current": "running now",
        "done": "done",
        "saved": "holds saved tensors",
        "freed": "saved tensors freed",
        "caption": "in a box: the tensor's name, its data and, once backward has run the node, the gradient it "
                   "received (the sum of its incoming arrows);  on an arrow: the gradient that flows along it",
        "graph": "the graph recorded so far: {nodes} nodes (backward has not run)",
        "graph caption": "each box is a grad_fn, with the name and the data of the tensor it produced; arrows point "
                         "from a node to its next_functions, the way gradients will flow",
        "table grad": "grad",
        "table freed": "(saved tensors freed)",
        "step button": "Step",
        "step tooltip": "run the next node",
        "reset button": "Reset",
        "reset tooltip": "back to before backward",
        "slider": "step",
        "scalar": "scalar",
        "data": "data",
        "grad": "grad",
        "not kept": "({shape}, not kept)",
        "entries": "{count} entries",
        "all": "all {value}",
    },
    "zh": {
        "before": "反向传播之前：{nodes} 个节点，共 {steps} 步",
        "step": "第 {k}/{total} 步：{name} 收到梯度 {grad}",
        "ran": "已执行 {done}/{count}",
        "pending": "尚未执行",
        "current": "正在执行",
        "done": "已执行",
        "saved": "持有保存的张量",
        "freed": "保存的张量已释放",
        "caption": "方框中：张量的名字、它的值，以及反向传播执行该节点之后它收到的梯度（各条入边之和）；箭头旁：沿这条边传递的梯度",
        "graph": "目前记录下的计算图：{nodes} 个节点（尚未反向传播）",
        "graph caption": "每个方框是一个 grad_fn，标有它产生的张量的名字和值；箭头从节点指向它的 next_functions，即梯度将要流动的方向",
        "table grad": "梯度",
        "table freed": "（保存的张量已释放）",
        "step button": "下一步",
        "step tooltip": "执行下一个节点",
        "reset button": "重置",
        "reset tooltip": "回到反向传播之前",
        "slider": "步骤",
        "scalar": "标量",
        "data": "值",
        "grad": "梯度",
        "not kept": "（{shape}，未保留）",
        "entries": "{count} 个元素",
        "all": "全为 {value}",
    },
}


def text(language: str, key: str, **values) -> str:
    if language not in TEXTS:
        raise ValueError(f"language must be one of {LANGUAGES}, not {language!r}")
    return TEXTS[language][key].format(**values)
