"""In-place changes: add_ sub_ mul_ div_ zero_ fill_ copy_, updates under no_grad, y[i] = expr, the version counter."""
import pytest

import autograd_core as torch


def test_in_place_ops_change_the_tensor_and_return_it():
    x = torch.tensor([1.0, 2.0])
    assert x.add_(1) is x and x.tolist() == [2.0, 3.0]
    x.sub_(torch.tensor([0.5, 0.5]))
    x.mul_(2)
    x.div_(4)
    assert x.tolist() == [0.75, 1.25]
    x.fill_(7)
    assert x.tolist() == [7.0, 7.0]
    x.zero_()
    assert x.tolist() == [0.0, 0.0]
    x.copy_(torch.tensor([3.0, 4.0]))
    assert x.tolist() == [3.0, 4.0]


def test_augmented_assignment_is_in_place():
    x = torch.tensor([1.0])
    before = x
    x += 1
    x -= 0.5
    x *= 4
    x /= 2
    assert x is before and x.tolist() == [3.0]


def test_weight_update_under_no_grad_keeps_the_leaf():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad and w.tolist() == pytest.approx([0.8, 1.6])


def test_in_place_op_on_a_leaf_that_requires_grad_is_an_error():
    w = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^a leaf Variable that requires grad is being used in an in-place operation\.$"):
        w.add_(1)


def test_recorded_in_place_ops_move_the_tensor_forward_in_the_graph():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0"
    y.mul_(x)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]  # d/dx (x + 1) * x = 2x + 1


def test_setitem_makes_the_target_part_of_the_graph():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3)
    y[0] = x[0] * 2
    y[2] = x[1] ** 2
    assert y.requires_grad and "grad_fn=<CopySlices>" in repr(y)
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 0.0]


def test_setitem_overwritten_values_get_no_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[0] = 5.0
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


def test_every_in_place_change_bumps_the_version_counter():
    x = torch.tensor([1.0, 2.0])
    v = x._version
    x.add_(1)
    x[0] = 3.0
    assert x._version == v + 2


def test_a_view_shares_the_version_counter_of_its_base():
    x = torch.zeros(4)
    v = x.view(2, 2)
    v.add_(1)
    assert x._version == 1


def test_modifying_a_saved_tensor_is_caught_at_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = a.sin()
    a.mul_(2)
    with pytest.raises(RuntimeError, match=(
        r"^one of the variables needed for gradient computation has been modified by an inplace operation: "
        r"\[torch.FloatTensor \[2\]\], which is output 0 of Mul, is at version 1; expected version 0 instead\. "
    )):
        y.sum().backward()


def test_modifying_a_saved_output_is_caught_at_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"which is output 0 of Exp, is at version 1; expected version 0"):
        y.sum().backward()


def test_modifying_a_saved_leaf_under_no_grad_is_caught_at_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    with torch.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\] is at version 1; expected version 0"):
        y.sum().backward()


def test_modifying_a_tensor_that_was_not_saved_is_fine():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    a = x + 1
    y = a * 2  # a is not needed for the gradient of x
    a.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
