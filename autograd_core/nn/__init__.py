"""``torch.nn``: modules (layers that own their parameters), losses, and ``functional``.

    parameter.py   Parameter: a leaf that requires grad, found by the module it is assigned to;
                   UninitializedParameter, UninitializedBuffer: ones whose shape a lazy module learns from its
                   first input
    module.py      Module: parameters(), zero_grad(), train()/eval(), state_dict(), printing
    container.py   Sequential, ModuleList, ModuleDict
    layers.py      Linear, LazyLinear, ReLU, LeakyReLU, Sigmoid, Tanh, Softmax, Flatten, Identity
    conv.py        Conv2d, Conv1d, ConvTranspose2d and their lazy forms, F.conv2d, F.conv1d, F.conv_transpose2d,
                   F.unfold/F.fold (im2col: a convolution as a matrix product)
    pooling.py     MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and their functions
    dropout.py     Dropout, F.dropout (PyTorch's masks)
    embedding.py   Embedding, F.embedding (a table of vectors looked up by index)
    batchnorm.py   BatchNorm1d, BatchNorm2d, LazyBatchNorm1d, LazyBatchNorm2d, F.batch_norm
    layer_norm.py  LayerNorm, F.layer_norm
    recurrent.py   RNN, GRU, LSTM (PyTorch's parameter names and starting values)
    lazy.py        LazyModuleMixin: a module that takes its parameters' shapes from its first input
    loss.py        MSELoss, CrossEntropyLoss, BCEWithLogitsLoss, ...
    functional.py  the same as functions: F.linear, F.mse_loss, F.cross_entropy, ...
    ops.py         their graph nodes (AddmmBackward0, MseLossBackward0, ...), forward and backward
    init.py        starting values: normal_, uniform_, xavier_*, kaiming_*
    parallel.py    DataParallel (no GPUs here: it runs the module)
"""
from . import functional, init
from .batchnorm import BatchNorm1d, BatchNorm2d, LazyBatchNorm1d, LazyBatchNorm2d
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d, LazyConv1d, LazyConv2d, LazyConvTranspose2d
from .dropout import Dropout
from .embedding import Embedding
from .layer_norm import LayerNorm
from .layers import Flatten, Identity, LazyLinear, LeakyReLU, Linear, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss, NLLLoss
from .module import Module
from .parallel import DataParallel
from .parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .recurrent import GRU, LSTM, RNN, RNNBase
from .. import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.nn")  # what PyTorch has here and the engine has not: its error
