"""Graph lifetime: backward frees saved tensors unless retain_graph=True; graphs that saved nothing can be walked again."""
import pytest

import autograd_core as torch

SECOND_TIME = r"^Trying to backward through the graph a second time \(or directly access saved tensors after they have already been freed\)\."


def test_backward_frees_saved_tensors_so_a_second_backward_fails():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.backward()


def test_retain_graph_keeps_saved_tensors_for_another_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_a_graph_whose_nodes_saved_nothing_can_be_walked_again():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 2).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_the_sum_of_a_leaf_can_be_walked_again():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_autograd_grad_frees_the_graph_too():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    torch.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        torch.autograd.grad(y, x)


def test_a_second_path_through_a_freed_node_fails():
    x = torch.tensor([1.0], requires_grad=True)
    shared = x * x
    shared.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        (shared * 2).sum().backward()


def test_reading_saved_tensors_after_they_were_freed_fails():
    x = torch.tensor([1.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.grad_fn.saved_tensors


def test_create_graph_retains_the_graph_by_default():
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    torch.autograd.grad(y, x, create_graph=True)
    (g,) = torch.autograd.grad(y, x)
    assert g.item() == 12.0


def test_views_and_additions_save_nothing_and_can_be_walked_again():
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    y = (x.t().reshape(2) + x[0] - 1).mean()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [[2.0, 2.0]]
