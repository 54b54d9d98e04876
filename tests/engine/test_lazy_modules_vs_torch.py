"""Lazy layers against PyTorch's: ``nn.LazyBatchNorm1d``/``2d``, ``nn.LazyConv1d``/``2d``,
``nn.LazyConvTranspose2d`` and ``nn.LazyLinear`` hold ``UninitializedParameter``s (and a batch norm
``UninitializedBuffer``s) until their first call, which gives them the input's sizes, starts them
as the ordinary layer starts (the same numbers after ``manual_seed``) and turns the module into that
layer (``cls_to_become``). Printing, ``state_dict``, saving and the errors before that call are
PyTorch's too. (``LazyLinear`` and ``LazyConv2d`` have more tests in test_nn_vs_torch.py and
test_layers_vs_torch.py.)"""
import copy
import io
import math
import re

import pytest

from engine_helpers import import_torch, same

torch = import_torch()

# (how the layer is made, the shape of its first input)
LAZY_LAYERS = [
    (lambda m: m.nn.LazyBatchNorm1d(), (4, 3)),
    (lambda m: m.nn.LazyBatchNorm1d(eps=1e-3, momentum=None, bias=False), (4, 3, 5)),
    (lambda m: m.nn.LazyBatchNorm1d(affine=False, dtype=m.float64), (4, 3)),
    (lambda m: m.nn.LazyBatchNorm1d(track_running_stats=False), (4, 3)),
    (lambda m: m.nn.LazyBatchNorm2d(), (2, 3, 4, 4)),
    (lambda m: m.nn.LazyConv1d(4, 3, padding=1), (2, 3, 5)),
    (lambda m: m.nn.LazyConv1d(4, 3, groups=2, bias=False), (6, 7)),
    (lambda m: m.nn.LazyConv2d(6, kernel_size=5, padding=2), (2, 3, 8, 8)),
    (lambda m: m.nn.LazyConvTranspose2d(4, 3, stride=2, padding=1, output_padding=1), (2, 3, 4, 4)),
    (lambda m: m.nn.LazyConvTranspose2d(4, 3, groups=2, bias=False), (6, 3, 3)),
    (lambda m: m.nn.LazyLinear(3), (2, 5)),
]
IDS = ["bn1d", "bn1d-3d-input", "bn1d-not-affine", "bn1d-no-running-stats", "bn2d", "conv1d", "conv1d-grouped",
       "conv2d", "convT2d", "convT2d-unbatched", "linear"]


def described(module):
    """What a layer shows of itself: its repr, its class, and its state_dict's entries (an uninitialized one
    by its repr: it has no numbers to compare)."""
    return repr(module), type(module).__name__, [
        (name, repr(t) if "Uninitialized" in type(t).__name__ else t.detach(), type(t).__name__, t.requires_grad)
        for name, t in module.state_dict(keep_vars=True).items()]


@pytest.mark.parametrize(("make", "shape"), LAZY_LAYERS, ids=IDS)
def test_a_lazy_layer_is_uninitialized_until_its_first_call_then_becomes_the_ordinary_layer(make, shape):
    def program(m):
        m.manual_seed(0)
        layer = make(m)
        before = described(layer), [repr(p) for p in layer.parameters()], [repr(b) for b in layer.buffers()], \
            repr(layer.state_dict()), layer.has_uninitialized_params(), layer.cls_to_become.__name__
        x = m.arange(float(math.prod(shape)), dtype=[*layer.parameters(), *layer.buffers()][0].dtype).reshape(shape)
        y = layer(x.sin())
        after = described(layer), [(n, p.shape, p.dtype, p._version) for n, p in layer.named_parameters()], \
            [(n, b.shape, b.dtype, b._version) for n, b in layer.named_buffers()]
        return before, after, y.shape, y.dtype, y.grad_fn, hasattr(layer, "initialize_parameters")

    same(program)


def test_lazy_batch_norm_normalizes_and_trains_as_batch_norm_does():
    # d2l-en's transformer page: bn = nn.LazyBatchNorm1d(); bn(X) in training mode, next to a LayerNorm
    def program(m):
        bn, plain = m.nn.LazyBatchNorm1d(), m.nn.BatchNorm1d(2)
        x = m.tensor([[1.0, 2.0], [2.0, 3.0], [0.5, -1.0]], requires_grad=True)
        y, z = bn(x), plain(x)
        (y * y.exp()).sum().backward()
        bn.eval()
        evaluated = bn(x)
        return (y, z, x.grad, bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var, bn.num_batches_tracked,
                evaluated, repr(bn), [p._version for p in (bn.weight, bn.bias, bn.running_mean, bn.running_var)],
                [p._version for p in (plain.weight, plain.bias, plain.running_mean, plain.running_var)])

    same(program)


def test_an_optimizer_given_a_lazy_layers_parameters_updates_them_after_its_first_call():
    def program(m):
        bn = m.nn.LazyBatchNorm2d()
        opt = m.optim.SGD(bn.parameters(), lr=0.5)
        y = bn(m.arange(48.0).reshape(2, 3, 2, 4).cos())
        (y * m.arange(48.0).reshape(2, 3, 2, 4)).sum().backward()
        opt.step()
        return bn.weight, bn.bias, opt.param_groups[0]["params"][0] is bn.weight

    same(program)


@pytest.mark.parametrize("bad", [
    lambda m: m.nn.LazyBatchNorm1d()(m.ones(4, 3, 2, 2)),        # the wrong number of dimensions
    lambda m: m.nn.LazyBatchNorm2d()(m.ones(4, 3)),
    lambda m: m.nn.LazyBatchNorm1d()(m.ones(1, 3)),              # one value per channel in training
    lambda m: m.nn.LazyConv1d(4, 3)(m.ones(2, 3, 5, 5)),
    lambda m: m.nn.LazyConvTranspose2d(4, 3)(m.ones(5, 5)),
    lambda m: m.nn.LazyConv1d(4, 3, groups=2)(m.ones(2, 3, 5)),  # channels not divisible by groups
    lambda m: m.nn.LazyBatchNorm1d().running_var.shape,
    lambda m: m.nn.LazyBatchNorm1d().state_dict()["weight"].shape,
    lambda m: m.nn.Linear(3, 2).load_state_dict(m.nn.LazyLinear(2).state_dict()),
    lambda m: m.nn.BatchNorm1d(3).load_state_dict(m.nn.LazyBatchNorm1d().state_dict()),
])
def test_a_lazy_layers_errors_are_torchs(bad):
    same(bad)


def test_an_operation_on_an_uninitialized_buffer_raises_torchs_error():
    # PyTorch names the function in its message ("in <method 'add' of ...>"); the engine says "an operation"
    import autograd_core

    raised = []
    for m in (autograd_core, torch):
        with pytest.raises(ValueError) as caught:
            m.nn.LazyBatchNorm1d().running_mean + 1
        raised.append(re.sub(r" in .*?\. This error", " in <...>. This error", str(caught.value)))
    assert raised[0] == raised[1]
    assert "`torch.nn.parameter.UninitializedBuffer` objects" in raised[0]


def test_after_a_wrong_first_input_a_lazy_layer_has_become_the_ordinary_one_as_in_torch():
    def program(m):
        bn = m.nn.LazyBatchNorm2d()
        try:
            bn(m.ones(4, 3))
        except ValueError as error:
            refused = str(error)
        return refused, repr(bn), bn.running_mean, bn(m.ones(2, 3, 2, 2)).shape

    same(program)


def test_uninitialized_tensors_print_convert_and_materialize_as_torchs():
    def program(m):
        b = m.nn.UninitializedBuffer()
        p = m.nn.UninitializedParameter(requires_grad=False)
        net = m.nn.Sequential(m.nn.LazyBatchNorm1d()).double()
        shown = (repr(b), str(b), repr(type(b)), b.requires_grad, b.dtype, b.size(), isinstance(b, m.Tensor),
                 isinstance(b, m.nn.Parameter), m.nn.parameter.is_lazy(b), m.nn.parameter.is_lazy(m.ones(1)),
                 net[0].running_mean.dtype, net[0].weight.dtype, repr(net))
        b.materialize((2, 3))
        p.materialize((3,), dtype=m.float64)
        b.zero_(), p.fill_(1)
        y = net(m.ones(2, 4, dtype=m.float64))
        return shown, b, repr(type(b)), p, repr(type(p)), y, net[0].running_var, repr(net)

    same(program)


def test_a_lazy_model_is_saved_loaded_and_copied_uninitialized_as_in_torch():
    def program(m):
        net = m.nn.Sequential(m.nn.LazyLinear(3), m.nn.LazyBatchNorm1d())
        copied = copy.deepcopy(net[0])
        saved = io.BytesIO()
        m.save(net, saved)
        saved.seek(0)
        loaded = m.load(saved, weights_only=False)
        before = repr(loaded), repr(loaded.state_dict()), repr(copied), repr(copied.weight)
        y = loaded(m.ones(4, 2))
        state = io.BytesIO()
        m.save(net.state_dict(), state)  # its entries are the uninitialized tensors themselves
        state.seek(0)
        return before, y.shape, repr(loaded), m.load(state, weights_only=False).keys() == net.state_dict().keys()

    same(program)


def test_loading_a_state_dict_gives_a_lazy_batch_norm_its_shapes_as_in_torch():
    def program(m):
        trained = m.nn.BatchNorm1d(3)
        trained(m.arange(12.0).reshape(4, 3))
        lazy = m.nn.LazyBatchNorm1d()
        keys = lazy.load_state_dict(trained.state_dict())
        before = repr(lazy), lazy.running_mean, lazy.num_batches_tracked
        return before, repr(keys), lazy(m.ones(2, 3)), repr(lazy), lazy.running_mean

    same(program)


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float64"), ("float64", "float32", "float32"),
                                    ("float64", "float32", "float64"), ("float32", "float32", "float64"),
                                    ("float64", "float64", "float16"), ("float16", "float32", "float32"),
                                    ("float16", "float32", "float16"), ("float32", "float16", "float32")])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_refuses_mixed_dtypes_as_torch_does(dtypes, training):
    # found by running d2l-en's transformer page in float64: its float32 X through a float64 LazyBatchNorm1d
    x, w, r = dtypes

    def program(m):
        out = m.nn.functional.batch_norm(m.ones(3, 2, dtype=getattr(m, x)), m.zeros(2, dtype=getattr(m, r)),
                                         m.ones(2, dtype=getattr(m, r)), m.ones(2, dtype=getattr(m, w)),
                                         m.zeros(2, dtype=getattr(m, w)), training=training)
        return out.dtype, out.shape

    same(program)
    same(lambda m: m.nn.functional.batch_norm(m.ones(3, 2, dtype=getattr(m, x)), None, None,
                                              m.ones(2, dtype=getattr(m, w)), training=True).dtype)
    same(lambda m: m.nn.LazyBatchNorm1d(dtype=getattr(m, w))(m.ones(3, 2, dtype=getattr(m, x))).dtype)


def test_a_lazy_layer_loads_another_lazy_layers_state_dict_as_in_torch():
    def program(m):
        m.manual_seed(0)
        linear, bn = m.nn.LazyLinear(2), m.nn.LazyBatchNorm1d()
        keys = linear.load_state_dict(m.nn.LazyLinear(2).state_dict()), bn.load_state_dict(m.nn.LazyBatchNorm1d().state_dict())
        before = [repr(k) for k in keys], repr(linear), repr(linear.weight), repr(bn.running_mean)
        return before, linear(m.ones(1, 3)).shape, repr(linear), linear.weight.detach(), bn(m.ones(2, 4)), repr(bn)

    same(program)
