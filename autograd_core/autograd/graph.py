"""``torch.autograd.graph``: the node type every ``grad_fn`` is an instance of."""
from ..graph import AccumulateGrad, Node
from ..hooks import RemovableHandle

__all__ = ["AccumulateGrad", "Node", "RemovableHandle"]
