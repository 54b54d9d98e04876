"""``torch.autograd.functional`` (jacobian, hessian, vjp, jvp, hvp, vhp) compared with PyTorch: values,
the structure of the results (a tensor or tuples, as the inputs and outputs were given), ``create_graph``
(the results can be differentiated again), ``strict`` (PyTorch's errors where an output does not depend
on an input), and the errors for a wrong ``v``, a wrong input type or a function of the wrong kind."""
import pytest

from engine_helpers import import_torch, same

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")  # with the engine's shortcuts on, and off


def functional(m):
    return m.autograd.functional


def x_of(m, *shape):
    n = 1
    for s in shape:
        n *= s
    return (m.arange(1.0, n + 1, dtype=m.float64) / 4).reshape(*shape)


FUNCTIONS = {  # name: (source of f, the inputs as source)
    "exp reducer": ("lambda x: x.exp().sum(dim=1)", "x_of(m, 2, 3)"),
    "adder": ("lambda x, y: 2 * x + 3 * y", "(x_of(m, 2), x_of(m, 2) + 1)"),
    "two outputs": ("lambda x, y: (x * y, (x ** 2).sum())", "(x_of(m, 3), x_of(m, 3) - 1)"),
    "tuple of one": ("lambda x: (x.sin() * x,)", "(x_of(m, 2, 2),)"),
    "0-d": ("lambda x: x.tanh() * x", "x_of(m, 1).reshape(())"),
    "matrix": ("lambda w: (w @ w.t()).exp()", "x_of(m, 2, 2) - 0.5"),
}
SCALAR_FUNCTIONS = {
    "cube sum": ("lambda x: x.pow(3).sum()", "x_of(m, 3)"),
    "two inputs": ("lambda x, y: (x * y.exp()).sum()", "(x_of(m, 2), x_of(m, 2) / 2)"),
    "0-d": ("lambda x: (x * x.sin()).sum()", "x_of(m, 1).reshape(())"),
    "matrix": ("lambda w: (w @ w).sin().sum()", "x_of(m, 2, 2)"),
}


def made(m, entry):
    source, inputs = entry
    return eval(source), eval(inputs, {"m": m, "x_of": x_of})


def ones_like_outputs(m, f, inputs):
    out = f(*inputs) if isinstance(inputs, tuple) else f(inputs)
    return tuple(m.ones_like(o) for o in out) if isinstance(out, tuple) else m.ones_like(out)


def ones_like_inputs(m, inputs):
    return tuple(m.ones_like(i) for i in inputs) if isinstance(inputs, tuple) else m.ones_like(inputs)


def plain(result):
    """Results of a graph made with create_graph=True: numbers and requires_grad (the nodes PyTorch
    records inside a backward formula are its own)."""
    if isinstance(result, tuple):
        return tuple(plain(r) for r in result)
    return result.detach(), result.requires_grad


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jacobian(name, create_graph):
    def program(m):
        f, inputs = made(m, FUNCTIONS[name])
        return functional(m).jacobian(f, inputs, create_graph=create_graph)
    same(program)


def numbers(result):
    return tuple(numbers(r) for r in result) if isinstance(result, tuple) else result.tolist()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jacobian_vectorized_computes_the_same_numbers(name):
    # (as lists of numbers: PyTorch's batched kernels give some zeros the other sign)
    def program(m):
        f, inputs = made(m, FUNCTIONS[name])
        return numbers(functional(m).jacobian(f, inputs, vectorize=True)), numbers(functional(m).jacobian(f, inputs))
    ours, theirs = same(program)[1]
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vjp(name):
    def program(m):
        f, inputs = made(m, FUNCTIONS[name])
        return functional(m).vjp(f, inputs, ones_like_outputs(m, f, inputs))
    same(program)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jvp(name):
    def program(m):
        f, inputs = made(m, FUNCTIONS[name])
        return functional(m).jvp(f, inputs, ones_like_inputs(m, inputs))
    same(program)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_hessian(name, create_graph):
    def program(m):
        f, inputs = made(m, SCALAR_FUNCTIONS[name])
        return functional(m).hessian(f, inputs, create_graph=create_graph)
    same(program)


@pytest.mark.parametrize("product", ["hvp", "vhp"])
@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
def test_hessian_vector_products(name, product):
    def program(m):
        f, inputs = made(m, SCALAR_FUNCTIONS[name])
        return getattr(functional(m), product)(f, inputs, ones_like_inputs(m, inputs))
    same(program)


@pytest.mark.parametrize("product", ["vjp", "jvp", "hvp", "vhp"])
def test_products_with_create_graph_can_be_differentiated_again(product):
    def program(m):
        x = x_of(m, 3).requires_grad_()
        v = m.tensor([1.0, -1.0, 2.0], dtype=m.float64)
        f = (lambda t: (t ** 3).sum()) if product in ("hvp", "vhp") else (lambda t: t.exp() * t)
        if product == "vjp" or product == "jvp":
            out, result = getattr(functional(m), product)(f, x, v, create_graph=True)
        else:
            out, result = getattr(functional(m), product)(f, x, v, create_graph=True)
        (g,) = m.autograd.grad(result.sum(), x)
        return plain(out), plain(result), g
    same(program)


def test_hessian_with_create_graph_can_be_differentiated_again():
    def program(m):
        x = x_of(m, 2).requires_grad_()
        h = functional(m).hessian(lambda t: (t ** 4).sum() + t[0] * t[1], x, create_graph=True)
        (g,) = m.autograd.grad(h.sum(), x)
        return h, g
    same(program)


def test_the_inputs_are_not_changed_and_get_no_grad():
    def program(m):
        x = x_of(m, 3).requires_grad_()
        j = functional(m).jacobian(lambda t: t * t, x)
        return j, x.grad, x.requires_grad, x.is_leaf
    same(program)


def test_v_may_be_left_out_for_one_number():
    def program(m):
        x = x_of(m, 1).reshape(())
        return (functional(m).vjp(lambda t: t.exp(), x), functional(m).jvp(lambda t: t.exp(), x),
                functional(m).hvp(lambda t: t.exp(), x), functional(m).vhp(lambda t: t.exp(), x))
    same(program)


ERRORS = {
    "vjp without v": "F.vjp(lambda t: t * 2, x_of(m, 3))",
    "jvp without v": "F.jvp(lambda t: t * 2, x_of(m, 3))",
    "hvp without v": "F.hvp(lambda t: t.sum(), x_of(m, 3))",
    "vhp without v": "F.vhp(lambda t: t.sum(), x_of(m, 3))",
    "v of a wrong size": "F.vjp(lambda t: t * 2, x_of(m, 3), m.ones(2, dtype=m.float64))",
    "v of a wrong size, tuple": "F.jvp(lambda a, b: a * b, (x_of(m, 3), x_of(m, 3)), (m.ones(3), m.ones(2)))",
    "v of a wrong length": "F.jvp(lambda a, b: a * b, (x_of(m, 3), x_of(m, 3)), (m.ones(3),))",
    "v two tensors for one": "F.vjp(lambda t: t * 2, x_of(m, 3), (m.ones(3), m.ones(3)))",
    "an input not a tensor": "F.jacobian(lambda t: t * 2, [1.0, 2.0])",
    "an input in a tuple not a tensor": "F.jacobian(lambda a, b: a * b, (x_of(m, 2), 3.0))",
    "an output not a tensor": "F.jacobian(lambda t: 3.0, x_of(m, 2))",
    "hessian of a vector": "F.hessian(lambda t: t * 2, x_of(m, 2))",
    "hessian of a tuple": "F.hessian(lambda t: (t.sum(),), x_of(m, 2))",
    "hvp of a vector": "F.hvp(lambda t: t * 2, x_of(m, 2), m.ones(2, dtype=m.float64))",
    "vhp of a tuple": "F.vhp(lambda t: (t.sum(),), x_of(m, 2), m.ones(2, dtype=m.float64))",
    "strategy": "F.jacobian(lambda t: t, x_of(m, 2), strategy='sideways')",
    "forward mode, create_graph": "F.jacobian(lambda t: t, x_of(m, 2), create_graph=True, strategy='forward-mode')",
    "forward mode, strict": "F.jacobian(lambda t: t, x_of(m, 2), strict=True, strategy='forward-mode')",
    "forward mode, not vectorized": "F.jacobian(lambda t: t, x_of(m, 2), strategy='forward-mode')",
    "vectorized and strict": "F.jacobian(lambda t: t * t, x_of(m, 2), strict=True, vectorize=True)",
    "empty output": "F.jacobian(lambda t: t[:0], x_of(m, 2))",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_pytorchs(name):
    def program(m):
        return eval(ERRORS[name], {"m": m, "F": functional(m), "x_of": x_of})
    result = same(program)
    assert type(result).__name__ == "Raised", result


STRICT = {  # (call, what strict=False gives instead: zeros)
    "an output that does not require grad": "F.jacobian(lambda t: m.ones(2), x_of(m, 2), strict={})",
    "an input the output ignores": "F.jacobian(lambda a, b: a * 2, (x_of(m, 2), x_of(m, 2)), strict={})",
    "vjp, an input ignored": "F.vjp(lambda a, b: a * 2, (x_of(m, 2), x_of(m, 2)), m.ones(2, dtype=m.float64), "
                             "strict={})",
    "jvp, an output independent": "F.jvp(lambda a: (a * 2, m.ones(1, requires_grad=True) * 1), x_of(m, 2), "
                                  "m.ones(2, dtype=m.float64), strict={})",
    "hessian of a linear function": "F.hessian(lambda t: (t * 3).sum(), x_of(m, 2), strict={})",
    "hessian, an input ignored": "F.hessian(lambda a, b: (a ** 3).sum(), (x_of(m, 2), x_of(m, 2)), strict={})",
    "vhp of a linear function": "F.vhp(lambda t: (t * 3).sum(), x_of(m, 2), m.ones(2, dtype=m.float64), strict={})",
    "hvp of a quadratic": "F.hvp(lambda t: (t * t).sum(), x_of(m, 2), m.ones(2, dtype=m.float64), strict={})",
    "jacobian with create_graph, linear": "F.jacobian(lambda t: t * 3, x_of(m, 2), create_graph=True, strict={})",
    "vjp with create_graph, linear": "F.vjp(lambda t: t * 3, x_of(m, 2), m.ones(2, dtype=m.float64), "
                                     "create_graph=True, strict={})",
}


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", sorted(STRICT))
def test_strict_raises_where_a_result_would_not_depend_on_an_input(name, strict):
    def program(m):
        result = eval(STRICT[name].format(strict), {"m": m, "F": functional(m), "x_of": x_of})
        return plain(result)
    same(program)


def test_the_module_is_where_pytorch_has_it():
    import autograd_core
    from autograd_core.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp  # noqa: F401

    assert sorted(autograd_core.autograd.functional.__all__) == sorted(torch.autograd.functional.__all__)
