"""Recurrent layers: ``nn.RNN``, ``nn.GRU``, ``nn.LSTM``, written as PyTorch's CPU code runs them.

    rnn = nn.GRU(input_size=28, hidden_size=32, num_layers=2, bidirectional=True)
    output, h_n = rnn(x)          # x: (steps, batch, 28); output: (steps, batch, 64); h_n: (4, batch, 32)

Each layer reads the whole sequence: the input's part of every gate is one matrix product for all
steps (``x @ weight_ih.T + bias_ih``), then a loop over the steps adds the hidden state's part and
applies the cell (below), in order, or in reverse for the ``_reverse`` direction of a bidirectional
layer. Outputs are stacked (``StackBackward0``), two directions joined (``CatBackward0``), and
``dropout`` is applied to every layer's output but the last, in training. The parameters have
PyTorch's names (``weight_ih_l0``, ``bias_hh_l1_reverse``, ...) and start as PyTorch's, drawn in its
order (uniform within ``1/sqrt(hidden_size)``): the same numbers after ``torch.manual_seed``.

The cells (the gates stacked in the weights in this order, as in PyTorch):

    RNN   h = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)                    (or relu)
    GRU   r, z = sigmoid(gates of x + gates of h); n = tanh(x_n + r * h_n); h = (h - n) * z + n
    LSTM  i, f, o = sigmoid(...), g = tanh(...); c = f * c + i * g; h = o * tanh(c)

PyTorch's CPU LSTM runs in one oneDNN kernel (its output's node is ``MkldnnRnnLayerBackward0``);
here it is the same arithmetic step by step, so its values agree to float32 rounding and its nodes are
the engine's.
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import creation, functional as engine
from .. import ops as engine_ops
from . import init
from .dropout import dropout
from .functional import linear
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _rnn_cell(activation):
    def cell(x_gates, hidden, w_hh, b_hh):
        return activation(linear(hidden, w_hh, b_hh) + x_gates)
    return cell


def _gru_cell(x_gates, hidden, w_hh, b_hh):
    x_r, x_z, x_n = x_gates.chunk(3, 1)
    h_r, h_z, h_n = linear(hidden, w_hh, b_hh).chunk(3, 1)
    reset = (h_r + x_r).sigmoid()
    update = (h_z + x_z).sigmoid()
    new = (x_n + h_n * reset).tanh()
    return (hidden - new) * update + new


def _lstm_cell(x_gates, state, w_hh, b_hh):
    hidden, cell = state
    i, f, g, o = (linear(hidden, w_hh, b_hh) + x_gates).chunk(4, 1)
    cell = f.sigmoid() * cell + i.sigmoid() * g.tanh()
    return o.sigmoid() * cell.tanh(), cell


class RNNBase(Module):
    """What RNN, GRU and LSTM share: the parameters, their initialisation, and running the layers."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          UserWarning, stacklevel=3)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size:
            raise NotImplementedError("proj_size is beyond autograd_core's LSTM")
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(creation.empty(*shape, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in self._flat_weights_names[i:i + (4 if self.bias else 2)]]
                for i in range(0, len(self._flat_weights_names), 4 if self.bias else 2)]

    def _cell(self):
        return {"RNN_TANH": _rnn_cell(engine.FUNCTIONS["tanh"]), "RNN_RELU": _rnn_cell(engine.relu), "GRU": _gru_cell,
                "LSTM": _lstm_cell}[self.mode]

    def _check_input(self, input):
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                             f"{'tensor ' if name == 'RNN' else ''}instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _check_hidden(self, hx, batch, what="Expected hidden size"):
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"{what} {expected}, got {list(hx.shape)}")

    def _run(self, input, states):
        """``input`` (steps, batch, features) and each layer-direction's first state -> the last layer's
        output (steps, batch, directions * hidden) and each layer-direction's last state."""
        cell, directions = self._cell(), 2 if self.bidirectional else 1
        weights, finals, layer_input = self.all_weights, [], input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, *biases = weights[layer * directions + direction]
                b_ih, b_hh = biases if biases else (None, None)
                steps = linear(layer_input, w_ih, b_ih).unbind(0)  # the input's part of every gate, all steps at once
                state, out = states[layer * directions + direction], []
                for x_gates in (reversed(steps) if direction == 1 else steps):
                    state = cell(x_gates, state, w_hh, b_hh)
                    out.append(state[0] if isinstance(state, tuple) else state)
                finals.append(state)
                outputs.append(engine.stack(out[::-1] if direction == 1 else out, 0))
            layer_input = outputs[0] if directions == 1 else engine.cat(outputs, outputs[0].ndim - 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = dropout(layer_input, self.dropout, True)
        return layer_input, finals

    def forward(self, input, hx=None):
        self._check_input(input)
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        batch, layers = input.shape[1], self.num_layers * (2 if self.bidirectional else 1)
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = creation.zeros(layers, batch, self.hidden_size, dtype=input.dtype)
            hx = (zeros, creation.zeros(layers, batch, self.hidden_size, dtype=input.dtype)) if lstm else zeros
        elif not batched:
            hidden = hx if lstm else (hx,)
            if any(h.ndim != 2 for h in hidden):
                dims = ", ".join(f"{h.ndim}-D" for h in hidden)
                raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got ({dims}) tensors"
                                   if lstm else f"For unbatched 2-D input, hx should also be 2-D but got {dims} tensor")
            hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        if lstm:
            self._check_hidden(hx[0], batch, "Expected hidden[0] size")
            self._check_hidden(hx[1], batch, "Expected hidden[1] size")
            states = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        else:
            self._check_hidden(hx, batch)
            states = list(hx.unbind(0))
        output, finals = self._run(input, states)
        if lstm:
            hidden = (engine.stack([h for h, _ in finals], 0), engine.stack([c for _, c in finals], 0))
        else:
            hidden = engine.stack(finals, 0)
        if not batched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        elif self.batch_first:
            output = engine_ops.TransposeBackward1.apply(output, dim0=0, dim1=1)
        return output, hidden

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """The Elman RNN: ``h = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (``nonlinearity="relu"``: relu)."""

    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:  # (input_size, hidden_size, num_layers, nonlinearity, ...) as in PyTorch
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity  # (not printed: PyTorch prints RNN(3, 4) for either)
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent units: a reset and an update gate decide how much of the state is kept."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory: a cell state ``c`` beside the hidden state, with input, forget and
    output gates. ``lstm(x, (h0, c0))`` returns ``output, (h_n, c_n)``."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)
