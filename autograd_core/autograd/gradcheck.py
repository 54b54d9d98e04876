"""``gradcheck``: compare backward with central finite differences."""
from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Tensor
from .api import grad


def numerical_jacobian(func, inputs, eps=1e-6):
    """d output / d input, one column per input element, by central differences.

    In the output's dtype, as PyTorch computes it: ``(f(x + eps) - f(x - eps)) / (2 * eps)``
    (a float32 output gives a float32 Jacobian, which a failing check prints without a dtype)."""
    jacobians = []
    for x in inputs:
        if not (isinstance(x, Tensor) and x.requires_grad):
            jacobians.append(None)
            continue
        out = np.asarray(func(*inputs).detach()._data)
        jac = np.zeros((x._data.size, out.size), dtype=out.dtype if out.dtype.kind == "f" else np.float64)
        flat = x._data.reshape(-1)  # a view: writing into it changes x
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            plus = func(*inputs).detach()._data.reshape(-1)
            flat[i] = old - eps
            minus = func(*inputs).detach()._data.reshape(-1)
            flat[i] = old
            jac[i] = (plus - minus) / (2 * eps)
        jacobians.append(jac)
    return jacobians


def analytical_jacobian(func, inputs):
    """The same matrices from backward: one backward pass per output element, each in its input's dtype
    (as PyTorch's)."""
    out = func(*inputs)
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    jacobians = [np.zeros((x._data.size, out._data.size), dtype=x._data.dtype) for x in diff]
    for j in range(out._data.size):
        v = np.zeros(out._data.size, dtype=out._data.dtype)
        v[j] = 1
        grads = grad(out, diff, Tensor._make(v.reshape(out._data.shape)), retain_graph=True, allow_unused=True)
        for k, g in enumerate(grads):
            if g is not None:
                jacobians[k][:, j] = g._data.reshape(-1)
    it = iter(jacobians)
    return [next(it) if isinstance(x, Tensor) and x.requires_grad else None for x in inputs]


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **kwargs):
    """True if backward agrees with finite differences for every input that requires grad.

    Use float64 inputs: in float32 the differences are too noisy to be a fair check.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)  # a list too, as PyTorch's
    for i, x in enumerate(inputs):  # (not inputs.index(x): that compares tensors with ==)
        if isinstance(x, Tensor) and x.requires_grad and x._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point "
                "or complex. ",
                UserWarning, stacklevel=2,
            )
    numerical = numerical_jacobian(func, inputs, eps)
    analytical = analytical_jacobian(func, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        if not np.allclose(a, n, rtol=rtol, atol=atol):
            if raise_exception:
                raise GradcheckError(
                    f"Jacobian mismatch for output 0 with respect to input {i},\nnumerical:{Tensor._make(n)}\n"
                    f"analytical:{Tensor._make(a)}\n"
                )
            return False
    return True


class GradcheckError(RuntimeError):
    pass


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, **kwargs):
    """True if second derivatives agree with finite differences of first derivatives.

    Checks ``gradcheck`` on the function ``(inputs, v) -> autograd.grad(func(inputs), inputs, v,
    create_graph=True)``: the vector-Jacobian product, differentiated once more. ``v`` is random
    (float64, requiring grad) unless ``grad_outputs`` gives it.
    """
    from ..random import randn_like
    from .api import grad

    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)  # a list too, as PyTorch's
    outputs = func(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, requires_grad=True) for o in outputs)
    grad_outputs = grad_outputs if isinstance(grad_outputs, tuple) else (grad_outputs,)
    n = len(inputs)
    differentiable = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivatives(*all_inputs):
        xs, vs = all_inputs[:n], all_inputs[n:]
        outs = func(*xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        grads = grad(outs, [xs[i] for i in differentiable], vs, create_graph=True, allow_unused=True)
        # a first derivative that no longer depends on anything is a constant: zeros
        return _concatenate([g if g is not None else Tensor._make(np.zeros(xs[i]._data.shape, xs[i]._data.dtype))
                             for i, g in zip(differentiable, grads)])

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


def _concatenate(tensors):
    from ..functional import cat

    return cat([t.reshape(-1) for t in tensors])
