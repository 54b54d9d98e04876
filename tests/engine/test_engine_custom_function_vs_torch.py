"""Custom ``autograd.Function``s as PyTorch shows them: their node prints as
``<torch.autograd.function.NameBackward object at 0x...>`` and ``type`` of it as PyTorch's class, and
``torch.autograd.function.once_differentiable`` (a backward that is not differentiated again: used
once it works, differentiated twice it raises PyTorch's error), and PyTorch 2.0's form of a Function: a ``forward``
without ``ctx`` and a ``setup_context`` that prepares it."""
import pytest

from engine_helpers import import_torch, same

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")  # with the engine's shortcuts on, and off


def square(m, *, once=True):
    from importlib import import_module

    function = import_module(m.__name__ + ".autograd.function")

    class Square(function.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    if once:
        Square.backward = staticmethod(function.once_differentiable(Square.backward.__func__))
    return Square


def test_a_custom_functions_node_prints_as_pytorchs():
    def program(m):
        y = square(m).apply(m.tensor([1.0, 2.0], requires_grad=True))
        return (repr(y.grad_fn).split(" object at ")[0], repr(type(y.grad_fn)), y.grad_fn.name(), repr(y),
                type(y.grad_fn).__name__)
    same(program)


def test_once_differentiable_is_used_once_like_any_backward():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = square(m).apply(x)
        y.sum().backward()
        return x.grad, y, square(m).backward.__name__
    same(program)


def test_once_differentiable_gives_a_plain_gradient_when_the_output_gradient_needs_none():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        (g,) = m.autograd.grad(square(m).apply(x).sum(), x, create_graph=True)
        return g
    same(program)


def test_once_differentiable_gradients_record_an_error_node_when_a_graph_is_made():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        v = m.ones(2, requires_grad=True)
        (g,) = m.autograd.grad(square(m).apply(x), x, v, create_graph=True)
        return g, g.grad_fn.name(), repr(g.grad_fn).split(" object at ")[0]
    same(program)


def test_differentiating_a_once_differentiable_backward_again_raises():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        v = m.ones(2, requires_grad=True)
        (g,) = m.autograd.grad(square(m).apply(x), x, v, create_graph=True)
        g.sum().backward()
    same(program)


def test_without_once_differentiable_the_same_backward_is_differentiated_again():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        v = m.ones(2, requires_grad=True)
        (g,) = m.autograd.grad(square(m, once=False).apply(x), x, v, create_graph=True)
        g.sum().backward()
        return g, x.grad, v.grad
    same(program)


def test_once_differentiable_is_found_where_pytorch_has_it():
    import autograd_core.autograd.function as ours

    assert {"Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"} <= set(dir(ours))
    assert set(ours.__all__) <= set(dir(torch.autograd.function))


# --- forward without ctx, and setup_context (PyTorch 2.0's form of a Function) --------------------------------------
def new_style(m):
    """Three Functions written PyTorch 2.0's way: ``forward`` takes no ``ctx``, ``setup_context(ctx, inputs,
    output)`` prepares it."""
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * grad

    class Exp(m.autograd.Function):  # saves its output, so a second backward goes through it
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            (result,) = ctx.saved_tensors
            return grad * result

    class Scale(m.autograd.Function):  # a number argument with a default, bound before forward sees it
        @staticmethod
        def forward(x, factor=2.0):
            return x * factor, (x > 0).long()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, factor = inputs
            ctx.factor = factor
            ctx.seen = (len(inputs), factor, tuple(ctx.needs_input_grad))
            ctx.mark_non_differentiable(output[1])
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, grad, grad_positive):
            return (None if grad is None else grad * ctx.factor), None

    return Cube, Exp, Scale


def test_a_forward_without_ctx_gets_its_ctx_from_setup_context():
    def program(m):
        Cube, _, _ = new_style(m)
        x = m.tensor([1.0, -2.0], requires_grad=True)
        y = Cube.apply(x)
        y.sum().backward()
        return y, x.grad, repr(y.grad_fn).split(" object at ")[0]
    same(program)


def test_setup_context_may_save_the_output_and_a_second_backward_goes_through_it():
    def program(m):
        _, Exp, _ = new_style(m)
        x = m.tensor([0.5, 1.0], requires_grad=True)
        y = Exp.apply(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        return y, g, x.grad
    same(program)


def test_setup_context_sees_the_arguments_with_their_defaults_and_marks_outputs():
    def program(m):
        _, _, Scale = new_style(m)
        x = m.tensor([1.0, -2.0], requires_grad=True)
        y, positive = Scale.apply(x)
        z, _ = Scale.apply(x, factor=3.0)
        (y + z).sum().backward()
        return y, positive, x.grad, y.grad_fn.seen, z.grad_fn.seen
    same(program)


def test_a_subclass_with_its_own_forward_binds_its_own_defaults():
    def program(m):
        _, _, Scale = new_style(m)

        class Triple(Scale):
            @staticmethod
            def forward(x, factor=3.0):
                return x * factor, (x > 0).long()

        x = m.tensor([1.0, -2.0], requires_grad=True)
        y, _ = Scale.apply(x)
        z, _ = Triple.apply(x)
        w, _ = Scale.apply(x)
        return y, z, w, y.grad_fn.seen, z.grad_fn.seen, w.grad_fn.seen
    same(program)


def test_the_signature_of_forward_is_read_once_per_class(monkeypatch):
    import inspect

    import autograd_core
    from autograd_core import function

    calls, signature = [], inspect.signature
    monkeypatch.setattr(function.inspect, "signature", lambda f: calls.append(f) or signature(f))
    _, _, Scale = new_style(autograd_core)
    x = autograd_core.tensor([1.0, -2.0], requires_grad=True)
    for _ in range(3):
        Scale.apply(x)
    Scale.apply(x, factor=4.0)
    assert calls == [Scale.forward]


def test_setup_context_is_called_when_nothing_is_recorded():
    def program(m):
        _, _, Scale = new_style(m)
        with m.no_grad():
            y, positive = Scale.apply(m.tensor([1.0, -2.0], requires_grad=True))
        return y, positive
    same(program)


def test_a_forward_without_ctx_and_no_setup_context_fails_as_in_pytorch():
    def program(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

        return Twice.apply(m.ones(2, requires_grad=True))
    same(program)


def test_needs_input_grad_is_known_in_forward_and_setup_context_even_under_no_grad():
    def program(m):
        seen = []

        class Product(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                seen.append(ctx.needs_input_grad)
                return x * y * k

            @staticmethod
            def backward(ctx, grad):
                return grad, grad, None

        a, b = m.ones(2, requires_grad=True), m.ones(2)
        Product.apply(a, b, 3)
        with m.no_grad():
            Product.apply(a, b, 3)
        Product.apply(b, b, 3)
        return seen
    same(program)
