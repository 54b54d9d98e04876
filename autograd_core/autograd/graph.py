"""``torch.autograd.graph``: the node type every ``grad_fn`` is an instance of, and saved-tensor hooks."""
from ..graph import AccumulateGrad, Node
from ..hooks import RemovableHandle
from .saved_tensors_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["AccumulateGrad", "Node", "RemovableHandle", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]
