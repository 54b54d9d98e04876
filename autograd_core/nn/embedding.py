"""Embedding: a table of vectors, one row per index; ``emb(ix)`` looks the rows up.

    C = nn.Embedding(27, 10)        # makemore's C = torch.randn((27, 10)), as a layer
    C(torch.tensor([[0, 5, 13]]))   # shape (1, 3, 10): the rows 0, 5 and 13

A lookup is indexing (``weight[ix]``); its gradient adds each output row's gradient into the row
of the table it came from (a row looked up twice gets both), and ``padding_idx``'s row gets none.
Both are written with the engine's own ops, so the lookup can be differentiated twice.
"""
from __future__ import annotations

import numpy as np

from .. import grad_mode, ops
from ..function import Op
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

_INDEX_TYPES = {np.dtype(np.int64), np.dtype(np.int32)}


class EmbeddingBackward0(Op):
    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.indices, ctx.padding_idx, ctx.shape = indices, padding_idx, weight._data.shape
        return weight._data[indices]

    @staticmethod
    def backward(ctx, grad):
        if ctx.padding_idx >= 0:  # the padding row learns nothing
            keep = (ctx.indices != ctx.padding_idx)[..., None].astype(grad._data.dtype)
            grad = grad * Tensor._make(keep)
        return (ops.put_into_zeros(grad, ctx.shape, (ctx.indices,)),)


def _padding_index(padding_idx, num_embeddings):
    """PyTorch's checks and its -1 for "none"."""
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
        padding_idx += num_embeddings
    return padding_idx


def _beyond_the_engine(max_norm, scale_grad_by_freq, sparse):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "embedding's max_norm, scale_grad_by_freq and sparse are beyond autograd_core (see docs/engine.md)")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at the indices ``input`` (an integer tensor of any shape)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 2) must be Tensor, not {type(input).__name__}")
    _beyond_the_engine(max_norm, scale_grad_by_freq, sparse)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    padding_idx = _padding_index(padding_idx, weight.shape[0])
    indices = input._data
    if indices.dtype not in _INDEX_TYPES:
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"torch.{input.dtype.legacy_name} instead (while checking arguments for embedding)")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return EmbeddingBackward0.apply(weight, indices=indices, padding_idx=padding_idx)


class Embedding(Module):
    """``nn.Embedding(num_embeddings, embedding_dim)``: a table of ``num_embeddings`` vectors, drawn
    from N(0, 1) as PyTorch draws them (the row ``padding_idx``, if given, is zeros)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        _beyond_the_engine(max_norm, scale_grad_by_freq, sparse)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            padding_idx = _padding_index(padding_idx, num_embeddings)
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            from ..creation import empty

            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], \
                "Shape of weight does not match num_embeddings and embedding_dim"
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with grad_mode.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An embedding whose table is ``embeddings`` (frozen unless ``freeze=False``)."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
