"""``torch.utils.data``: a dataset of examples, and a loader that hands them out in minibatches.

    dataset = TensorDataset(features, labels)      # dataset[i] == (features[i], labels[i])
    for X, y in DataLoader(dataset, batch_size=10, shuffle=True):
        ...                                        # X: 10 rows of features, y: their 10 labels

This is the ``data_iter`` that d2l's linear regression from scratch writes by hand: shuffle
the indices, then take them ``batch_size`` at a time.
"""
from __future__ import annotations

import math
import numbers

from ..creation import empty, tensor
from ..dtypes import float64, int64
from ..functional import stack
from ..random import randperm
from ..random_generator import Generator
from ..tensor import Tensor
from .. import beyond as _beyond


class Dataset:
    """Anything with ``__getitem__(i)`` (and usually ``__len__``) is a dataset."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    """Example ``i`` is ``(t[i] for t in tensors)``: the tensors must agree on their first dimension."""

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def random_order(n, num_samples, generator=None):
    """``num_samples`` indices of ``n`` examples: whole shuffles of all ``n``, then part of one more
    (PyTorch's RandomSampler; it draws that last shuffle even when no part of it is needed).
    Without a generator it seeds one of its own from the default generator, as PyTorch does."""
    if generator is None:
        seed = int(empty((), dtype=int64).random_().item())
        generator = Generator()
        generator.manual_seed(seed)
    for _ in range(num_samples // n):
        yield from randperm(n, generator=generator).tolist()
    yield from randperm(n, generator=generator).tolist()[:num_samples % n]


def default_collate(batch):
    """A list of examples -> one batch: tensors stacked, numbers made a tensor, tuples field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch, 0)
    if isinstance(first, float):  # Python floats are double precision: so is their batch (as in PyTorch)
        return tensor(batch, dtype=float64)
    if isinstance(first, numbers.Number):
        return tensor(batch)
    if isinstance(first, (tuple, list)):
        if any(len(example) != len(first) for example in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    if isinstance(first, dict):
        return {key: default_collate([example[key] for example in batch]) for key in first}
    return batch


class DataLoader:
    """Minibatches of ``dataset``: ``batch_size`` examples at a time, in order or shuffled anew
    each epoch (with ``generator`` for a repeatable order); ``drop_last`` drops a short last batch."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, **kwargs):
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.generator = generator

    def _order(self):
        n = len(self.dataset)
        return random_order(n, n, self.generator) if self.shuffle else range(n)

    def __iter__(self):
        # PyTorch's loader draws a seed for its worker processes at every iter(), workers or not
        empty((), dtype=int64).random_(generator=self.generator)
        return self._batches()

    def _batches(self):
        batch = []
        for i in self._order():  # taken one at a time: a shuffle is drawn only when it is needed
            batch.append(i)
            if len(batch) == self.batch_size:
                yield self.collate_fn([self.dataset[j] for j in batch])
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn([self.dataset[j] for j in batch])

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

__getattr__ = _beyond.module_getattr("torch.utils.data")  # what PyTorch has here and the engine has not: its error
