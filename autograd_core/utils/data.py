"""``torch.utils.data``: a dataset of examples, and a loader that hands them out in minibatches.

    dataset = TensorDataset(features, labels)      # dataset[i] == (features[i], labels[i])
    for X, y in DataLoader(dataset, batch_size=10, shuffle=True):
        ...                                        # X: 10 rows of features, y: their 10 labels

This is the ``data_iter`` that d2l's linear regression from scratch writes by hand: shuffle
the indices, then take them ``batch_size`` at a time.
"""
from __future__ import annotations

import itertools
import numbers
import random as python_random

import numpy as np

from ..creation import as_tensor, empty, tensor
from ..dtypes import float64, int64
from ..functional import stack
from ..random import randint, randperm
from ..random_generator import default_generator
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


class Sampler:
    """Something to iterate over that gives the indices of a dataset's examples, in some order."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``: the examples in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _own_generator():
    """A generator seeded from the default one (its seed drawn as PyTorch draws it)."""
    seed = int(empty((), dtype=int64).random_().item())
    generator = Generator()
    generator.manual_seed(seed)
    return generator


class RandomSampler(Sampler):
    """The examples in a random order, PyTorch's for the same seed: ``num_samples`` indices (all of
    them by default), as whole shuffles (``randperm``) and part of one more; with ``replacement``,
    drawn independently (``randint``, 32 at a time). Without a ``generator`` each ``iter()`` seeds one
    of its own from the default generator, as PyTorch does."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self._num_samples, self.generator = \
            data_source, replacement, num_samples, generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _own_generator() if self.generator is None else self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:  # (the last shuffle is drawn even when none of it is needed, as PyTorch does)
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler`` (the last one shorter, or dropped with ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        indices = iter(self.sampler)  # taken one at a time: a shuffle is drawn only when it is needed
        batch = list(itertools.islice(indices, self.batch_size))
        while batch:
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch
            batch = list(itertools.islice(indices, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def default_collate(batch):
    """A list of examples -> one batch: tensors stacked, numbers made a tensor, tuples field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch, 0)
    if isinstance(first, np.ndarray) and first.dtype.kind not in "OSU":  # arrays: as tensors, stacked
        return stack([as_tensor(b) for b in batch], 0)
    if isinstance(first, (np.number, np.bool_)):
        return as_tensor(np.array(batch))
    if isinstance(first, str):
        return batch
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


def default_convert(data):
    """What an unbatched loader (``batch_size=None``) hands out: NumPy arrays made tensors, the rest as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
        return as_tensor(data)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):  # (a tuple becomes a list, as in PyTorch)
        return [default_convert(d) for d in data]
    if isinstance(data, dict):
        return {key: default_convert(value) for key, value in data.items()}
    return data


def _numpy_seed_of_worker(base_seed, worker_id):
    """The four 32-bit words PyTorch seeds a loader process's NumPy generator with (its
    ``_generate_state``: a SeedSequence-style hash of the worker's id and the loader's seed)."""
    mask = 0xFFFFFFFF
    hash_const_a, hash_const_b = [0x43B0D7E5], [0x8B51F9DD]

    def hash_a(value):
        value = (value ^ hash_const_a[0]) & mask
        hash_const_a[0] = (hash_const_a[0] * 0x931E8875) & mask
        value = (value * hash_const_a[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x, y):
        result = (((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)) & mask
        return (result ^ (result >> 16)) & mask

    pool = [hash_a(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash_a(pool[i_src]))
    state = []
    for value in pool:
        value = (value ^ hash_const_b[0]) & mask
        hash_const_b[0] = (hash_const_b[0] * 0x58F38DED) & mask
        value = (value * hash_const_b[0]) & mask
        state.append((value ^ (value >> 16)) & mask)
    return state


class _WorkerRandomness:
    """The random numbers of one of PyTorch's loader processes, here in the one process.

    With ``num_workers=n`` PyTorch loads batch ``k`` in worker ``k % n``, a process whose ``torch``,
    ``random`` and NumPy generators are seeded from the loader's seed and the worker's id; a dataset
    that draws random numbers (an augmentation, a random crop) draws them there, not from the main
    process's generators. The engine loads every batch in its one process: each batch is loaded with
    its worker's three generators put in place of the process's own, and the process's own put back
    after, so the dataset draws PyTorch's numbers and the training's own numbers are not disturbed."""

    def __init__(self, base_seed, worker_id, init_fn):
        self.base_seed, self.worker_id, self.init_fn, self.states = base_seed, worker_id, init_fn, None

    def _swap(self, states):
        mine = (default_generator.get_state(), python_random.getstate(), np.random.get_state())  # noqa: NPY002
        default_generator.set_state(states[0])
        python_random.setstate(states[1])
        np.random.set_state(states[2])  # noqa: NPY002
        return mine

    def __enter__(self):
        if self.states is None:  # the worker starts: seeded as PyTorch seeds it, then its init function
            self.main = (default_generator.get_state(), python_random.getstate(), np.random.get_state())  # noqa: NPY002
            seed = self.base_seed + self.worker_id
            python_random.seed(seed)
            default_generator.manual_seed(seed)
            np.random.seed(_numpy_seed_of_worker(self.base_seed, self.worker_id))  # noqa: NPY002
            if self.init_fn is not None:
                self.init_fn(self.worker_id)
        else:
            self.main = self._swap(self.states)

    def __exit__(self, *exc):
        self.states = self._swap(self.main)


class DataLoader:
    """Minibatches of ``dataset``: ``batch_size`` examples at a time, in order or shuffled anew
    each epoch (with ``generator`` for a repeatable order); ``drop_last`` drops a short last batch.
    The order comes from a ``sampler`` (``SequentialSampler``, or ``RandomSampler`` with
    ``shuffle=True``) grouped by a ``BatchSampler``, as in PyTorch; either may be given instead.
    ``num_workers``: loaded in this process, each batch with the random numbers its worker process
    would have in PyTorch (``_WorkerRandomness``)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 generator=None, **kwargs):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if num_workers == 0 and kwargs.get("prefetch_factor") is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers == 0 and kwargs.get("persistent_workers"):
            raise ValueError("persistent_workers option needs num_workers > 0")
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral) or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last, self.generator = dataset, batch_size, drop_last, generator
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        self.worker_init_fn, self.persistent_workers = worker_init_fn, bool(kwargs.get("persistent_workers"))
        self._kept_workers = None  # with persistent_workers: the workers (their random numbers) of every epoch
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        if self._kept_workers is not None:  # persistent workers: no new seed, the same workers from worker 0 on
            return self._batches(self._kept_workers)
        # PyTorch's loader draws a seed for its worker processes at every iter(), workers or not
        base_seed = int(empty((), dtype=int64).random_(generator=self.generator).item())
        workers = [_WorkerRandomness(base_seed, i, self.worker_init_fn) for i in range(self.num_workers)]
        if self.persistent_workers and workers:
            self._kept_workers = workers
        return self._batches(workers)

    def _batches(self, workers):
        chosen = self.sampler if self.batch_sampler is None else self.batch_sampler  # (no batching: one example)
        for k, indices in enumerate(chosen):
            if workers:  # loaded with the random numbers of the worker PyTorch gives this batch
                with workers[k % len(workers)]:
                    loaded = self._load(indices)
            else:
                loaded = self._load(indices)
            yield loaded

    def _load(self, indices):
        if self.batch_sampler is None:
            return self.collate_fn(self.dataset[indices])
        return self.collate_fn([self.dataset[j] for j in indices])

    def __len__(self):
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

__getattr__ = _beyond.module_getattr("torch.utils.data")  # what PyTorch has here and the engine has not: its error
