"""``torch.optim``: the update step of a training loop, for every parameter at once.

    optimizer.py   Optimizer: param_groups, zero_grad(), state_dict()
    sgd.py         SGD (momentum, nesterov, weight_decay)
    adam.py        Adam
"""
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD
from .. import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.optim")  # what PyTorch has here and the engine has not: its error
