"""The smaller APIs PyTorch's tutorials use, each compared with PyTorch: saved tensors by name,
saved-tensor hooks, gradients of unused Function outputs, gradgradcheck, devices, legacy names."""
import io
from contextlib import redirect_stdout

import pytest

from engine_helpers import import_torch, same

torch = import_torch()


# --- grad_fn._saved_* ------------------------------------------------------------------------------
@pytest.mark.parametrize("make, names", [
    (lambda m, x, y: x * y, ["self", "other"]), (lambda m, x, y: x * 2, ["self", "other"]),
    (lambda m, x, y: x * 2.5, ["other"]), (lambda m, x, y: x / y, ["self", "other"]),
    (lambda m, x, y: x ** 3, ["self", "exponent"]), (lambda m, x, y: x ** 2.5, ["exponent"]),
    (lambda m, x, y: x.exp(), ["result"]), (lambda m, x, y: x.sin(), ["self"]), (lambda m, x, y: x.log(), ["self"]),
    (lambda m, x, y: x.tanh(), ["result"]), (lambda m, x, y: x.sigmoid(), ["result"]),
    (lambda m, x, y: x.relu(), ["result"]), (lambda m, x, y: x.sqrt(), ["result"]),
    (lambda m, x, y: x.mm(y), ["self", "mat2"]), (lambda m, x, y: x.clamp(0.1, 0.5), ["self", "min", "max"]),
    (lambda m, x, y: x * y.detach(), ["self", "other"]),
])
def test_saved_values_have_torchs_names_and_values(make, names):
    def program(m):
        x = m.tensor([[0.5, 1.5], [2.0, 0.25]], requires_grad=True)
        y = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        node = make(m, x, y).grad_fn
        return [getattr(node, "_saved_" + n) for n in names]

    same(program)


def test_a_node_lists_its_saved_values_among_its_attributes_as_torchs_does():
    def program(m):
        x = m.tensor([[0.5, 1.5], [2.0, 0.25]], requires_grad=True)
        nodes = [(x * x).grad_fn, (x * 2).grad_fn, (x / 3).grad_fn, (x ** 2).grad_fn, x.exp().grad_fn,
                 x.sin().grad_fn, x.clamp(0.1, 0.5).grad_fn, x.tanh().grad_fn]
        return [sorted(n for n in dir(node) if n.startswith(("_saved_", "_raw_saved_"))) for node in nodes]

    same(program)


def test_saved_inputs_are_the_same_objects_and_a_saved_result_is_not():
    def program(m):
        a, b = m.ones(5, requires_grad=True), m.ones(5, requires_grad=True)
        y = a * b
        e = m.exp(a)
        return y.grad_fn._saved_self is a, y.grad_fn._saved_other is b, e.grad_fn._saved_result is e, \
            e.grad_fn._saved_result.equal(e)

    same(program)


def test_saved_values_after_backward_and_unknown_names_raise_torchs_errors():
    def freed(m):
        x = m.ones(2, requires_grad=True)
        y = x.sin()
        y.sum().backward()
        return y.grad_fn._saved_self

    same(freed)
    same(lambda m: m.ones(2, requires_grad=True).exp().grad_fn._saved_other)
    same(lambda m: (m.ones(2, requires_grad=True) ** 2).grad_fn._raw_saved_exponent)  # a number: no raw form


# --- saved_tensors_hooks -----------------------------------------------------------------------------
def run_printing(program, m):
    out = io.StringIO()
    with redirect_stdout(out):
        result = program(m)
    return result, out.getvalue()


def test_pack_and_unpack_hooks_run_when_torchs_do():
    def program(m):
        def pack(x):
            print("Packing", x)
            return x

        def unpack(x):
            print("Unpacking", x)
            return x

        a = m.ones(5, requires_grad=True)
        b = m.ones(5, requires_grad=True) * 2
        with m.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = a * b
            z = y.exp()
        z.sum().backward()
        return a.grad, b.grad

    same(lambda m: run_printing(program, m))


def test_packed_values_may_be_any_object_and_unpacked_ones_are_used():
    def program(m):
        storage = []

        def pack(x):
            storage.append(x * 4)
            return len(storage) - 1

        x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(pack, lambda i: storage[i] / 4):
            y = x.pow(2) * x
        y.sum().backward()
        return x.grad, len(storage), y.grad_fn._saved_self

    same(program)


def test_an_unpack_hook_returning_no_tensor_is_torchs_error():
    def program(m):
        x = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            y = x * x
        y.sum().backward()

    same(program)


# --- autograd.Function: gradients of unused outputs -------------------------------------------------
def two_outputs(m, materialize):
    class Split(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append((g1 is None, g2 is None))
            return (g1 if g1 is not None else 0) * 2 + (g2 * 3 if g2 is not None else 0)

    seen = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    a, b = Split.apply(x)
    a.sum().backward()
    return x.grad, seen


@pytest.mark.parametrize("materialize", [True, False])
def test_an_unused_output_gets_zeros_unless_materializing_is_off(materialize):
    same(lambda m: two_outputs(m, materialize))


# --- gradgradcheck -----------------------------------------------------------------------------------
def test_gradgradcheck_accepts_correct_second_derivatives_and_rejects_wrong_ones():
    def program(m):
        class Square(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * 2 * x.detach()  # first derivative right, second wrong (it is cut off)

        x = m.tensor([0.3, -1.2, 2.0], dtype=m.float64, requires_grad=True)
        good = m.autograd.gradgradcheck(lambda t: (t ** 3).sin(), (x,))
        bad = m.autograd.gradgradcheck(Square.apply, (x,), raise_exception=False)
        return good, bad

    same(program)


# --- devices, legacy names, types --------------------------------------------------------------------
def test_cuda_is_not_available_and_the_cpu_is_the_default_device():
    def program(m):
        m.set_default_device("cpu")
        return (m.cuda.is_available(), m.cuda.device_count(), str(m.get_default_device()),
                repr(m.device("cpu")), repr(m.device("cuda")), repr(m.device("cuda:0")), str(m.device("cuda:1")),
                m.device("cpu") == "cpu", m.ones(2, device=m.device("cpu")), m.ones(2).to("cpu"), str(m.ones(1).device))

    same(program)


@pytest.mark.parametrize("move", [lambda m, x: x.to("cuda"), lambda m, x: x.cuda(),
                                  lambda m, x: m.ones(2, device="cuda"), lambda m, x: m.device("gpu")])
def test_asking_for_a_gpu_is_torchs_error_on_a_cpu_only_build(move):
    same(lambda m: move(m, m.ones(2)))


def test_legacy_tensor_types_and_variable_behave_as_in_torch():
    def program(m):
        f = m.FloatTensor([[1, 2], [3, 4]])
        v = m.autograd.Variable(f, requires_grad=True)
        f[0, 0] = 5  # shares f's numbers
        out = (v * v).sum()
        out.backward()
        return (f, m.LongTensor([1, 2]), m.DoubleTensor(2, 3).shape, isinstance(f, m.FloatTensor),
                isinstance(f, m.DoubleTensor), isinstance(f, m.autograd.Variable), f.type(), m.tensor([1]).type(),
                f.type(m.DoubleTensor), f.type("torch.LongTensor"), v, v.grad, v.is_leaf, repr(m.FloatTensor))

    same(program)


def test_types_print_as_torchs():
    same(lambda m: [str(type(m.ones(1))), str(type(m.ones(1).shape)), str(type(m.float32))])


def test_a_functions_saved_outputs_carry_its_graph_for_a_second_backward():
    def program(m):
        class ExpAndDouble(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                e = m.exp(x)
                d = x * 2
                ctx.save_for_backward(e, d)
                return e, d

            @staticmethod
            def backward(ctx, grad_e, grad_d):
                e, d = ctx.saved_tensors
                return grad_e * e + grad_d * d

        x = m.tensor([0.5, -1.0], dtype=m.float64, requires_grad=True)
        e, d = ExpAndDouble.apply(x)
        (g,) = m.autograd.grad((e * d).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        return g, gg

    same(program)


# --- save and load ------------------------------------------------------------------------------------
def test_save_and_load_round_trip_tensors_and_state_dicts(tmp_path):
    def program(m):
        net = m.nn.Linear(2, 3)
        with m.no_grad():
            net.weight.copy_(m.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
        path = tmp_path / f"{m.__name__}.pt"
        m.save({"state": net.state_dict(), "step": 3, "ints": m.arange(3)}, path)
        loaded = m.load(path)
        return loaded["state"]["weight"], loaded["step"], loaded["ints"], list(loaded["state"].keys())

    same(program)


def test_load_refuses_what_is_not_weights(tmp_path):
    import pickle

    import autograd_core

    class Payload:
        def __reduce__(self):
            return (print, ("this must not run",))

    path = tmp_path / "payload.pt"
    path.write_bytes(pickle.dumps(Payload()))
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        autograd_core.load(path)
