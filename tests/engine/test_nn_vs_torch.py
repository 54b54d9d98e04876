"""nn: modules, parameters, layers and losses against PyTorch's (values, gradients, graph nodes,
printing, errors). Weights are set from fixed numbers in both (the random ones are compared in
test_random_vs_torch.py)."""
import collections
import re

import numpy as np
import pytest

from engine_helpers import import_torch, same

torch = import_torch()

RNG = np.random.default_rng(10)
X = RNG.standard_normal((5, 4)).tolist()
W1, B1 = RNG.standard_normal((3, 4)).tolist(), RNG.standard_normal(3).tolist()
W2 = RNG.standard_normal((2, 3)).tolist()


def model(m, *tail):
    net = m.nn.Sequential(m.nn.Linear(4, 3), m.nn.ReLU(), m.nn.Linear(3, 2, bias=False), *tail)
    with m.no_grad():
        net[0].weight.copy_(m.tensor(W1))
        net[0].bias.copy_(m.tensor(B1))
        net[2].weight.copy_(m.tensor(W2))
    return net


def test_a_network_prints_and_computes_as_torchs():
    def program(m):
        net = model(m, m.nn.Sigmoid())
        y = net(m.tensor(X))
        y.sum().backward()
        return repr(net), y, [(n, p, p.grad) for n, p in net.named_parameters()]

    same(program)


@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 5, 4)])
def test_linear_records_torchs_nodes_for_any_batch_shape(shape):
    def program(m):
        layer = m.nn.Linear(4, 3)
        with m.no_grad():
            layer.weight.copy_(m.tensor(W1))
            layer.bias.copy_(m.tensor(B1))
        x = m.tensor(np.resize(np.array(X), shape).tolist(), requires_grad=True)
        y = layer(x)
        (y * y).sum().backward()
        return y, x.grad, layer.weight.grad, layer.bias.grad

    same(program)


def test_linear_without_bias_and_shape_errors_match_torch():
    same(lambda m: m.nn.Linear(4, 3, bias=False)(m.ones(2, 4)).grad_fn)
    same(lambda m: m.nn.Linear(4, 3)(m.ones(2, 5)))
    same(lambda m: (m.nn.Linear(4, 3).bias is None, m.nn.Linear(4, 3, bias=False).bias))


def test_linear_starts_uniform_within_one_over_sqrt_fan_in():
    import autograd_core

    autograd_core.manual_seed(0)
    layer = autograd_core.nn.Linear(100, 50)
    for p in (layer.weight, layer.bias):
        values = p.detach().numpy()
        assert np.abs(values).max() <= 0.1 and np.abs(values).max() > 0.09
        assert p.requires_grad and p.is_leaf and p.dtype == autograd_core.float32


@pytest.mark.parametrize("loss", [
    lambda m, y, t, c: m.nn.MSELoss()(y, t), lambda m, y, t, c: m.nn.MSELoss(reduction="sum")(y, t),
    lambda m, y, t, c: m.nn.MSELoss(reduction="none")(y, t), lambda m, y, t, c: m.nn.functional.mse_loss(y, t[:, :1]),
    lambda m, y, t, c: m.nn.CrossEntropyLoss()(y, c), lambda m, y, t, c: m.nn.CrossEntropyLoss(reduction="sum")(y, c),
    lambda m, y, t, c: m.nn.functional.cross_entropy(y, c, reduction="none"),
    lambda m, y, t, c: m.nn.functional.nll_loss(y.log_softmax(dim=1), c),
    lambda m, y, t, c: m.nn.BCEWithLogitsLoss()(y, (t > 0).float()),
    lambda m, y, t, c: m.nn.functional.binary_cross_entropy_with_logits(y * 30, (t > 0).float(), reduction="sum"),
    lambda m, y, t, c: m.nn.functional.binary_cross_entropy(y.sigmoid(), (t > 0).float()),
    lambda m, y, t, c: m.nn.functional.softmax(y, dim=1), lambda m, y, t, c: m.softmax(y, 0),
    lambda m, y, t, c: y.log_softmax(1), lambda m, y, t, c: m.nn.Softmax(dim=1)(y),
    lambda m, y, t, c: m.nn.LogSoftmax(dim=1)(y), lambda m, y, t, c: m.nn.Tanh()(y),
    lambda m, y, t, c: m.nn.Flatten()(y.reshape(5, 2, 1)), lambda m, y, t, c: m.nn.Identity()(y),
])
def test_losses_and_activations_give_torchs_values_gradients_and_nodes(loss):
    def program(m):
        y = m.tensor(np.array(X)[:, :2].tolist(), requires_grad=True)
        t = m.tensor((np.array(X)[:, 2:] * 0.5).tolist(), requires_grad=True)
        c = m.tensor([0, 1, 1, 0, 1])
        out = loss(m, y, t, c)
        (out * m.linspace(0.5, 1.5, out.numel()).reshape(out.shape)).sum().backward()
        return out, y.grad, t.grad

    same(program)


def test_cross_entropy_with_class_probabilities_gives_torchs_values_and_gradients():
    # (PyTorch's graph ends in DivBackward1, an internal node, so the nodes are not compared)
    def program(m):
        y = m.tensor(np.array(X)[:, :2].tolist(), requires_grad=True)
        t = m.tensor((np.array(X)[:, 2:] * 0.5).tolist(), requires_grad=True)
        loss = m.nn.functional.cross_entropy(y, t.softmax(1))
        return loss.detach(), m.autograd.grad(loss, (y, t))

    same(program)


@pytest.mark.parametrize("bad", [
    lambda m: m.nn.CrossEntropyLoss()(m.ones(3, 2), m.tensor([0, 2, 1])),
    lambda m: m.nn.CrossEntropyLoss()(m.ones(3, 2), m.tensor([0, 1])),
    lambda m: m.nn.functional.nll_loss(m.ones(3, 2), m.tensor([0.0, 1.0, 1.0])),
    lambda m: m.nn.BCEWithLogitsLoss()(m.ones(3), m.ones(3, 1)),
    lambda m: m.nn.functional.binary_cross_entropy(m.tensor([1.5]), m.tensor([1.0])),
    lambda m: m.nn.MSELoss(reduction="average")(m.ones(2), m.ones(2)),
])
def test_bad_loss_arguments_raise_torchs_errors(bad):
    same(bad)


def test_module_registers_parameters_and_submodules_by_attribute():
    def program(m):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = m.nn.Parameter(m.tensor([2.0]))
                self.body = model(m)
                self.register_buffer("offset", m.tensor([1.0]))
                self.not_a_parameter = m.tensor([5.0])

            def forward(self, x):
                return self.body(x) * self.scale + self.offset

        net = Net()
        y = net(m.tensor(X)).sum()
        y.backward()
        return ([n for n, _ in net.named_parameters()], [n for n, _ in net.named_modules()],
                [n for n, _ in net.named_children()], list(net.state_dict().keys()), repr(net),
                net.scale, net.scale.grad, len(list(net.parameters())), [type(c).__name__ for c in net.children()])

    same(program)


def test_a_parameter_is_a_leaf_that_requires_grad_and_prints_as_one():
    def program(m):
        p = m.nn.Parameter(m.tensor([1.0, 2.0]))
        q = m.nn.Parameter(m.tensor([1.0]), requires_grad=False)
        return (repr(p), p.is_leaf, p.requires_grad, isinstance(p, m.nn.Parameter), isinstance(p * 2, m.nn.Parameter),
                isinstance(m.ones(1), m.nn.Parameter), p * 2, repr(p.data), q.requires_grad, repr(p.detach()))

    same(program)


def test_a_parameter_is_of_its_own_class_and_what_is_made_of_it_is_a_tensor_like_torch():
    import copy

    def program(m):
        m.manual_seed(0)
        layer = m.nn.Linear(3, 2)
        lazy = m.nn.LazyLinear(2)
        before = repr(type(lazy.weight))
        lazy(m.ones(1, 3))
        w = layer.weight
        y = (w * 2).sum()
        y.backward()
        return ([repr(type(t)) for t in (w, w * 2, w.data, w.detach(), w.clone(), w[0], y, w.grad, lazy.weight,
                                         copy.deepcopy(w), m.nn.Parameter(m.ones(2)), m.nn.Parameter())],
                before, str(type(layer.bias)), type(w).__name__, y, w.grad_fn, w.requires_grad_(False) is w,
                isinstance(w, m.Tensor), isinstance(copy.deepcopy(w), m.nn.Parameter))

    same(program)


def test_zero_grad_train_eval_and_requires_grad_():
    def program(m):
        net = model(m)
        net(m.tensor(X)).sum().backward()
        had = [p.grad is not None for p in net.parameters()]
        net.zero_grad()
        net.eval()
        modes = [mod.training for mod in net.modules()]
        net.train()
        net.requires_grad_(False)
        return had, [p.grad for p in net.parameters()], modes, [mod.training for mod in net.modules()], \
            [p.requires_grad for p in net.parameters()]

    same(program)


def test_state_dict_round_trip_and_its_errors():
    def program(m):
        net = model(m)
        state = net.state_dict()
        other = m.nn.Sequential(m.nn.Linear(4, 3), m.nn.ReLU(), m.nn.Linear(3, 2, bias=False))
        result = other.load_state_dict(state)
        return (repr(result), [(k, v) for k, v in state.items()], [p for p in other.parameters()],
                type(state).__name__)

    same(program)

    def missing(m):
        state = collections.OrderedDict(model(m).state_dict())
        del state["0.bias"]
        state["extra"] = m.ones(1)
        return model(m).load_state_dict(state)

    same(missing)
    same(lambda m: model(m).load_state_dict({k: m.ones(1) for k in model(m).state_dict()}))

    def not_strict(m):
        result = model(m).load_state_dict({"0.bias": m.ones(3), "zzz": m.ones(1)}, strict=False)
        return result.missing_keys, result.unexpected_keys

    same(not_strict)


@pytest.mark.parametrize("bad", [
    lambda m: m.nn.Module().forward(m.ones(1)),
    lambda m: m.nn.Module()(m.ones(1)),
    lambda m: m.nn.Linear(2, 1).no_such_thing,
    lambda m: setattr(m.nn.Linear(2, 1), "weight", m.ones(1, 2)),
    lambda m: model(m)[5],
])
def test_module_misuse_raises_torchs_errors(bad):
    same(bad)


def test_init_functions_fill_in_place_without_recording():
    def program(m):
        w = m.nn.Parameter(m.empty(3, 4))
        m.nn.init.zeros_(w)
        zeros = w.clone()
        m.nn.init.constant_(w, 0.5)
        return zeros, w, w.grad_fn, w.is_leaf, m.nn.init.calculate_gain("relu"), m.nn.init.calculate_gain("tanh")

    same(program)


@pytest.mark.parametrize("fill, bound", [
    (lambda m, w: m.nn.init.xavier_uniform_(w), (6 / (40 + 30)) ** 0.5),
    (lambda m, w: m.nn.init.kaiming_uniform_(w, nonlinearity="relu"), 3 ** 0.5 * 2 ** 0.5 / 40 ** 0.5),
    (lambda m, w: m.nn.init.uniform_(w, -0.2, 0.2), 0.2),
])
def test_random_init_functions_stay_in_torchs_bounds(fill, bound):
    import autograd_core

    autograd_core.manual_seed(1)
    w = autograd_core.empty(30, 40)
    fill(autograd_core, w)
    values = w.numpy()
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound


def test_normal_init_has_the_asked_spread():
    import autograd_core

    autograd_core.manual_seed(2)
    w = autograd_core.nn.init.normal_(autograd_core.empty(200, 200), mean=1.0, std=0.01).numpy()
    assert abs(w.mean() - 1.0) < 1e-3 and abs(w.std() - 0.01) < 1e-3


# --- lazy layers: nn.LazyLinear and its UninitializedParameters --------------------------------------
def test_a_lazy_linear_holds_uninitialized_parameters_until_its_first_call():
    def program(m):
        layer = m.nn.LazyLinear(3)
        w = layer.weight
        before = (repr(layer), [repr(p) for p in layer.parameters()], repr(type(w)), isinstance(w, m.nn.Parameter),
                  isinstance(w, m.nn.UninitializedParameter), w.requires_grad, w.is_leaf, w.grad, w.grad_fn, w.dtype,
                  w.size(), w.size(0), w.is_floating_point(), w.data, layer.in_features, layer.out_features)
        filled = (layer.weight.data.normal_(0, 0.01), layer.bias.data.fill_(0))  # d2l's init: on the empty numbers
        opt = m.optim.SGD(layer.parameters(), lr=0.1)  # given before the shapes are known, as d2l's Trainer does
        first = layer(m.tensor(X))
        after = (repr(layer), type(layer).__name__, layer.in_features, w is layer.weight,
                 isinstance(w, m.nn.UninitializedParameter), isinstance(w, m.nn.Parameter), w.shape, layer.bias.shape,
                 opt.param_groups[0]["params"][0] is w, first.shape, first.grad_fn)
        with m.no_grad():
            layer.weight.copy_(m.tensor(W1))
            layer.bias.copy_(m.tensor(B1))
        y = layer(m.tensor(X))
        (y * y).sum().backward()
        opt.step()
        return before, filled, after, y, layer.weight, layer.bias, layer.weight.grad, repr(w)

    same(program)


@pytest.mark.parametrize("make", [
    lambda m: m.nn.LazyLinear(2, bias=False),
    lambda m: m.nn.LazyLinear(2, dtype=m.float64),
    lambda m: m.nn.Sequential(m.nn.LazyLinear(3), m.nn.ReLU(), m.nn.LazyLinear(1)),
])
def test_lazy_layers_take_their_shapes_bias_and_dtype_from_the_first_input(make):
    def program(m):
        net = make(m)
        before = repr(net), [repr(p) for p in net.parameters()]
        y = net(m.ones(2, 5, dtype=next(net.parameters()).dtype))
        return before, repr(net), [(n, p.shape, p.dtype, p.requires_grad) for n, p in net.named_parameters()], \
            y.shape, y.dtype, y.grad_fn

    same(program)


def test_a_lazy_linear_starts_as_linear_does_and_then_keeps_its_width():
    import autograd_core

    autograd_core.manual_seed(0)
    layer = autograd_core.nn.LazyLinear(50)
    layer(autograd_core.ones(2, 100))
    for p in (layer.weight, layer.bias):
        values = p.detach().numpy()
        assert np.abs(values).max() <= 0.1 and np.abs(values).max() > 0.09  # uniform in 1/sqrt(in_features)
    same(lambda m: (lambda layer: (layer(m.ones(1, 4)), layer(m.ones(1, 5))))(m.nn.LazyLinear(2)))


@pytest.mark.parametrize("bad", [
    lambda m: m.nn.UninitializedParameter().shape,
    lambda m: m.nn.LazyLinear(2).weight.shape,
])
def test_reading_an_uninitialized_parameters_shape_raises_torchs_error(bad):
    same(bad)


@pytest.mark.parametrize("use", [
    lambda m: m.nn.UninitializedParameter() * 2,
    lambda m: m.matmul(m.nn.UninitializedParameter(), m.ones(1)),
    lambda m: m.nn.UninitializedParameter().sum(),
    lambda m: m.nn.UninitializedParameter().detach(),
    lambda m: m.nn.LazyLinear(2).bias.numel(),
])
def test_an_operation_on_an_uninitialized_parameter_raises_torchs_error(use):
    # PyTorch names the function in its message ("in <method 'mul' of ...>"); the engine says "an operation"
    import autograd_core

    raised = []
    for m in (autograd_core, torch):
        with pytest.raises(Exception) as caught:
            use(m)
        raised.append((caught.type.__name__, re.sub(r" in .*?\. This error", " in <...>. This error", str(caught.value))))
    assert raised[0] == raised[1]


def test_an_uninitialized_parameter_can_stop_requiring_grad_and_be_materialized():
    def program(m):
        p = m.nn.UninitializedParameter()
        p.requires_grad = False
        q = m.nn.UninitializedParameter(requires_grad=False, dtype=m.float64)
        q.materialize((2, 3))
        q.zero_()
        return p.requires_grad, repr(p), str(p), q, q.dtype, isinstance(q, m.nn.Parameter), \
            isinstance(q, m.nn.UninitializedParameter)

    same(program)


def test_a_lazy_model_loads_a_state_dict_and_becomes_ordinary_on_its_first_call_like_torch():
    # d2l-en's file I/O page: clone = MLP(); clone.load_state_dict(torch.load('mlp.params')) on LazyLinear layers
    def program(m):
        m.manual_seed(0)
        trained = m.nn.Sequential(m.nn.LazyLinear(3), m.nn.ReLU(), m.nn.LazyLinear(2))
        trained(m.ones(4, 5))
        clone = m.nn.Sequential(m.nn.LazyLinear(3), m.nn.ReLU(), m.nn.LazyLinear(2))
        keys = clone.load_state_dict(trained.state_dict())
        before = (repr(clone), repr(type(clone[0].weight)), clone[0].weight.shape)
        y = clone(m.ones(1, 5))
        wrong_width = m.nn.LazyLinear(2)
        wrong_width.load_state_dict({"weight": m.ones(2, 3), "bias": m.zeros(2)})
        try:
            wrong_width(m.ones(4))
        except AssertionError as error:
            refused = str(error)
        conv = m.nn.LazyConv2d(2, 3)
        conv.load_state_dict({"weight": m.ones(2, 1, 3, 3), "bias": m.zeros(2)})
        return (before, repr(keys), y, trained(m.ones(1, 5)), repr(clone), refused, repr(wrong_width),
                conv(m.ones(1, 1, 4, 4)), repr(conv))

    same(program)


def test_a_lazy_model_moved_or_converted_before_its_first_call_like_torch():
    # d2l-en's GPU page: net = nn.Sequential(nn.LazyLinear(1)); net = net.to(device=try_gpu())
    def program(m):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.LazyLinear(2)).to(device="cpu").double()
        before = (repr(net), net[0].weight.dtype, repr(net[0].weight))
        return before, net(m.ones(1, 3, dtype=m.float64)), net[0].weight.dtype, repr(net)

    same(program)
