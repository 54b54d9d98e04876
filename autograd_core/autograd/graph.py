"""``torch.autograd.graph``: the node type every ``grad_fn`` is an instance of."""
from ..graph import AccumulateGrad, Node, RemovableHandle  # noqa: F401
