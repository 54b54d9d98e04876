"""Making tensors: tensor, ones, zeros, *_like, full, arange, linspace, eye, rand, randn, manual_seed; dtypes and Size."""
import numpy as np
import pytest

import autograd_core as torch


def test_python_floats_become_float32():
    assert torch.tensor([1.0, 2.5]).dtype == torch.float32


def test_python_ints_become_int64_and_bools_bool():
    assert torch.tensor([[1, 2], [3, 4]]).dtype == torch.int64
    assert torch.tensor(True).dtype == torch.bool


def test_a_mix_of_ints_and_floats_is_float32():
    assert torch.tensor([1, 2.5]).dtype == torch.float32


def test_a_number_makes_a_zero_dim_tensor():
    t = torch.tensor(3.5)
    assert t.shape == torch.Size([]) and t.dim() == 0 and t.item() == 3.5


def test_nested_lists_give_the_nested_shape():
    assert torch.tensor([[1, 2, 3], [4, 5, 6]]).shape == (2, 3)


def test_numpy_arrays_and_scalars_keep_their_dtype():
    assert torch.tensor(np.ones(2, dtype=np.float64)).dtype == torch.float64
    assert torch.tensor(np.float64(0.1)).dtype == torch.float64
    assert torch.tensor(np.int32(3)).dtype == torch.int32


def test_tensor_copies_the_numpy_array():
    a = np.zeros(2)
    t = torch.tensor(a)
    a[0] = 5
    assert t.tolist() == [0.0, 0.0]


def test_an_explicit_float64_dtype_keeps_full_precision():
    assert torch.tensor([0.1], dtype=torch.float64).item() == 0.1
    assert torch.tensor(0.1, dtype=torch.double).item() == 0.1


def test_dtype_aliases_are_the_same_objects():
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.long is torch.int64


def test_dtype_argument_converts():
    assert torch.tensor([1.7, 2.0], dtype=torch.long).tolist() == [1, 2]
    assert torch.tensor([0, 2], dtype=torch.bool).tolist() == [False, True]


def test_a_list_of_zero_dim_tensors_becomes_one_tensor_of_their_values():
    x1, x2, x3 = (torch.tensor(v, requires_grad=True) for v in (1.0, 2.0, 3.0))
    t = torch.tensor([x1.detach() * 2, x2.detach(), x3.detach()])
    assert t.tolist() == [2.0, 2.0, 3.0] and t.dtype == torch.float32
    assert not t.requires_grad and t.is_leaf


def test_a_list_of_zero_dim_integer_tensors_stays_integer():
    assert torch.tensor([torch.tensor(1), torch.tensor(2)]).dtype == torch.int64


def test_ragged_lists_are_rejected():
    with pytest.raises(ValueError):
        torch.tensor([[1, 2], [3]])


def test_strings_are_rejected():
    with pytest.raises(TypeError):
        torch.tensor("abc")


def test_ones_and_zeros_take_sizes_as_arguments_or_a_tuple():
    assert torch.ones(2, 3).shape == (2, 3)
    assert torch.zeros((2, 3)).shape == (2, 3)
    assert torch.ones(torch.Size([4])).tolist() == [1.0] * 4
    assert torch.zeros(2).dtype == torch.float32


def test_ones_like_and_zeros_like_copy_shape_and_dtype():
    src = torch.tensor([[1, 2]])
    assert torch.ones_like(src).tolist() == [[1, 1]] and torch.ones_like(src).dtype == torch.int64
    assert torch.zeros_like(src, dtype=torch.float64).dtype == torch.float64


def test_full_infers_the_dtype_from_the_fill_value():
    assert torch.full((2,), 7).dtype == torch.int64
    assert torch.full((2,), 1.5).dtype == torch.float32
    assert torch.full((2, 2), 3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_arange_is_int64_for_ints_and_float32_for_floats():
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4] and torch.arange(5).dtype == torch.int64
    assert torch.arange(4.0).dtype == torch.float32
    assert torch.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert torch.arange(1, 4).tolist() == [1, 2, 3]


def test_linspace_includes_both_ends():
    assert torch.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_eye_is_the_identity():
    assert torch.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert torch.eye(2, 3).shape == (2, 3)


def test_rand_is_uniform_in_zero_one():
    t = torch.rand(1000)
    assert t.dtype == torch.float32 and 0 <= t.min().item() and t.max().item() < 1


def test_rand_and_randn_accept_a_size_keyword():
    assert torch.rand(size=(2, 3)).shape == (2, 3)
    assert torch.randn(size=(4,)).shape == (4,)


def test_randn_has_roughly_zero_mean_and_unit_std():
    torch.manual_seed(1)
    t = torch.randn(20000)
    assert abs(t.mean().item()) < 0.05 and abs(t.std().item() - 1) < 0.05


def test_manual_seed_makes_random_numbers_repeatable():
    torch.manual_seed(42)
    a = torch.randn(3)
    torch.manual_seed(42)
    assert torch.randn(3).tolist() == a.tolist()


def test_random_tensors_can_require_grad():
    assert torch.randn(2, 2, requires_grad=True).requires_grad


def test_requires_grad_makes_a_leaf_that_requires_grad():
    t = torch.ones(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None


def test_only_floating_point_tensors_can_require_gradients():
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        torch.tensor([1, 2]).requires_grad_()


def test_size_is_a_tuple_that_prints_like_torch():
    s = torch.ones(2, 3).shape
    assert isinstance(s, tuple) and s == (2, 3) and repr(s) == "torch.Size([2, 3])"
    assert s.numel() == 6 and isinstance(s[1:], torch.Size)


def test_dtypes_print_like_torch():
    assert repr(torch.float32) == "torch.float32" and str(torch.int64) == "torch.int64"


def test_a_negative_size_is_rejected():
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.zeros(-1)
