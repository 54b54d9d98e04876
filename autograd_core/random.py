"""Random tensors and the seed: ``manual_seed``, ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``.

    torch.manual_seed(0)
    torch.randn(3)          # tensor([ 1.5410, -0.2934, -2.1788]), exactly PyTorch's numbers

The numbers are PyTorch's own (CPU, x86): its Mersenne Twister (random_generator.py) turned into
numbers as its kernels do it (random_kernels.py). Every function takes ``generator=`` to draw
from a ``torch.Generator`` instead of the default one. The in-place ``x.uniform_()``,
``x.normal_()`` and ``x.random_()`` (inplace.py) and ``nn.init`` draw through ``fill_*`` below.
"""
from __future__ import annotations

import builtins
import numbers
import warnings

import numpy as np

from . import dtypes, random_kernels
from .broadcast import check_broadcast
from .creation import _finish, _size
from .random_generator import Generator, default_generator
from .tensor import Tensor, _type_name

# the C++ names PyTorch's range checks print
_C_TYPE = {"int64": "long", "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
           "bool": "bool"}


def manual_seed(seed):
    """Seed the default generator: ``torch.manual_seed(0)`` gives the same numbers in every run."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the default generator from the operating system's randomness; return the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, as PyTorch's 5056-byte ``torch.ByteTensor``."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def _generator(generator):
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def _invalid_arguments(name, args, kwargs):
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), "
                     "but expected one of:")


def _floating(dtype, kernel):
    """The dtype to fill (the default float dtype if None); PyTorch's error for a non-float one."""
    d = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(d.numpy)}'")
    return d


def _number(x):
    return f"{x:g}" if isinstance(x, float) else str(x)  # as C++ prints a double


# -- filling (the kernels behind rand, randn, randint and the in-place methods) ---------------

def _placed(values, array):
    """``values``, drawn one after another, in ``array``'s shape. PyTorch's kernels walk a tensor
    in the order of its memory (TensorIterator puts the smallest stride innermost), so into a
    transposed view the numbers go down its columns."""
    if array.flags.c_contiguous:
        return values.reshape(array.shape)
    order = sorted(range(array.ndim), key=lambda d: -abs(array.strides[d]))
    out = np.empty(array.shape, values.dtype)
    out.transpose(order)[...] = values.reshape([array.shape[d] for d in order])
    return out


def fill_uniform(array, low=0.0, high=1.0, generator=None):
    """Numbers uniform in [low, high), of ``array``'s shape and dtype (``x.uniform_(low, high)``)."""
    _floating(dtypes.from_numpy_dtype(array.dtype), "check_uniform_bounds")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_number(low)} > "
                           f"to={_number(high)}")
    return _placed(random_kernels.uniform(_generator(generator), array.size, array.dtype, low, high), array)


def fill_normal(array, mean=0.0, std=1.0, generator=None):
    """Normal numbers of ``array``'s shape and dtype (``x.normal_(mean, std)``)."""
    _floating(dtypes.from_numpy_dtype(array.dtype), "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_number(std)}")
    values = random_kernels.normal(_generator(generator), array.size, array.dtype, mean, std,
                                   contiguous=array.flags.c_contiguous)
    return _placed(values, array)


def fill_random(array, low=None, high=None, generator=None):
    """Integers in [low, high) (``x.random_(low, high)``; ``x.random_(high)``; ``x.random_()``:
    0 up to the dtype's largest value, or to 2**mantissa bits for a float dtype)."""
    generator = _generator(generator)
    if low is None and high is None:
        return _placed(random_kernels.random_full(generator, array.size, array.dtype), array)
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if array.dtype.kind == "f":
        low, high = _float_bounds(array.dtype, low, high)
    else:
        info = np.iinfo(array.dtype) if array.dtype.kind != "b" else np.iinfo(np.uint8)
        top = 1 if array.dtype.kind == "b" else int(info.max)
        if not info.min <= low <= top:
            raise RuntimeError(f"from is out of bounds for {_C_TYPE[array.dtype.name]}")
        if not info.min <= high - 1 <= top:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE[array.dtype.name]}")
    values = random_kernels.random_from_to(generator, array.size, int(low), int(high))
    return _placed(values.astype(array.dtype), array)


def _float_bounds(dtype, low, high):
    """PyTorch moves integer bounds that a float dtype cannot hold to ones it can (update_from,
    update_to in aten/src/ATen/native/DistributionTemplates.h), and warns beyond 2**digits."""
    digits = np.finfo(dtype).nmant + 1

    def nudged(bound, step, towards):
        cast = int(np.array(bound + step).astype(dtype).astype(np.float64))  # int64(scalar_t(bound + step))
        if (cast < bound) if step == 1 else (cast >= bound):
            n = abs(bound + step).bit_length() - 1
            return cast + towards * (1 << (n - digits + 1))
        return bound

    low, high = nudged(low, 1, 1), nudged(high, -1, -1)
    if low >= high:
        raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                           f"from={low} >= to={high}")
    name = {"float16": "c10::Half", "float32": "float", "float64": "double"}[np.dtype(dtype).name]
    for value, what in ((low, "from"), (high - 1, "to - 1")):
        if not -(1 << digits) <= value <= 1 << digits:
            warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {name} "
                          "can support discrete uniform distribution only within this range. This warning will become "
                          "an error in version 1.7 release, please fix the code in advance", UserWarning, stacklevel=4)
    return low, high


# -- the public functions ---------------------------------------------------------------------

def _shape(name, size, kwargs):
    if "size" in kwargs:
        size = (kwargs.pop("size"),)
    if not size:
        raise _invalid_arguments(name, size, kwargs)
    return _size(size)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kwargs):
    """Uniform numbers in [0, 1); ``rand(2, 3)`` or ``rand(size=(2, 3))``."""
    array = np.empty(_shape("rand", size, kwargs), _floating(dtype, "check_uniform_bounds").numpy)
    return _finish(fill_uniform(array, generator=generator), None, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kwargs):
    """Standard normal numbers; ``randn(2, 3)`` or ``randn(size=(2, 3))``."""
    array = np.empty(_shape("randn", size, kwargs), _floating(dtype, "normal_kernel_cpu").numpy)
    return _finish(fill_normal(array, generator=generator), None, requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
              generator=None):
    return rand(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad, generator=generator)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None,
               generator=None):
    return randn(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad, generator=generator)


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False, **kwargs):
    """Integers in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    rest, given = list(args), dict(kwargs)
    size = kwargs.pop("size", None)
    if size is None and rest and isinstance(rest[-1], (tuple, list, dtypes.Size)):
        size = rest.pop()
    high = kwargs.pop("high", rest.pop() if rest else None)
    low = kwargs.pop("low", rest.pop() if rest else 0)
    numbers_ok = builtins.all(isinstance(v, numbers.Integral) and not isinstance(v, builtins.bool) for v in (low, high))
    if rest or kwargs or size is None or high is None or not numbers_ok:
        raise _invalid_arguments("randint", args, given)
    array = np.empty(_size((size,)), (dtypes.as_dtype(dtype) if dtype is not None else dtypes.int64).numpy)
    return _finish(fill_random(array, low, high, generator), None, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """``0 .. n-1`` in a random order."""
    if isinstance(n, builtins.bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    d = dtypes.as_dtype(dtype) if dtype is not None else dtypes.int64
    if d == dtypes.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    _size((n,))
    return _finish(random_kernels.randperm(_generator(generator), int(n)).astype(d.numpy), None, requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Normal numbers: ``normal(0, 1, size=(2, 3))``, or one per element of a tensor of means
    and/or of standard deviations (``normal(means, stds)``)."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise _invalid_arguments("normal", (mean, std), {})
        array = np.empty(_size((size,)), _floating(dtype, "normal_kernel_cpu").numpy)
        return _finish(fill_normal(array, mean, std, generator), None, requires_grad)
    # PyTorch draws N(0, 1) (N(0, std) for a number std) in the output's shape, then scales and shifts
    if isinstance(std, Tensor):
        if (std._data < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_number(std)}")
    like = mean if isinstance(mean, Tensor) else std
    shape = like.shape
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        check_broadcast(mean.shape, std.shape)
        shape = np.broadcast_shapes(mean.shape, std.shape)
    array = np.empty(shape, like._data.dtype)
    if isinstance(std, Tensor):
        values = fill_normal(array, 0.0, 1.0, generator) * std._data + _data_of(mean)
    else:
        values = fill_normal(array, 0.0, std, generator) + mean._data
    return _finish(values.astype(like._data.dtype, copy=False), None, False)


def _data_of(x):
    return x._data if isinstance(x, Tensor) else x



# -- drawing from probabilities (sampling.py makes the public functions of these) -------------

def _check_probability(p, name="bernoulli_"):
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={_number(p)}")


def fill_bernoulli(array, p, generator=None):
    """0s and 1s of ``array``'s shape and dtype, each 1 with probability ``p``: a number
    (``x.bernoulli_(0.3)``, a dropout mask) or an array of probabilities that broadcasts to it."""
    generator = _generator(generator)
    if isinstance(p, np.ndarray):
        if p.dtype.kind != "f":
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_type_name(p.dtype)}'")
        p = np.broadcast_to(p, array.shape)
        bad = np.flatnonzero(~((p >= 0) & (p <= 1)))
        if bad.size:  # PyTorch draws up to the bad probability, then stops
            random_kernels.bernoulli_tensor(generator, np.ascontiguousarray(p).ravel()[:bad[0]])
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")
        drawn = random_kernels.bernoulli_tensor(generator, _in_memory_order(p, array))
    else:
        _check_probability(p)
        drawn = random_kernels.bernoulli_scalar(generator, array.size, p)
    return _placed(drawn.astype(array.dtype), array)


def _in_memory_order(values, array):
    """``values`` (of ``array``'s shape) in the order PyTorch's kernel visits ``array``'s elements."""
    if array.flags.c_contiguous:
        return np.ascontiguousarray(values)
    order = sorted(range(array.ndim), key=lambda d: -abs(array.strides[d]))
    return np.ascontiguousarray(values.transpose(order))


def fill_exponential(array, lambd=1.0, generator=None):
    """Exponential numbers of rate ``lambd`` of ``array``'s shape and dtype (``x.exponential_()``)."""
    _floating(dtypes.from_numpy_dtype(array.dtype), "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_number(lambd)}")
    return _placed(random_kernels.exponential(_generator(generator), array.size, array.dtype, lambd), array)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row of ``input`` (1-d or 2-d: non-negative weights,
    not necessarily summing to 1), drawn with or without replacement; PyTorch's draws."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    p = input._data
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {_type_name(p.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    rows = p.reshape(-1, p.shape[-1])
    shape = (num_samples,) if p.ndim == 1 else (p.shape[0], num_samples)
    if rows.size == 0:
        return Tensor._make(np.zeros(shape, np.int64))
    generator = _generator(generator)
    if not replacement or num_samples == 1:
        # PyTorch's shortcut: the largest p / q, q exponential (the Gumbel-max trick, exponentiated)
        if not (np.isfinite(rows).all() and (rows >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = random_kernels.exponential(generator, rows.size, rows.dtype).reshape(rows.shape)
        with np.errstate(divide="ignore"):
            ratio = rows / q
        picked = np.argsort(-ratio, axis=1, kind="stable")[:, :num_samples]
    else:
        if (rows < 0).any():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        if not np.isfinite(rows).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if (rows.sum(1, dtype=np.float64) <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        picked = random_kernels.multinomial_with_replacement(generator, rows, num_samples)
    return Tensor._make(picked.reshape(shape).astype(np.int64))
