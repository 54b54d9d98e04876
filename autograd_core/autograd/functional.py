"""``torch.autograd.functional``: Jacobians, Hessians and their products with vectors, made of
``autograd.grad`` calls.

    vjp(f, x, v)       v^T J         one backward pass
    jvp(f, x, v)       J v           the "double backward trick": the vjp's gradient with respect to v
    jacobian(f, x)     J             one backward pass per element of the output
    hessian(f, x)      H             the jacobian of the gradient (f has a single number out)
    vhp(f, x, v)       v^T H         the gradient of (grad f . v)
    hvp(f, x, v)       H v           the double backward trick again

``inputs`` is a tensor or a tuple of tensors, and so is what ``f`` returns: a result comes back
in the same structure (the jacobian of a tuple of outputs by a tuple of inputs is a tuple of
tuples). The inputs are copied (``detach``) before ``f`` sees them, so ``f``'s graph is its own;
``create_graph=True`` keeps the results differentiable (``hessian`` is ``jacobian`` of
``jacobian`` with it). ``strict=True`` raises PyTorch's errors where an output does not depend on
an input, instead of returning zeros. The engine has no forward mode and no vmap:
``strategy="forward-mode"`` says so, and ``vectorize=True`` computes the same rows one by one.
"""
from __future__ import annotations

from typing import NamedTuple

from .. import beyond, functional, grad_mode
from ..creation import zeros_like
from ..tensor import Tensor
from .api import grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


# -- inputs, outputs and v: tensors or tuples of tensors --------------------------------------------
def _tupled(value, what, caller):
    """``(was it a tuple, the tuple)``; PyTorch's TypeError for anything but tensors."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, element in enumerate(values):
        if not isinstance(element, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {what}"
            raise TypeError(f"The {what} given to {caller} must be either a Tensor or a tuple of Tensors but the "
                            f"{where} has type {type(element)}.")
    return is_tuple, values


def _untupled(result, is_tuple):
    """``result`` in the structure it was asked in: ``is_tuple`` is a flag, or (outputs, inputs)."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if is_tuple else result[0]


def _own_copies(tensors, create_graph, need_graph):
    """New tensor objects for ``f`` to see: a view (so gradients flow back to the caller's tensors)
    when a graph is being made of tensors that require grad, else a detached copy."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _plain(results, create_graph):
    """Results without their history, unless ``create_graph``."""
    if isinstance(results[0], Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(_plain(r, create_graph) for r in results)


def _check_v(v, like, is_tuple):
    if len(v) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}." if is_tuple
                           else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            where = f"Entry {i} in " if is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


def _v(v, like, is_tuple, caller, create_graph, none_message):
    if v is None:
        if len(like) != 1 or like[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    v = _own_copies(_tupled(v, "v", caller)[1], create_graph, need_graph=False)
    _check_v(v, like, is_tuple)
    return v


# -- strict mode: PyTorch's errors where a result would not depend on an input ------------------------
_NEEDS_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed in "
               "a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. This "
               "is not allowed in strict mode. You should ensure that your function is thrice differentiable and "
               "that the hessian depends on the inputs.",
}
_INDEPENDENT = {  # a gradient that did not arrive, by the step it was asked in
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(_INDEPENDENT["back"].format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_NEEDS_GRAD[kind].format(i=i))


def _zeros_for_missing(grads, like, strict, create_graph, step):
    """Zeros where no gradient arrived (PyTorch's error instead, with ``strict``)."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT[step].format(i=i))
            g = zeros_like(like[i])
        elif strict and create_graph and not g.requires_grad:
            which = "hessian" if "double" in step else "jacobian"
            raise RuntimeError(f"The {which} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad (None for an input none of them reaches)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    used = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not used:
        return (None,) * len(inputs)
    outs, grads = zip(*used)
    return grad(outs, inputs, grads, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


def _single_number(outputs, is_tuple, caller):
    if is_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {caller} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {caller} should contain a single element")


# -- the six functions -----------------------------------------------------------------------------------
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector ``v`` (one per output, of its shape) times the Jacobian."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "vjp")
        inputs = _own_copies(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v(v, outputs, outputs_tuple, "vjp", create_graph, "The vector v can only be None if the user-provided "
               "function returns a single Tensor with a single element.")
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        result = _zeros_for_missing(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_untupled(_plain(outputs, create_graph), outputs_tuple),
            _untupled(_plain(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian times ``v`` (one per input, of its shape), by the double
    backward trick: ``u -> vjp(u)`` is linear in ``u``, and its gradient with respect to ``u``, taken
    along ``v``, is ``J v``."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jvp")
        inputs = _own_copies(inputs, create_graph, need_graph=True)
        v = _v(v, inputs, inputs_tuple, "jvp", create_graph, "The vector v can only be None if the input to the "
               "user-provided function is a single Tensor with a single element.")
        outputs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        us = tuple(zeros_like(out).requires_grad_() for out in outputs)
        vjps = _grad(outputs, inputs, us, create_graph=True)
        _check_requires_grad(vjps, "grad_inputs", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        result = _zeros_for_missing(_grad(vjps, us, v, create_graph), outputs, strict, create_graph, "back_trick")
    return (_untupled(_plain(outputs, create_graph), outputs_tuple),
            _untupled(_plain(result, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output ``i`` and input ``j``, a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (one backward pass per element of each output)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":  # PyTorch's refusals first; what it computes then needs forward-mode AD
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy='
                                      '"forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
                               'not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        _tupled(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                      "implemented for `vectorize=True`.")
        raise beyond.beyond('torch.autograd.functional.jacobian(..., strategy="forward-mode") (forward-mode AD)')
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _tupled(inputs, "inputs", "jacobian")
        inputs = _own_copies(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jacobians = tuple(_jacobian_of(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        return _untupled(_plain(jacobians, create_graph), (outputs_tuple, inputs_tuple))


def _jacobian_of(i, out, inputs, create_graph, strict):
    """Output ``i``'s Jacobian by each input: one row per element of ``out``, one backward pass each."""
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This "
                                       "is not allowed in strict mode.")
                g = zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(functional.stack(row, dim=0).view(out.size() + inp.size()) for row, inp in zip(rows, inputs))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of ``func`` (one number out) at ``inputs``: the Jacobian of its gradient; for inputs
    ``i`` and ``j``, a tensor of shape ``inputs[i].shape + inputs[j].shape``."""
    inputs_tuple, inputs = _tupled(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def one_number(*xs):
        out = func(*xs)
        is_tuple, outs = _tupled(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*xs):
        g = jacobian(one_number, xs, create_graph=True)
        _check_requires_grad(g, "jacobian", strict)
        return g

    h = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                 strategy=outer_jacobian_strategy)
    return _untupled(h, (inputs_tuple, inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)``: ``v`` times the Hessian of ``func`` (one number out), as the gradient
    of ``grad(func) . v``."""
    with grad_mode.enable_grad():
        start = _gradient_of_one_number(func, inputs, v, create_graph, strict, "vhp")
    return _second_derivative(start, start.gradient, start.inputs, create_graph, strict, "double_back")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)``: the Hessian of ``func`` (one number out) times ``v``, by the double
    backward trick on ``vhp`` (for a twice differentiable ``func``, ``H`` is symmetric and the two agree)."""
    with grad_mode.enable_grad():
        start = _gradient_of_one_number(func, inputs, v, create_graph, strict, "hvp")
        us = tuple(zeros_like(inp).requires_grad_() for inp in start.inputs)
        vhps = _grad(start.gradient, start.inputs, us, create_graph=True)
        _check_requires_grad(start.gradient, "hessian", strict)
    return _second_derivative(start, vhps, us, create_graph, strict, "double_back_trick")


class _FirstDerivative(NamedTuple):
    inputs_tuple: bool
    inputs: tuple
    v: tuple
    outputs_tuple: bool
    outputs: tuple
    gradient: tuple


def _gradient_of_one_number(func, inputs, v, create_graph, strict, caller):
    """What ``vhp`` and ``hvp`` start from (with grad enabled): the inputs as ``func`` sees them,
    ``v`` checked against them, ``func``'s one number and its gradient, itself differentiable."""
    inputs_tuple, inputs = _tupled(inputs, "inputs", caller)
    inputs = _own_copies(inputs, create_graph, need_graph=True)
    v = _v(v, inputs, inputs_tuple, caller, create_graph, "The vector v can only be None if the input to the "
           "user-provided function is a single Tensor with a single element.")
    outputs_tuple, outputs = _tupled(func(*inputs), "outputs of the user-provided function", caller)
    _check_requires_grad(outputs, "outputs", strict)
    _single_number(outputs, outputs_tuple, caller)
    gradient = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(gradient, "jacobian", strict)
    return _FirstDerivative(inputs_tuple, inputs, v, outputs_tuple, outputs, gradient)


def _second_derivative(start, of, by, create_graph, strict, mode):
    """``(func's number, v times the derivative of `of` by `by`)``, in the structure they were asked in."""
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        result = _zeros_for_missing(_grad(of, by, start.v, create_graph), start.inputs, strict, create_graph, mode)
    return (_untupled(_plain(start.outputs, create_graph), start.outputs_tuple),
            _untupled(_plain(result, create_graph), start.inputs_tuple))
