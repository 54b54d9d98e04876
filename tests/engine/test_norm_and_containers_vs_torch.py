"""nn.LayerNorm, nn.LeakyReLU, nn.ModuleList and nn.ModuleDict against PyTorch's: values, gradients,
second derivatives, nodes, printing, state dicts, errors."""
import numpy as np
import pytest

from engine_helpers import import_torch, same

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4, 5))
W, B = RNG.standard_normal(5), RNG.standard_normal(5)


def leaf(m, array, dtype="float64"):
    return m.tensor(array, dtype=getattr(m, dtype), requires_grad=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, options", [(5, {}), ((4, 5), {}), (5, dict(elementwise_affine=False)),
                                             (5, dict(bias=False, eps=1e-3))], ids=str)
def test_layer_norm_values_gradients_and_nodes_are_torchs(shape, options, dtype):
    def program(m):
        m.manual_seed(0)
        ln = m.nn.LayerNorm(shape, **options, dtype=getattr(m, dtype))
        if ln.weight is not None:
            with m.no_grad():
                ln.weight.normal_()
                if ln.bias is not None:
                    ln.bias.normal_()
        x = leaf(m, X, dtype)
        y = ln(x)
        (y * y.detach().exp()).sum().backward()
        # (the gradients as arrays: compared within float32 rounding, not by their printed last digit)
        return y, x.grad.numpy(), [p.grad.numpy() for p in ln.parameters()], repr(ln), list(ln.state_dict())
    same(program)


def test_layer_norm_second_derivatives_are_torchs():
    def program(m):
        x, w, b = leaf(m, X), leaf(m, W), leaf(m, B)
        y = m.nn.functional.layer_norm(x, (5,), w, b)
        gx, gw = m.autograd.grad((y ** 3).sum(), (x, w), create_graph=True)
        return m.autograd.grad(gx.sum() + (gw * gw).sum(), (x, w, b), allow_unused=True)
    same(program)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.layer_norm(m.ones(2, 4), (3,)),
    lambda m: m.nn.functional.layer_norm(m.ones(2, 4), (2, 4, 1)),
    lambda m: m.nn.LayerNorm(4)(m.ones(3)),
])
def test_layer_norm_errors_are_torchs(call):
    same(call)


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5])
def test_leaky_relu_is_torchs(slope):
    def program(m):
        x = leaf(m, np.array([-2.0, -0.5, 0.0, 0.5, 3.0]))
        layer = m.nn.LeakyReLU(slope)
        y = layer(x)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        # (g detached: the nodes recorded inside a backward are the engine's own, docs/engine.md)
        return y, g.detach(), gg, repr(layer), repr(m.nn.LeakyReLU(inplace=True)), m.nn.functional.leaky_relu(x.detach(), slope)
    same(program)


def test_module_list_registers_indexes_and_prints_as_torchs():
    def program(m):
        m.manual_seed(0)

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = m.nn.ModuleList([m.nn.Linear(2, 2) for _ in range(3)])
                self.blocks.append(m.nn.ReLU())
                self.blocks.extend([m.nn.ReLU(), m.nn.Linear(2, 1)])
                self.blocks.insert(0, m.nn.Tanh())

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x

        net = Net()
        y = net(m.ones(3, 2))
        y.sum().backward()
        return (y, repr(net), len(net.blocks), repr(net.blocks[-1]), repr(net.blocks[1:3]),
                [n for n, _ in net.named_parameters()], [p.grad for p in net.parameters()])
    same(program)


def test_module_dict_keeps_order_and_prints_as_torchs():
    def program(m):
        d = m.nn.ModuleDict({"b": m.nn.ReLU(), "a": m.nn.Linear(2, 3)})
        d["c"] = m.nn.Tanh()
        d.update([("e", m.nn.Sigmoid())])
        popped = d.pop("b")
        return (repr(d), list(d.keys()), "a" in d, len(d), repr(popped), [k for k in d],
                [n for n, _ in d.named_parameters()])
    same(program)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.ModuleList([m.nn.ReLU()])[3],
    lambda m: m.nn.ModuleList([m.nn.ReLU()])(m.ones(1)),
    lambda m: m.nn.ModuleDict()["x"],
])
def test_container_errors_are_torchs(call):
    same(call)
