"""autograd_core: a small NumPy autograd engine with PyTorch's API and behaviour.

    import autograd_core as torch
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    print(x.grad)          # tensor([[4.5000, 4.5000], [4.5000, 4.5000]])

Where things live, in layers. A module imports only from layers below its own, so
the engine reads bottom up (tests/engine/test_engine_layers.py holds the code to this map):

    10 __init__.py    the package: torch.<name> for every registered operation
    9  run.py         python -m autograd_core.run script.py, %load_ext autograd_core: the engine as torch
    8  methods.py     Tensor's methods and operators, all attached in this one place
    7  nn/            Module, Parameter, Linear, Conv2d, Conv1d, pooling, Dropout, Sequential, losses, nn.functional
       sampling.py    bernoulli, multinomial, x.bernoulli_(), x.exponential_(): PyTorch's draws
       utils/         utils.data: TensorDataset, DataLoader
       update_ops.py  lerp, addcmul, addcdiv: what optimizer updates are made of
       inplace_unary.py  x.cos_(), x.exp_(), ...: elementwise functions in place
       inplace_masked.py  x.masked_fill_(mask, v), x.tril_(), x.triu_(): masking in place
    7  autograd/      torch.autograd: backward, grad, Function, gradcheck, functional (jacobian, ...), detect_anomaly
       indexing.py    x[key] and x[key] = value
    6  functional.py  the public operations (argument checks, PyTorch's errors) and the
                      registry that names each one once: torch.exp(x) and x.exp()
       backward.py    the backward pass: an iterative walk over the graph
       inplace.py     x.add_(y), x += y, x.zero_(): writing into a tensor, and through a view into its base
    5  ops.py         every operation's forward and backward, side by side
    4  function.py    how an operation call becomes a graph node; autograd.Function
    3  graph.py       graph nodes, AccumulateGrad, saved tensors
    3  legacy.py      FloatTensor, Variable, x.type(): names of older tutorials
       new_tensors.py x.new_zeros(2, 3), x.new_tensor(data), ...; x.resize_()
       out_arg.py     torch.add(x, y, out=result): writing a function's result into a given tensor
       optim/         SGD, Adam
       random.py      manual_seed, rand, randn, randint, randperm, normal, ...: PyTorch's random numbers
    2  _speed.py      shortcuts that exist only for speed, and the switch that turns them off
       inference_mode.py  inference_mode: no_grad, and what is made inside is an inference tensor
       saved_names.py grad_fn._saved_self, _saved_result, ...: saved values by PyTorch's names
       creation.py    tensor, ones, zeros, arange, linspace, ...
       random_generator.py  torch.Generator: PyTorch's Mersenne Twister and its state bytes
       random_kernels.py  how PyTorch's kernels make uniform, normal, integer numbers of its words
       cuda.py        no GPU here: torch.cuda.is_available() is False
       multiprocessing.py  torch.multiprocessing: Python's multiprocessing (tensors pickle as NumPy arrays)
       backends/      torch.backends.mps.is_available(), torch.backends.cudnn: not here either
    1  tensor.py      the Tensor: data, requires_grad, grad, grad_fn, conversions
       beyond.py      torch.fft, x.stft: "NotImplementedError: ... is beyond autograd_core" for what
                      PyTorch has (the names in torch_names.py) and the engine not
       default_device.py  set_default_device: the CPU, the only device here
       avx_mathfun.py PyTorch's AVX2 float32 log and sincos (for randn), in NumPy
    0  dtypes.py      dtypes, Size, device (printing as PyTorch's: <class 'torch.Size'>)
       grad_mode.py   no_grad, enable_grad, set_grad_enabled
       printing.py    printing tensors exactly as PyTorch does
       broadcast.py   broadcasting: undone in gradients, PyTorch's error where shapes do not fit
       hooks.py       hook handles, and how a hook replaces a gradient
       float32_math.py     float32 exp, log, sin, ... rounded as PyTorch rounds them
       numpy_names.py      axis= and keepdims=, accepted where PyTorch accepts them
       linspace_values.py  linspace's numbers, as PyTorch's kernel computes them
       exact_math.py  fused multiply-add and the C library's log: rounded as PyTorch's kernels round
       accelerator.py torch.accelerator: none here
       threads.py     get_num_threads, set_num_threads: PyTorch's split of work (arange's bits depend on it)
       torch_warnings.py  warnings with PyTorch's "(Triggered internally at ...)" suffix
       torch_names.py the public names of PyTorch 2.13's namespaces
       serialization.py  torch.save, torch.load

Adding an operation (``atan``, say) takes its node class in ops.py and one line in
functional.py's registry; docs/engine.md shows both.
"""
from . import accelerator, autograd, backends, beyond, cuda, functional, methods, random
from .creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like, tensor, zeros,
    zeros_like,
)
from .dtypes import (
    Size, bool, device, double, dtype, float, float16, float32, float64, get_default_dtype, half, int, int8,
    int16, int32, int64, long, set_default_dtype, short, uint8,
)
from .default_device import get_default_device, set_default_device
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .inference_mode import inference_mode, is_inference_mode_enabled
from .legacy import (
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
from .printing import set_printoptions
from .random import (
    get_rng_state, initial_seed, manual_seed, normal, rand, rand_like, randint, randn, randn_like, randperm, seed,
    set_rng_state,
)
from .random_generator import Generator, default_generator
from .serialization import load, save
from .tensor import Tensor
from .threads import get_num_threads, set_num_threads
from .update_ops import addcdiv, addcmul, lerp
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from . import nn, optim, sampling, utils  # (they build on everything above)
from . import multiprocessing  # torch.multiprocessing, which PyTorch imports with torch

__version__ = "0.1.0"

methods.attach()
globals().update(functional.FUNCTIONS)  # torch.exp, torch.sum, ...: every operation functional.py registers
__getattr__ = beyond.module_getattr("torch")  # torch.fft, ...: PyTorch has it, the engine not: a one-line error


def load_ipython_extension(ipython):
    """``%load_ext autograd_core``: in this notebook's kernel, ``import torch`` finds the engine (run.py)."""
    from . import run

    run.load_ipython_extension(ipython)


def unload_ipython_extension(ipython):
    from . import run

    run.unload_ipython_extension(ipython)
