"""``torch.optim``: the update step of a training loop, for every parameter at once.

    optimizer.py     Optimizer: param_groups, zero_grad(), state_dict()
    sgd.py           SGD (momentum, nesterov, weight_decay)
    adam.py          Adam, AdamW
    adagrad.py       Adagrad
    rmsprop.py       RMSprop
    adadelta.py      Adadelta
    lr_scheduler.py  StepLR, MultiStepLR, ExponentialLR, LambdaLR, CosineAnnealingLR, OneCycleLR, ReduceLROnPlateau
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .. import beyond as _beyond

__getattr__ = _beyond.module_getattr("torch.optim")  # what PyTorch has here and the engine has not: its error
