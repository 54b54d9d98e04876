"""Convolution, pooling, dropout, embedding and batch normalization against PyTorch's: values, gradients, second derivatives,
graph nodes, module printing, initial weights (bit for bit after ``manual_seed``), dropout masks
(bit for bit) and the errors for wrong shapes. Enough for LeNet in the 60-minute blitz and d2l."""
import numpy as np
import pytest

import autograd_core
from engine_helpers import import_torch, same
from test_random_vs_torch import draws_alike

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")

RNG = np.random.default_rng(29)
IMAGES = RNG.standard_normal((2, 4, 9, 8))
FILTERS = RNG.standard_normal((6, 4, 3, 3))
BIAS = RNG.standard_normal(6)


def leaf(m, array):
    return m.tensor(array.tolist(), dtype=m.float64, requires_grad=True)


# -- convolution -------------------------------------------------------------------------------

CONVS = [
    dict(), dict(stride=2), dict(padding=1), dict(padding=(2, 0), stride=(1, 3)), dict(dilation=2),
    dict(dilation=(2, 1), padding=2, stride=2), dict(groups=2), dict(padding="same"), dict(padding="valid"),
    dict(padding="same", dilation=2), dict(groups=2, stride=2, padding=1, bias=False),
]

SIGNALS = RNG.standard_normal((2, 4, 11))
FILTERS_1D = RNG.standard_normal((6, 4, 3))
CONVS_1D = [
    dict(), dict(stride=2), dict(padding=2), dict(dilation=2, padding=1, stride=3), dict(groups=2),
    dict(padding="same"), dict(padding="same", dilation=3), dict(padding="valid"), dict(groups=2, bias=False),
]


@pytest.mark.parametrize("conv, inputs, filters, options",
                         [("conv2d", IMAGES, FILTERS, o) for o in CONVS]
                         + [("conv1d", SIGNALS, FILTERS_1D, o) for o in CONVS_1D],
                         ids=[f"conv2d-{o}" for o in CONVS] + [f"conv1d-{o}" for o in CONVS_1D])
def test_convolution_values_gradients_and_second_derivatives(conv, inputs, filters, options):
    def program(m):
        options_ = dict(options)
        groups = options_.get("groups", 1)
        x, w = leaf(m, inputs), leaf(m, filters[:, :4 // groups])
        b = None if options_.pop("bias", True) is False else leaf(m, BIAS)
        y = getattr(m.nn.functional, conv)(x, w, b, **options_)
        loss = (y * y.sin()).sum()
        gx, gw = m.autograd.grad(loss, (x, w), create_graph=True)
        (gx.pow(2).sum() + (gw * gw.cos()).sum()).backward()
        # (the first gradients' own nodes are not compared: PyTorch records one ConvolutionBackwardBackward0)
        return y, gx.detach(), gw.detach(), x.grad, w.grad, None if b is None else b.grad

    same(program)


def test_one_image_without_a_batch_dimension_and_float32():
    def program(m):
        x = m.tensor(IMAGES[0].tolist(), requires_grad=True)
        conv = m.nn.Conv2d(4, 6, 3, padding=1)
        with m.no_grad():
            conv.weight.copy_(m.tensor(FILTERS.tolist()))
            conv.bias.copy_(m.tensor(BIAS.tolist()))
        y = conv(x)
        y.sum().backward()
        return y.grad_fn, y.shape, x.grad, conv.weight.grad, conv.bias.grad

    same(program)


def test_conv1d_layer_prints_starts_and_learns_as_pytorchs():
    def program(m):
        m.manual_seed(0)
        layers = [m.nn.Conv1d(4, 6, 3), m.nn.Conv1d(4, 6, 5, stride=2, padding=2, dilation=2, groups=2, bias=False),
                  m.nn.Conv1d(4, 6, 3, padding="same")]
        x = m.tensor(SIGNALS.tolist(), requires_grad=True)
        y = layers[0](x)
        y.sum().backward()
        one = layers[2](x[0])  # one signal (C, L), without a batch dimension
        return ([repr(layer) for layer in layers], [p.detach() for layer in layers for p in layer.parameters()],
                y, x.grad, layers[0].weight.grad, layers[0].bias.grad, one.grad_fn, one.shape)

    same(program)


CONV1D_ERRORS = [
    lambda m: m.nn.Conv1d(1, 6, 5)(m.ones(2, 3, 28)),
    lambda m: m.nn.Conv1d(1, 6, 5)(m.ones(2, 1, 2, 28)),
    lambda m: m.nn.Conv1d(1, 6, 5)(m.ones(1, 1, 4)),
    lambda m: m.nn.Conv1d(1, 6, 3, padding="same", stride=2),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 5), m.ones(2, 3)),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 5), m.ones(2, 1, 3), m.ones(3)),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 5), m.ones(2, 1, 3), stride=0),
    lambda m: m.nn.functional.conv1d(m.ones(1, 1, 5), m.ones(1, 1, 3), padding="same", stride=2),
]


@pytest.mark.parametrize("program", CONV1D_ERRORS)
def test_conv1d_errors_are_pytorchs(program):
    same(program)


def test_unfold_and_fold_are_each_others_gradient():
    def program(m):
        x = leaf(m, IMAGES)
        cols = m.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=2)
        back = m.nn.functional.fold(cols * cols, (9, 8), (2, 3), dilation=(1, 2), padding=1, stride=2)
        g, = m.autograd.grad(back.sum(), x, create_graph=True)
        g.sum().backward()
        return cols, back, g.detach(), x.grad

    same(program)


def test_conv2d_initial_weights_are_pytorchs_bits():
    draws_alike(lambda m: [p.detach() for layer in (m.nn.Conv2d(1, 6, 5), m.nn.Conv2d(6, 16, (3, 5), groups=2),
                                                    m.nn.Conv2d(3, 4, 1, bias=False))
                           for p in layer.parameters()]
                + [m.nn.init.xavier_uniform_(m.nn.Conv2d(6, 16, 5).weight).detach(),  # d2l's init_cnn
                   m.nn.init.kaiming_normal_(m.nn.Conv2d(3, 8, 3).weight, nonlinearity="relu").detach()])


def test_lazy_conv2d_takes_its_channels_from_the_first_input():
    def program(m):
        conv = m.nn.LazyConv2d(6, kernel_size=5, padding=2)
        grouped = m.nn.LazyConv2d(4, 3, groups=2, bias=False)
        before = repr(conv), repr(grouped), repr(conv.weight)
        y = conv(m.ones(2, 3, 8, 8))
        grouped(m.ones(4, 5, 5))
        return before, repr(conv), type(conv).__name__, y.shape, conv.weight.detach(), conv.bias.detach(), grouped.weight.detach()

    draws_alike(program)
    same(lambda m: m.nn.LazyConv2d(6, 3)(m.ones(3, 8)))


CONV_ERRORS = [
    lambda m: m.nn.Conv2d(1, 6, 5)(m.ones(2, 3, 28, 28)),
    lambda m: m.nn.Conv2d(1, 6, 5)(m.ones(64, 784)),
    lambda m: m.nn.Conv2d(1, 6, 5)(m.ones(1, 1, 4, 4)),
    lambda m: m.nn.Conv2d(4, 6, 3, groups=4),
    lambda m: m.nn.Conv2d(3, 6, 3, groups=2),
    lambda m: m.nn.Conv2d(1, 6, 3, padding="same", stride=2),
    lambda m: m.nn.Conv2d(1, 6, 3, padding="full"),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 3)),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 1, 3, 3, dtype=m.float64)),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 1, 3, 3), m.ones(3)),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 1, 3, 3), stride=0),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 1, 3, 3), padding=-1),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(2, 1, 3, 3), dilation=0),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3), padding="same", stride=2),
    lambda m: m.nn.functional.conv2d(m.ones(1, 1, 5, 5), m.ones(1, 1, 3, 3), padding="full"),
    lambda m: m.nn.functional.conv2d(m.ones(0, 1, 5, 5), m.ones(1, 1, 3, 3)).shape,
]


@pytest.mark.parametrize("program", CONV_ERRORS)
def test_conv2d_errors_are_pytorchs(program):
    same(program)


def test_modules_print_as_pytorchs():
    same(lambda m: repr(m.nn.Sequential(
        m.nn.Conv2d(1, 6, 5), m.nn.Conv2d(6, 16, (3, 5), stride=2, padding=1, bias=False),
        m.nn.Conv2d(4, 8, 3, padding="same", dilation=2, groups=2), m.nn.MaxPool2d(2),
        m.nn.MaxPool2d(3, 2, 1, ceil_mode=True), m.nn.AvgPool2d(2),
        m.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, divisor_override=2),
        m.nn.AdaptiveAvgPool2d((1, 1)), m.nn.AdaptiveAvgPool2d(5), m.nn.Dropout(), m.nn.Dropout(0.2, True),
        m.nn.Flatten())))


# -- pooling -----------------------------------------------------------------------------------

POOLS = [
    lambda m, x: m.nn.functional.max_pool2d(x, 2),
    lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
    lambda m, x: m.nn.functional.max_pool2d(x, (2, 3), stride=(1, 2), dilation=(2, 1)),
    lambda m, x: m.nn.functional.max_pool2d(x, 3, stride=2, ceil_mode=True),
    lambda m, x: m.nn.functional.max_pool2d(x, 2, return_indices=True),
    lambda m, x: m.nn.MaxPool2d(2)(x[0]),
    lambda m, x: m.nn.functional.avg_pool2d(x, 2),
    lambda m, x: m.nn.functional.avg_pool2d(x, 3, stride=2, padding=1),
    lambda m, x: m.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False),
    lambda m, x: m.nn.functional.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda m, x: m.nn.functional.avg_pool2d(x, 3, stride=2, ceil_mode=True, count_include_pad=False),
    lambda m, x: m.nn.functional.avg_pool2d(x, 2, divisor_override=3),
    lambda m, x: m.nn.AvgPool2d((2, 1))(x[1]),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (4, 3)),
    lambda m, x: m.nn.AdaptiveAvgPool2d((5, None))(x),
    lambda m, x: m.nn.AdaptiveAvgPool2d(2)(x[0]),
]


@pytest.mark.parametrize("pool", POOLS)
def test_pooling_values_gradients_and_second_derivatives(pool):
    def program(m):
        x = leaf(m, IMAGES)
        out = pool(m, x)
        y = out[0] if isinstance(out, tuple) else out
        g, = m.autograd.grad((y * y * y).sum(), x, create_graph=True)
        (g * g).sum().backward()
        return out, g.detach(), x.grad

    same(program)


def test_max_pool_keeps_the_first_of_equal_numbers():
    same(lambda m: m.nn.functional.max_pool2d(m.tensor([[[[1.0, 1, 0], [1, 1, 2], [0, 2, 2]]]]), 2, stride=1,
                                              return_indices=True))


POOL_ERRORS = [
    lambda m: m.nn.functional.max_pool2d(m.ones(1, 6, 1, 1), 2),
    lambda m: m.nn.functional.max_pool2d(m.ones(1, 6, 8, 8), 2, padding=2),
    lambda m: m.nn.functional.max_pool2d(m.ones(8, 8), 2),
    lambda m: m.nn.functional.max_pool2d(m.ones(8), 2),
    lambda m: m.nn.functional.max_pool2d(m.ones(1, 1, 4, 4), 0),
    lambda m: m.nn.functional.avg_pool2d(m.ones(1, 6, 1, 1), 2),
    lambda m: m.nn.functional.avg_pool2d(m.ones(1, 6, 8, 8), 2, padding=2),
    lambda m: m.nn.functional.avg_pool2d(m.ones(8, 8), 2),
    lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(4), 1),
    lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(1, 1, 4, 4), (2, 2, 2)),
    lambda m: m.nn.functional.max_pool2d(m.ones(1, 0, 4, 4), 2),
    lambda m: m.nn.functional.max_pool2d(m.ones(0, 4, 4), 2),
    lambda m: m.nn.functional.avg_pool2d(m.ones(1, 0, 4, 4), 2),
    lambda m: m.nn.functional.avg_pool2d(m.ones(4, 4, 4, 4, 4), 2),
    lambda m: m.nn.functional.max_pool2d(m.ones(0, 1, 4, 4), 2).shape,
    lambda m: m.nn.functional.avg_pool2d(m.ones(0, 1, 4, 4), 2).shape,
    lambda m: m.nn.functional.adaptive_avg_pool2d(m.ones(0, 1, 4, 4), 2).shape,
]


@pytest.mark.parametrize("program", POOL_ERRORS)
def test_pooling_errors_are_pytorchs(program):
    same(program)


# -- dropout -----------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.0, 0.2, 0.5, 0.9, 1.0])
def test_dropout_masks_are_pytorchs_bit_for_bit(p):
    def program(m):
        x = m.ones(3, 50, requires_grad=True)
        drop = m.nn.Dropout(p)
        y = drop(x)
        y.sum().backward()
        out = [y, x.grad, m.nn.functional.dropout(m.ones(7, 3, dtype=m.float64).t(), p),
               m.nn.functional.dropout(m.ones(64, 120, dtype=m.float16), p),
               m.nn.functional.dropout(m.ones(5), p, training=False)]
        drop.eval()
        return out + [drop(x) is x, m.nn.functional.dropout(x, 0.5, training=False) is x, m.rand(3)]

    draws_alike(program)


def test_dropout_in_place_and_errors():
    def program(m):
        x = m.ones(2, 8)
        y = m.nn.Dropout(0.5, inplace=True)(x)
        return y is x, x

    draws_alike(program)
    same(lambda m: m.nn.Dropout(-0.1))
    same(lambda m: m.nn.functional.dropout(m.ones(3), 1.5))
    draws_alike(lambda m: [m.nn.functional.dropout(m.ones(3, dtype=m.long), 0.5), m.rand(2)])


def test_a_lenet_trains_as_pytorchs():
    """d2l's LeNet (sigmoid, average pooling, padding 2) and the blitz's (relu, max pooling) with
    PyTorch's initial weights after the same seed: one SGD step gives the same loss and weights."""
    def program(m):
        nn = m.nn
        m.manual_seed(1)
        d2l = nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                            nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(), nn.Linear(120, 84), nn.Sigmoid(),
                            nn.Linear(84, 10))
        blitz = nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d((2, 2)), nn.Conv2d(6, 16, 5), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Dropout(0.5),
                              nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
        out = []
        for net, size in ((d2l, 28), (blitz, 32)):
            x = m.randn(8, 1, size, size)
            labels = m.randint(0, 10, (8,))
            opt = m.optim.SGD(net.parameters(), lr=0.1)
            loss = nn.CrossEntropyLoss()(net(x), labels)
            loss.backward()
            opt.step()
            out += [loss, net[0].weight, net[-1].bias.grad]
        return out

    same(program)


# -- the op without PyTorch: gradients against finite differences ------------------------------

def test_conv_and_pool_gradients_match_finite_differences():
    x = autograd_core.tensor(IMAGES[:1, :2, :6, :6], requires_grad=True)
    w = autograd_core.tensor(FILTERS[:3, :2], requires_grad=True)
    assert autograd_core.autograd.gradcheck(
        lambda x, w: autograd_core.nn.functional.max_pool2d(
            autograd_core.nn.functional.conv2d(x, w, padding=1, stride=(1, 2)), 2, ceil_mode=True), (x, w))


# -- embedding -----------------------------------------------------------------------------------

@pytest.mark.parametrize("padding_idx", [None, 1, -1], ids=str)
@pytest.mark.parametrize("index_dtype", ["long", "int"])
def test_embedding_lookup_gradients_and_printing_match_torch(padding_idx, index_dtype):
    def program(m):
        m.manual_seed(0)
        table = m.nn.Embedding(5, 3, padding_idx=padding_idx)
        ix = m.tensor([[1, 2], [2, 4]], dtype=getattr(m, index_dtype))
        y = table(ix)
        (y * y).sum().backward()
        return repr(table), table.weight, y, table.weight.grad, table(m.tensor(2, dtype=getattr(m, index_dtype)))

    same(program)


def test_embedding_second_derivative_and_from_pretrained_match_torch():
    def program(m):
        w = m.tensor(IMAGES[0, 0, :4, :2].tolist(), dtype=m.float64, requires_grad=True)
        out = m.nn.functional.embedding(m.tensor([0, 3, 3]), w)
        (g,) = m.autograd.grad((out ** 3).sum(), w, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), w)
        frozen = m.nn.Embedding.from_pretrained(m.ones(2, 3))
        return out, g.detach(), gg, repr(frozen), frozen.weight.requires_grad, frozen(m.tensor([1, 0])), \
            m.nn.functional.embedding(m.tensor([], dtype=m.long), m.ones(3, 2))

    same(program)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.Embedding(5, 3)(m.tensor([1.0])),
    lambda m: m.nn.Embedding(5, 3)(m.tensor([5])),
    lambda m: m.nn.Embedding(5, 3)(m.tensor([-1])),
    lambda m: m.nn.Embedding(5, 3)(m.tensor([1], dtype=m.int16)),
    lambda m: m.nn.Embedding(5, 3, padding_idx=5),
    lambda m: m.nn.Embedding(5, 3, padding_idx=-6),
    lambda m: m.nn.functional.embedding(m.tensor([1]), m.ones(3)),
    lambda m: m.nn.Embedding.from_pretrained(m.ones(3)),
    lambda m: m.nn.Embedding(2, 3, _weight=m.ones(3, 3)),
    lambda m: m.nn.Embedding(5, 3)([1]),
])
def test_embedding_errors_match_torch(call):
    same(call)


# -- batch normalization -------------------------------------------------------------------------

BATCHNORMS = [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (5, 4, 3)), ("BatchNorm2d", (3, 4, 2, 3))]


@pytest.mark.parametrize("options", [dict(), dict(momentum=None), dict(affine=False), dict(bias=False),
                                     dict(track_running_stats=False)], ids=str)
@pytest.mark.parametrize("layer, shape", BATCHNORMS, ids=str)
def test_batch_norm_training_and_evaluation_match_torch(layer, shape, options, dtype="float32"):
    def program(m):
        m.manual_seed(0)
        bn = getattr(m.nn, layer)(4, **options).to(getattr(m, dtype))
        x = (m.randn(*shape, dtype=getattr(m, dtype)) * 3 + 1).requires_grad_()
        y = bn(x)
        (y * m.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        y2 = bn(x * 2)
        grads = [x.grad] + [p.grad for p in bn.parameters()]
        bn.eval()
        y3 = bn(x)
        return repr(bn), list(bn.state_dict()), y, y2, y3, grads, bn.running_mean, bn.running_var, \
            bn.num_batches_tracked

    same(program)


def test_batch_norm_in_float64_matches_torch():
    test_batch_norm_training_and_evaluation_match_torch("BatchNorm1d", (5, 4, 3), {}, "float64")


def test_batch_norm_second_derivatives_match_torch():
    def program(m):
        bn = m.nn.BatchNorm1d(4).double()
        x = leaf(m, IMAGES[0, :, :5, 0].T)
        (g,) = m.autograd.grad((bn(x) ** 3 * m.tensor([1.0, -2.0, 0.5, 3.0], dtype=m.float64)).sum(), x,
                               create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        bn.eval()
        (h,) = m.autograd.grad((bn(x) ** 3).sum(), x, create_graph=True)
        (hh,) = m.autograd.grad((h * h).sum(), x)
        return g.detach(), gg, h.detach(), hh

    same(program)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.BatchNorm1d(3)(m.randn(1, 3)),
    lambda m: m.nn.BatchNorm1d(3)(m.randn(3)),
    lambda m: m.nn.BatchNorm2d(3)(m.randn(2, 3, 4)),
    lambda m: m.nn.BatchNorm1d(3).eval()(m.ones(1, 3)),
    lambda m: m.nn.functional.batch_norm(m.ones(4, 2), None, None, training=True),
])
def test_batch_norm_errors_and_edge_cases_match_torch(call):
    same(call)


# -- transposed convolution ---------------------------------------------------------------------

TRANSPOSED = [
    dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1), dict(padding=(1, 0), stride=(2, 3)),
    dict(dilation=2, stride=2, output_padding=1), dict(groups=2), dict(groups=2, stride=3, bias=False),
]


@pytest.mark.parametrize("options", TRANSPOSED, ids=str)
def test_transposed_convolution_values_gradients_and_second_derivatives(options):
    def program(m):
        options_ = dict(options)
        groups = options_.get("groups", 1)
        x, w = leaf(m, IMAGES), leaf(m, FILTERS.transpose(1, 0, 2, 3)[:4, :6 // groups])  # (in 4, out/groups, 3, 3)
        b = None if options_.pop("bias", True) is False else leaf(m, BIAS)
        y = m.nn.functional.conv_transpose2d(x, w, b, **options_)
        gx, gw = m.autograd.grad((y * y.sin()).sum(), (x, w), create_graph=True)
        (gx.pow(2).sum() + (gw * gw.cos()).sum()).backward()
        return y, gx.detach(), gw.detach(), x.grad, w.grad, None if b is None else b.grad

    same(program)


def test_conv_transpose2d_layer_starts_prints_and_learns_as_pytorchs():
    def program(m):
        m.manual_seed(0)
        layers = [m.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                  m.nn.ConvTranspose2d(4, 6, (3, 2), groups=2, bias=False, dilation=2)]
        layers = [layer.double() for layer in layers]  # (float64: printed to the last digit alike)
        x = m.randn(2, 4, 5, 5, dtype=m.float64)
        ys = [layer(x) for layer in layers] + [layers[0](x, output_size=[9, 9]), layers[1](x[0])]
        sum(y.sum() for y in ys).backward()
        return ys, [repr(layer) for layer in layers], [p.grad for layer in layers for p in layer.parameters()], \
            [list(layer.state_dict()) for layer in layers]
    same(program)
    draws_alike(lambda m: [p.detach() for p in m.nn.ConvTranspose2d(3, 8, 4, groups=1).parameters()])


@pytest.mark.parametrize("program", [
    lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 3, 3, 3), stride=2, output_padding=2),
    lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(3, 3, 3, 3)),
    lambda m: m.nn.functional.conv_transpose2d(m.ones(4, 5), m.ones(4, 3, 3, 3)),
    lambda m: m.nn.functional.conv_transpose2d(m.ones(1, 4, 5, 5), m.ones(4, 3, 3, 3), m.ones(4)),
    lambda m: m.nn.ConvTranspose2d(4, 3, 3, padding_mode="reflect"),
])
def test_conv_transpose2d_errors_are_pytorchs(program):
    same(program)
