"""Printing through tensors, and PyTorch's error types and wording for the mistakes students make."""
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autograd_core as torch
from kit_paths import ROOT


def test_a_leaf_that_requires_grad_prints_requires_grad():
    assert repr(torch.tensor([1.0, 2.5], requires_grad=True)) == "tensor([1.0000, 2.5000], requires_grad=True)"


def test_a_recorded_result_prints_its_grad_fn():
    x = torch.ones(2, 2, requires_grad=True)
    assert repr(x + 2) == "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)"
    assert repr((x * 3).mean()) == "tensor(3., grad_fn=<MeanBackward0>)"


def test_non_default_dtypes_are_printed():
    assert repr(torch.tensor([1.0, 2.0], dtype=torch.float64)) == "tensor([1., 2.], dtype=torch.float64)"
    assert repr(torch.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(torch.tensor([1, 2], dtype=torch.int32)) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(torch.tensor([True])) == "tensor([True])"


def test_dtype_and_grad_fn_together():
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    assert repr(x * 2) == "tensor([2.], dtype=torch.float64, grad_fn=<MulBackward0>)"


def test_a_copy_slices_result_prints_like_torch():
    y = torch.zeros(2)
    y[0] = torch.tensor(1.0, requires_grad=True) * 3
    assert repr(y) == "tensor([3., 0.], grad_fn=<CopySlices>)"


def test_size_and_dtype_reprs():
    assert repr(torch.ones(2, 3).shape) == "torch.Size([2, 3])" and repr(torch.float64) == "torch.float64"


def test_a_node_prints_with_its_class_name_and_address():
    node = (torch.ones(1, requires_grad=True) + 1).grad_fn
    assert re.fullmatch(r"<AddBackward0 object at 0x[0-9a-f]+>", repr(node))
    leaf = node.next_functions[0][0]
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(leaf))


def test_implicit_gradient_of_a_non_scalar_output_is_an_error():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()


def test_backward_of_a_tensor_that_does_not_require_grad_is_an_error():
    with pytest.raises(RuntimeError, match=r"^element 0 of tensors does not require grad and does not have a grad_fn$"):
        torch.ones(2).sum().backward()


def test_numpy_of_a_tensor_that_requires_grad_is_an_error():
    with pytest.raises(RuntimeError, match=re.escape(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")):
        torch.ones(2, requires_grad=True).numpy()


def test_non_leaf_grad_warning_has_pytorch_wording():
    y = torch.ones(1, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad
    (w,) = caught
    assert w.category is UserWarning and str(w.message).startswith(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
        "won't be populated during autograd.backward().")


def test_an_unused_input_of_autograd_grad_is_an_error():
    x, w = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "The differentiated Tensor at index 1 appears to not have been used in the graph. "
            "Set allow_unused=True if this is the desired behavior.")):
        torch.autograd.grad((x * 2).sum(), [x, w])


def test_mismatched_shapes_name_the_dimension():
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1")):
        torch.ones(2, 3) + torch.ones(2)


def test_mm_of_incompatible_matrices_is_an_error():
    with pytest.raises(RuntimeError, match=re.escape("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")):
        torch.ones(2, 3) @ torch.ones(2, 3)


def test_a_gradient_of_the_wrong_shape_is_an_error():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Mismatch in shape"):
        (x * 2).backward(torch.ones(2))


def test_adding_a_string_is_a_type_error():
    with pytest.raises(TypeError, match=re.escape("unsupported operand type(s) for +: 'Tensor' and 'str'")):
        torch.ones(2) + "a"


def test_subtracting_bool_tensors_is_an_error():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors is not supported"):
        torch.tensor([True]) - torch.tensor([False])


def test_out_of_range_index_and_dim_are_index_errors():
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 0 with size 2"):
        torch.ones(2, 3)[2]
    with pytest.raises(IndexError, match=re.escape("Dimension out of range (expected to be in range of [-2, 1], but got 2)")):
        torch.ones(2, 3).sum(2)


def test_view_of_the_wrong_size_is_an_error():
    with pytest.raises(RuntimeError, match=re.escape("shape '[4]' is invalid for input of size 6")):
        torch.ones(2, 3).view(4)


def test_item_of_several_elements_and_ambiguous_truth_are_errors():
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        torch.ones(2).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(torch.ones(2))


def test_mean_of_integers_is_an_error():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        torch.tensor([1, 2]).mean()


def test_nan_and_inf_results_print_no_warning():
    program = (
        "import autograd_core as torch\n"
        "x = torch.tensor([0.0, -1.0], requires_grad=True)\n"
        "y = x.log().sum() + (torch.tensor([1.0]) / torch.tensor([0.0])).sum() + ((-0.5) ** x).sum() + x.sqrt().sum()\n"
        "y.backward()\n"
        "print(y.item())\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "nan" and run.stderr == ""
    assert np.isnan(torch.tensor([-1.0]).sqrt().item())


def test_expand_to_a_negative_size_is_a_runtime_error():
    # (PyTorch's own message here is an integer overflow in its size arithmetic.)
    with pytest.raises(RuntimeError, match=r"negative dimension -2: \[-2, 3\]"):
        torch.ones(1, 3).expand(-2, 3)
