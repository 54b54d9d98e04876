"""``axis`` and ``keepdims`` (NumPy's names) work wherever PyTorch accepts them, as d2l uses them."""
import pytest

from engine_helpers import import_torch, same

torch = import_torch()

A = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]]


@pytest.mark.parametrize("call", [
    lambda m, x: x.sum(axis=0), lambda m, x: x.sum(axis=1, keepdims=True), lambda m, x: m.sum(x, axis=[0, 1]),
    lambda m, x: x.mean(axis=0), lambda m, x: x.mean(axis=1, keepdims=True), lambda m, x: m.mean(x, axis=0),
    lambda m, x: x.cumsum(axis=0), lambda m, x: m.cumsum(x, axis=1), lambda m, x: x.max(axis=1),
    lambda m, x: x.min(axis=0, keepdims=True), lambda m, x: x.argmax(axis=1), lambda m, x: x.argmin(axis=0),
    lambda m, x: x.std(axis=0), lambda m, x: x.var(axis=1, keepdims=True), lambda m, x: x.norm(dim=1),
    lambda m, x: x.softmax(axis=0), lambda m, x: x.log_softmax(axis=1), lambda m, x: m.cat([x, x], axis=0),
    lambda m, x: m.stack([x, x], axis=1), lambda m, x: x.unsqueeze(axis=0), lambda m, x: x.squeeze(axis=0),
    lambda m, x: (x > 0).all(axis=1), lambda m, x: (x > 0).any(axis=0),
])
def test_numpy_names_give_what_torch_gives(call):
    def program(m):
        x = m.tensor(A, requires_grad=True)
        out = call(m, x)
        values = out[0] if isinstance(out, tuple) else out  # max/min: (values, indices)
        if values.requires_grad:
            values.sum().backward()
        # values and gradients (how cumsum, std, var and softmax are recorded is not the point here)
        return [o.detach() for o in out] if isinstance(out, tuple) else out.detach(), x.grad

    same(program)


def test_both_names_at_once_is_torchs_type_error():
    same(lambda m: m.tensor(A).sum(dim=0, axis=0))
    same(lambda m: m.tensor(A).mean(0, axis=0))
    same(lambda m: m.tensor(A).sum(0, keepdim=True, keepdims=True))
