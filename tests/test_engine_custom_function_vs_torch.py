"""Custom ``autograd.Function``s as PyTorch shows them: their node prints as
``<torch.autograd.function.NameBackward object at 0x...>`` and ``type`` of it as PyTorch's class, and
``torch.autograd.function.once_differentiable`` (a backward that is not differentiated again: used
once it works, differentiated twice it raises PyTorch's error)."""
import pytest

from engine_helpers import same

torch = pytest.importorskip("torch")
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
