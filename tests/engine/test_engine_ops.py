"""The Tensor API: every op as a method and a module function, with broadcasting and Python scalars."""
import numpy as np
import pytest

import autograd_core as torch

A = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]])
POSITIVE = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]])


def leaf(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def grad_of(f, *values):
    xs = [leaf(v) for v in values]
    f(*xs).sum().backward()
    return [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("name, fn, deriv, data", [
    ("exp", np.exp, np.exp, A), ("log", np.log, lambda x: 1 / x, POSITIVE),
    ("sqrt", np.sqrt, lambda x: 0.5 / np.sqrt(x), POSITIVE), ("abs", np.abs, np.sign, A),
    ("sin", np.sin, np.cos, A), ("cos", np.cos, lambda x: -np.sin(x), A),
    ("tanh", np.tanh, lambda x: 1 - np.tanh(x) ** 2, A),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2, A),
    ("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0, A),
])
def test_elementwise_function_value_and_derivative(name, fn, deriv, data):
    x = leaf(data)
    y = getattr(torch, name)(x)
    assert np.allclose(getattr(x, name)().detach().numpy(), fn(data))
    assert np.allclose(y.detach().numpy(), fn(data))
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), deriv(data))


def test_sigmoid_does_not_overflow_for_large_inputs():
    assert torch.tensor([-1000.0, 1000.0]).sigmoid().tolist() == [0.0, 1.0]


def test_log_of_zero_is_minus_infinity_without_a_warning(recwarn):
    assert torch.tensor([0.0]).log().item() == -np.inf
    assert not recwarn.list


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_operator_method_and_function_agree(op):
    a, b = torch.tensor(A), torch.tensor(POSITIVE)
    sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
    expected = eval(f"A {sym} POSITIVE")
    for result in (eval(f"a {sym} b"), getattr(a, op)(b), getattr(torch, op)(a, b)):
        assert np.allclose(result.numpy(), expected)


def test_broadcasting_sums_the_gradient_back_to_each_input_shape():
    ga, gb = grad_of(lambda a, b: a * b, np.ones((2, 3)), [1.0, 2.0, 3.0])
    assert ga.shape == (2, 3) and gb.tolist() == [2.0, 2.0, 2.0]


def test_broadcasting_of_column_and_row_gives_column_and_row_gradients():
    ga, gb = grad_of(lambda a, b: a + b, [[1.0], [2.0]], [[1.0, 2.0, 3.0]])
    assert ga.tolist() == [[3.0], [3.0]] and gb.tolist() == [[2.0, 2.0, 2.0]]


def test_broadcasting_against_a_zero_dim_tensor_sums_everything():
    (g,) = grad_of(lambda s: s * torch.ones(2, 3, dtype=torch.float64), 2.0)
    assert g.shape == () and g == 6.0


def test_python_scalars_work_on_either_side():
    x = torch.tensor([1.0, 2.0])
    assert (2 * x).tolist() == (x * 2).tolist() == [2.0, 4.0]
    assert (1 - x).tolist() == [0.0, -1.0] and (x - 1).tolist() == [0.0, 1.0]
    assert (2 / x).tolist() == [2.0, 1.0] and (x / 2).tolist() == [0.5, 1.0]
    assert (2 ** x).tolist() == [2.0, 4.0] and (x ** 2).tolist() == [1.0, 4.0]


def test_division_of_integers_gives_floats():
    assert (torch.tensor([1, 2]) / 2).dtype == torch.float32


def test_an_int_tensor_times_a_float_is_float32():
    assert (torch.tensor([1, 2]) * 1.5).dtype == torch.float32


def test_a_float32_tensor_times_a_float64_zero_dim_tensor_stays_float32():
    assert (torch.ones(2) * torch.tensor(2.0, dtype=torch.float64)).dtype == torch.float32


def test_pow_gradients_for_both_base_and_exponent():
    ga, gb = grad_of(lambda a, b: a ** b, [2.0], [3.0])
    assert np.allclose(ga, 12.0) and np.allclose(gb, 8 * np.log(2))


def test_unary_minus_negates_and_flips_the_gradient():
    (g,) = grad_of(lambda x: -x, [1.0, 2.0])
    assert g.tolist() == [-1.0, -1.0]


def test_maximum_and_minimum_pick_elementwise_and_split_ties():
    a, b = torch.tensor([1.0, 5.0, 3.0]), torch.tensor([2.0, 4.0, 3.0])
    assert torch.maximum(a, b).tolist() == [2.0, 5.0, 3.0] and a.minimum(b).tolist() == [1.0, 4.0, 3.0]
    ga, gb = grad_of(torch.maximum, [1.0, 5.0, 3.0], [2.0, 4.0, 3.0])
    assert ga.tolist() == [0.0, 1.0, 0.5] and gb.tolist() == [1.0, 0.0, 0.5]


def test_clamp_limits_values_and_stops_the_gradient_outside():
    x = leaf([-2.0, 0.5, 3.0])
    y = x.clamp(-1, 1)
    y.sum().backward()
    assert y.tolist() == [-1.0, 0.5, 1.0] and x.grad.tolist() == [0.0, 1.0, 0.0]
    assert torch.clamp(x, min=0).tolist() == [0.0, 0.5, 3.0]


def test_clamp_of_an_integer_tensor_with_float_bounds_is_float():
    assert torch.tensor([1, 5, 9]).clamp(2.5, 6).tolist() == [2.5, 5.0, 6.0]


@pytest.mark.parametrize("name, npfn", [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min)])
def test_reductions_over_everything_and_along_dims(name, npfn):
    x = torch.tensor(A)
    assert np.isclose(getattr(x, name)().item(), npfn(A))
    for dim in (0, 1, -1):
        r = getattr(torch, name)(x, dim=dim)
        r = r.values if isinstance(r, tuple) else r
        assert np.allclose(r.numpy(), npfn(A, axis=dim))
        r = getattr(x, name)(dim, keepdim=True)
        r = r.values if isinstance(r, tuple) else r
        assert r.shape == np.expand_dims(npfn(A, axis=dim), dim).shape


def test_sum_over_several_dims():
    assert torch.ones(2, 3, 4).sum(dim=(0, 2)).tolist() == [8.0, 8.0, 8.0]


def test_sum_and_mean_without_grad_along_a_dim():
    assert torch.ones(2, 3).sum(0).tolist() == [2.0, 2.0, 2.0]
    assert torch.ones(2, 3).mean(dim=1, keepdim=True).shape == (2, 1)


def test_max_along_a_dim_returns_values_and_indices():
    values, indices = torch.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]


def test_gradient_of_max_goes_to_the_maximum():
    (g,) = grad_of(lambda x: x.max(), [1.0, 5.0, 2.0])
    assert g.tolist() == [0.0, 1.0, 0.0]


def test_gradient_of_mean_is_one_over_n():
    (g,) = grad_of(lambda x: x.mean(), np.ones((2, 2)))
    assert g.tolist() == [[0.25, 0.25], [0.25, 0.25]]


def test_norm_is_the_euclidean_norm_with_gradient_x_over_norm():
    x = leaf([3.0, 4.0])
    y = x.norm()
    y.backward()
    assert y.item() == 5.0 and np.allclose(x.grad.numpy(), [0.6, 0.8])


def test_dot_mm_and_matmul():
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    assert a.dot(b).item() == 11.0 == torch.dot(a, b).item() == (a @ b).item()
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert m.mm(m).tolist() == [[7.0, 10.0], [15.0, 22.0]] == torch.matmul(m, m).tolist()
    assert (m @ a).tolist() == [5.0, 11.0] and (a @ m).tolist() == [7.0, 10.0]


def test_matmul_gradients_are_the_transposed_products():
    ga, gb = grad_of(lambda a, b: a @ b, A, POSITIVE.T)
    assert np.allclose(ga, np.ones((2, 2)) @ POSITIVE) and np.allclose(gb, A.T @ np.ones((2, 2)))


def test_batched_matmul_broadcasts_and_sums_gradients_over_the_batch():
    a, b = leaf(np.ones((2, 3, 4))), leaf(np.ones((4, 5)))
    (a @ b).sum().backward()
    assert a.grad.shape == (2, 3, 4) and np.all(b.grad.numpy() == 6.0)


def test_reshape_view_and_flatten_keep_the_values_in_order():
    x = torch.arange(6.0)
    assert x.reshape(2, 3).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert x.view(3, -1).shape == (3, 2) and x.reshape((2, 3)).flatten().tolist() == x.tolist()


def test_a_view_shares_memory_with_its_base():
    x = torch.zeros(4)
    v = x.view(2, 2)
    v[0, 0] = 1.0
    assert x[0].item() == 1.0


def test_transpose_t_T_and_permute():
    x = torch.arange(6).reshape(2, 3)
    assert x.t().shape == x.T.shape == x.transpose(0, 1).shape == (3, 2)
    assert torch.arange(24).reshape(2, 3, 4).permute(2, 0, 1).shape == (4, 2, 3)


def test_squeeze_and_unsqueeze():
    x = torch.ones(1, 2, 1)
    assert x.squeeze().shape == (2,) and x.squeeze(0).shape == (2, 1) and x.squeeze(1).shape == (1, 2, 1)
    assert torch.ones(2).unsqueeze(0).shape == (1, 2) and torch.unsqueeze(torch.ones(2), -1).shape == (2, 1)


def test_shape_ops_pass_the_gradient_back_in_the_original_layout():
    (g,) = grad_of(lambda x: x.reshape(3, 2).t().unsqueeze(0) * torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64), A)
    assert g.tolist() == [[1.0, 1.0, 2.0], [2.0, 3.0, 3.0]]


def test_indexing_with_ints_slices_ellipsis_masks_and_arrays():
    x = torch.arange(12).reshape(3, 4)
    assert x[1].tolist() == [4, 5, 6, 7] and x[-1, -1].item() == 11
    assert x[:, 1:3].shape == (3, 2) and x[..., 0].tolist() == [0, 4, 8]
    assert x[x > 9].tolist() == [10, 11] and x[[0, 2]].shape == (2, 4)
    assert x[torch.tensor([2, 0]), 1].tolist() == [9, 1] and x[None].shape == (1, 3, 4)


def test_the_gradient_of_indexing_adds_up_repeated_picks():
    (g,) = grad_of(lambda x: x[[0, 0, 2]], [1.0, 2.0, 3.0])
    assert g.tolist() == [2.0, 0.0, 1.0]


def test_comparisons_return_bool_tensors():
    x = torch.tensor([1.0, 2.0, 3.0])
    for result in (x > 2, x >= 2, x < 2, x <= 2, x == 2, x != 2, 2 < x):
        assert result.dtype == torch.bool
    assert (x > 2).tolist() == [False, False, True]


def test_item_tolist_numpy_and_clone():
    x = torch.tensor([[1.5, 2.0]])
    assert x.sum().item() == 3.5 and x.tolist() == [[1.5, 2.0]]
    assert isinstance(x.numpy(), np.ndarray)
    c = x.clone()
    c[0, 0] = 9.0
    assert x[0, 0].item() == 1.5


def test_numpy_shares_memory_with_the_tensor():
    x = torch.zeros(2)
    x.numpy()[0] = 3.0
    assert x[0].item() == 3.0


def test_clone_is_recorded_and_passes_the_gradient():
    (g,) = grad_of(lambda x: x.clone() * 3, [1.0])
    assert g.tolist() == [3.0]


def test_data_shares_values_but_is_not_recorded():
    x = torch.ones(2, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.is_leaf
    d[0] = 5.0
    assert x[0].item() == 5.0


def test_allclose():
    assert torch.allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    assert not torch.tensor([1.0]).allclose(torch.tensor([1.1]))


def test_truth_value_of_a_one_element_tensor_drives_if_and_while():
    x = torch.tensor(1.0)
    while x < 5:
        x = x * 2
    assert x.item() == 8.0
    assert torch.tensor([1]) and not torch.tensor(0.0)


def test_len_shape_size_dim_numel_dtype():
    x = torch.ones(2, 3, 4)
    assert len(x) == 2 and x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(1) == 3
    assert x.dim() == 3 and x.numel() == 24 and x.dtype == torch.float32


def test_module_functions_and_methods_are_the_same_operations():
    x = torch.tensor([0.5, 1.0])
    for name in ("exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "sum", "mean", "norm"):
        assert np.allclose(getattr(x, name)().numpy(), getattr(torch, name)(x).numpy()), name
