"""Engine classes print under PyTorch's names but stay where they are defined.

``type(x)`` shows ``<class 'torch.Tensor'>`` as tutorials print it; ``__module__`` is still the
engine's, so the grader's integrity guard (which finds classes by the module that defines them)
still puts back a Tensor method a submission replaced.
"""
import warnings

import pytest
from IPython.core.interactiveshell import InteractiveShell

import autograd_core
from grader.sandbox.guard import IntegrityGuard


@pytest.mark.parametrize("cls, shown", [
    (autograd_core.Tensor, "torch.Tensor"), (autograd_core.Size, "torch.Size"), (autograd_core.dtype, "torch.dtype"),
    (autograd_core.device, "torch.device"), (autograd_core.Generator, "torch._C.Generator"),
    (autograd_core.FloatTensor, "torch.FloatTensor"), (autograd_core.nn.Parameter, "torch.nn.parameter.Parameter"),
])
def test_class_prints_as_pytorchs_and_keeps_its_module(cls, shown):
    assert repr(cls) == str(cls) == f"<class '{shown}'>"
    assert cls.__module__.startswith("autograd_core.")


def test_a_replaced_tensor_method_is_put_back_by_the_integrity_guard():
    shell = InteractiveShell.instance()

    class Recorder:  # the parts of the grader's output recorder that restore() consults
        show_traceback = None
        displayhook, display_pub = shell.displayhook, shell.display_pub

        def install(self):
            pass

    with warnings.catch_warnings():  # it reads every loaded module (PyTorch too, loaded by other tests)
        warnings.simplefilter("ignore")
        guard = IntegrityGuard(shell)
    original_eq, original_allclose = autograd_core.Tensor.__eq__, autograd_core.Tensor.allclose
    try:
        autograd_core.Tensor.__eq__ = lambda self, other: True
        autograd_core.Tensor.allclose = lambda *args, **kwargs: True
        changed = guard.restore(Recorder())
    finally:
        restored = autograd_core.Tensor.__eq__ is original_eq and autograd_core.Tensor.allclose is original_allclose
        autograd_core.Tensor.__eq__, autograd_core.Tensor.allclose = original_eq, original_allclose
    assert restored
    assert {"autograd_core.tensor.Tensor.__eq__", "autograd_core.tensor.Tensor.allclose"} <= set(changed)
