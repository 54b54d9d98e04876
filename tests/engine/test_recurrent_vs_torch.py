"""nn.RNN, nn.GRU and nn.LSTM against PyTorch's: the parameters' names and starting values (bit for
bit after ``manual_seed``), outputs and final states, gradients of every parameter, dropout between
layers (PyTorch's masks), batch-first and unbatched input, given states, printing and errors."""
import numpy as np
import pytest

from engine_helpers import import_torch, same
from test_random_vs_torch import draws_alike

torch = import_torch()

LAYERS = ["RNN", "GRU", "LSTM"]
SETTINGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(num_layers=3, bidirectional=True),
            dict(batch_first=True), dict(bias=False, num_layers=2), dict(nonlinearity="relu")]


def run(m, layer, settings, dtype="float64", hidden=None, shape=(5, 2, 3), train=True):
    """A program's part: the layer made after manual_seed(0), run on a random sequence, backward of its
    outputs; what it gives, as arrays (float32 sums are PyTorch's only to rounding) and names."""
    m.manual_seed(0)
    if layer != "RNN":
        settings = {k: v for k, v in settings.items() if k != "nonlinearity"}
    rnn = getattr(m.nn, layer)(3, 4, **settings).to(getattr(m, dtype))
    rnn.train(train)
    x = m.randn(*shape, dtype=getattr(m, dtype), requires_grad=True)
    output, state = rnn(x, hidden(m) if hidden else None)
    states = state if isinstance(state, tuple) else (state,)
    (output.sin().sum() + sum((s * s).sum() for s in states)).backward()
    names = [n for n, _ in rnn.named_parameters()]
    return (output.detach().numpy(), [s.detach().numpy() for s in states], x.grad.numpy(),
            [p.grad.numpy() for p in rnn.parameters()], names, repr(rnn), tuple(output.shape))


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize("layer", LAYERS)
def test_outputs_states_and_gradients_are_torchs(layer, settings):
    same(lambda m: run(m, layer, settings))


@pytest.mark.parametrize("layer", LAYERS)
def test_float32_layers_agree_to_rounding(layer):
    same(lambda m: run(m, layer, dict(num_layers=2, bidirectional=True), dtype="float32"))


@pytest.mark.parametrize("layer", LAYERS)
def test_starting_values_are_torchs_bits(layer):
    draws_alike(lambda m: [p.detach() for p in getattr(m.nn, layer)(3, 5, num_layers=2, bidirectional=True).parameters()]
                + [m.randn(2)])


@pytest.mark.parametrize("layer", LAYERS)
def test_dropout_between_layers_draws_torchs_masks(layer):
    same(lambda m: run(m, layer, dict(num_layers=3, dropout=0.5, bidirectional=True)))
    same(lambda m: run(m, layer, dict(num_layers=3, dropout=0.5), train=False))


@pytest.mark.parametrize("layer", LAYERS)
def test_given_states_and_unbatched_input_are_torchs(layer):
    lstm = layer == "LSTM"

    def hidden(m, shape=(2, 2, 4)):
        h = m.randn(*shape, dtype=m.float64)
        return (h, m.randn(*shape, dtype=m.float64)) if lstm else h
    same(lambda m: run(m, layer, dict(num_layers=2), hidden=hidden))
    same(lambda m: run(m, layer, dict(num_layers=2), hidden=lambda m: hidden(m, (2, 4)), shape=(5, 3)))
    same(lambda m: run(m, layer, dict(bidirectional=True), shape=(5, 3)))


def test_the_nodes_of_rnn_and_gru_outputs_are_torchs():
    def program(m):
        m.manual_seed(0)
        x = m.randn(4, 2, 3)
        made = [m.nn.RNN(3, 4)(x), m.nn.GRU(3, 4)(x), m.nn.RNN(3, 4, bidirectional=True)(x),
                m.nn.GRU(3, 4, batch_first=True)(x), m.nn.RNN(3, 4, nonlinearity="relu")(x[:, 0])]
        # each output's node and the nodes it comes from (further in, the engine's unbind of the steps
        # records SelectBackward0 nodes where PyTorch records one UnbindBackward0)
        return [(out.grad_fn.name(), [f.name() for f, _ in out.grad_fn.next_functions], h.grad_fn.name(),
                 [f.name() for f, _ in h.grad_fn.next_functions]) for out, h in made]
    same(program)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.RNN(3, 4)(m.ones(1, 5, 2, 3)),
    lambda m: m.nn.GRU(3, 4)(m.ones(1, 5, 2, 3)),
    lambda m: m.nn.LSTM(3, 4)(m.ones(1, 5, 2, 3)),
    lambda m: m.nn.GRU(3, 4)(m.ones(5, 2, 7)),
    lambda m: m.nn.RNN(3, 4)(m.ones(5, 2, 3), m.zeros(2, 2, 4)),
    lambda m: m.nn.LSTM(3, 4)(m.ones(5, 2, 3), (m.zeros(2, 2, 4), m.zeros(1, 2, 4))),
    lambda m: m.nn.LSTM(3, 4)(m.ones(5, 2, 3), (m.zeros(1, 2, 4), m.zeros(2, 2, 4))),
    lambda m: m.nn.GRU(3, 4)(m.ones(5, 3), m.zeros(1, 2, 4)),
    lambda m: m.nn.LSTM(3, 4)(m.ones(5, 3), (m.zeros(1, 1, 4), m.zeros(1, 1, 4))),
    lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda m: m.nn.LSTM(3, 4, dropout=2),
    lambda m: m.nn.GRU(3, 4, dropout=0.5),
    lambda m: m.nn.GRU(3, 0),
    lambda m: m.nn.GRU(3, 4, num_layers=0),
])
def test_errors_and_warnings_are_torchs(call):
    same(call)


def test_a_gru_language_model_trains_as_pytorchs():
    """d2l's concise GRU, in small: an embedding-free one-hot model trained for a few steps with SGD and
    gradient clipping by hand; the losses agree to float32 rounding."""
    data = np.random.default_rng(0).integers(0, 6, size=(8, 4))

    def program(m):
        m.manual_seed(0)
        rnn, head = m.nn.GRU(6, 16), m.nn.Linear(16, 6)
        params = list(rnn.parameters()) + list(head.parameters())
        opt = m.optim.SGD(params, lr=1.0)
        x = m.nn.functional.one_hot(m.tensor(data[:-1]), 6).float()
        y = m.tensor(data[1:]).reshape(-1)
        losses = []
        for _ in range(5):
            out, _ = rnn(x)
            loss = m.nn.functional.cross_entropy(head(out).reshape(-1, 6), y)
            opt.zero_grad()
            loss.backward()
            norm = m.sqrt(sum((p.grad ** 2).sum() for p in params))
            if norm > 1:
                for p in params:
                    p.grad[:] *= 1 / norm
            opt.step()
            losses.append(loss.item())
        return losses
    same(program)
