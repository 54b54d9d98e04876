"""Deep graphs: backward through 100,000 ops without recursion, and freed graphs release their memory."""
import gc
import sys
import tracemalloc
import weakref

import autograd_core as torch


def test_backward_through_a_chain_of_100000_ops():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1
    assert sys.getrecursionlimit() < 100_000
    y.backward()
    assert x.grad.item() == 1.0 and y.item() == 100_001.0


def test_autograd_grad_through_a_deep_chain_of_multiplications():
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(20_000):
        y = y * 1.0001
    (g,) = torch.autograd.grad(y, x)
    assert abs(g.item() - 1.0001 ** 20_000) < 1e-6 * g.item()


def test_deleting_a_deep_graph_does_not_overflow_the_stack():
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    last = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert last() is None


def test_a_freed_graph_is_released_when_its_output_is_deleted():
    x = torch.ones(10, requires_grad=True)
    y = (x * 2).exp().sum()
    node, middle = weakref.ref(y.grad_fn), weakref.ref(y.grad_fn.next_functions[0][0])
    y.backward()
    del y
    gc.collect()
    assert node() is None and middle() is None


def test_a_leaf_does_not_keep_its_graph_alive():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    ref = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert ref() is None and x.grad is None


def test_memory_returns_after_backward_and_del():
    x = torch.ones(1000, requires_grad=True)
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        for _ in range(3):
            y = x
            for _ in range(200):
                y = (y * 1.0001).tanh()
            y.sum().backward()
            del y
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - base < 200_000  # 200 nodes each saving 8 KB would be 1.6 MB


SAVING_OPS = {
    "exp": lambda x: x.exp(), "relu": lambda x: x.relu(), "sigmoid": lambda x: x.sigmoid(),
    "tanh": lambda x: x.tanh(), "sqrt": lambda x: x.sqrt(), "reciprocal": lambda x: x.reciprocal(),
    "pow tensor": lambda x: x ** x, "number ** tensor": lambda x: 2 ** x, "norm": lambda x: x.norm(),
    "mul": lambda x: x * x, "div": lambda x: x / (x + 1), "matmul": lambda x: x @ x,
}


def test_graphs_are_freed_by_reference_counting_alone():
    # A node that saves its own output must not make a cycle (out -> node -> out):
    # otherwise every step of a training loop leaves its arrays to the cyclic collector.
    gc.collect()
    gc.disable()
    try:
        for name, op in SAVING_OPS.items():
            x = torch.rand(3, 3, requires_grad=True)
            y = op(x)
            node, data = weakref.ref(y.grad_fn), weakref.ref(y)
            y.sum().backward(retain_graph=True)
            del y
            assert node() is None and data() is None, name
    finally:
        gc.enable()
