"""utils.data: TensorDataset and DataLoader batch, shuffle and collate as PyTorch's do.

Shuffled orders are PyTorch's own (tests/engine/test_random_vs_torch.py compares them with PyTorch's
after one seed); the tests here check what must hold for any order: every example once per
epoch, a new order each epoch, the same order again from the same seed.
"""
import numpy as np
import pytest

import autograd_core
from engine_helpers import import_torch, same

torch = import_torch()


def batches(m, **kwargs):
    features = m.arange(20.0).reshape(10, 2)
    labels = m.arange(10)
    loader = m.utils.data.DataLoader(m.utils.data.TensorDataset(features, labels), **kwargs)
    return len(loader), [tuple(b) for b in loader]


@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=10),
                                    dict(batch_size=4, shuffle=False), dict()])
def test_in_order_batches_are_torchs(kwargs):
    same(lambda m: batches(m, **kwargs))


def test_dataset_items_length_and_errors_are_torchs():
    def program(m):
        ds = m.utils.data.TensorDataset(m.arange(6.0).reshape(3, 2), m.tensor([1, 0, 1]))
        return ds[1], ds[-1], len(ds), ds[0:2]

    same(program)
    same(lambda m: m.utils.data.TensorDataset(m.ones(3), m.ones(4)))
    same(lambda m: m.utils.data.DataLoader(m.utils.data.TensorDataset(m.ones(3)), batch_size=0))


def test_collate_stacks_tensors_and_makes_numbers_tensors():
    class Pairs:
        def __getitem__(self, i):
            return i * 1.5, i

        def __len__(self):
            return 5

    same(lambda m: [tuple(b) for b in m.utils.data.DataLoader(Pairs(), batch_size=2)])


def order(loader):
    return [int(i) for _, labels in loader for i in labels]


def test_shuffling_visits_every_example_once_in_a_new_order_each_epoch():
    loader = batches_loader(shuffle=True)
    first, second = order(loader), order(loader)
    assert sorted(first) == sorted(second) == list(range(100))
    assert first != second and first != list(range(100))


def test_a_seeded_generator_gives_the_same_order_again():
    a = order(batches_loader(shuffle=True, generator=autograd_core.Generator().manual_seed(3)))
    b = order(batches_loader(shuffle=True, generator=autograd_core.Generator().manual_seed(3)))
    c = order(batches_loader(shuffle=True, generator=autograd_core.Generator().manual_seed(4)))
    assert a == b != c


def batches_loader(**kwargs):
    ds = autograd_core.utils.data.TensorDataset(autograd_core.randn(100, 2), autograd_core.arange(100))
    return autograd_core.utils.data.DataLoader(ds, batch_size=7, **kwargs)


def test_generator_api_is_torchs():
    same(lambda m: (m.Generator().manual_seed(5).initial_seed(), str(type(m.Generator())),
                    sorted(m.randperm(4, generator=m.Generator().manual_seed(0)).tolist())))


def sampled(m, make, epochs=2):
    m.manual_seed(3)
    sampler = make(m, m.utils.data.TensorDataset(m.arange(10)))
    return len(sampler), [list(sampler) for _ in range(epochs)], m.randn(2)  # (and the generator's state after)


@pytest.mark.parametrize("make", [
    lambda m, ds: m.utils.data.SequentialSampler(ds),
    lambda m, ds: m.utils.data.RandomSampler(ds),
    lambda m, ds: m.utils.data.RandomSampler(ds, num_samples=23),
    lambda m, ds: m.utils.data.RandomSampler(ds, num_samples=4),
    lambda m, ds: m.utils.data.RandomSampler(ds, replacement=True),
    lambda m, ds: m.utils.data.RandomSampler(ds, replacement=True, num_samples=70),
    lambda m, ds: m.utils.data.RandomSampler(ds, generator=m.Generator().manual_seed(5)),
    lambda m, ds: m.utils.data.BatchSampler(m.utils.data.SequentialSampler(ds), 3, False),
    lambda m, ds: m.utils.data.BatchSampler(m.utils.data.RandomSampler(ds), 4, True),
    lambda m, ds: m.utils.data.BatchSampler(range(7), 2, drop_last=False),
])
def test_samplers_give_torchs_indices(make):
    same(lambda m: sampled(m, make))


def test_a_loader_takes_a_sampler_or_a_batch_sampler_as_torchs_does():
    def program(m):
        m.manual_seed(1)
        ds = m.utils.data.TensorDataset(m.arange(10.0), m.arange(10))
        loaders = [m.utils.data.DataLoader(ds, batch_size=3, sampler=m.utils.data.RandomSampler(ds, replacement=True)),
                   m.utils.data.DataLoader(ds, batch_sampler=m.utils.data.BatchSampler(range(10), 4, False)),
                   m.utils.data.DataLoader(ds, batch_size=None, sampler=[3, 1]),
                   m.utils.data.DataLoader(ds, batch_size=None)]
        return [(len(loader), [b for b in loader]) for loader in loaders], [type(x.sampler).__name__ for x in loaders]
    same(program)


def test_a_loader_of_numpy_examples_stacks_them_as_torchs_does():
    class Arrays:
        def __getitem__(self, i):
            return np.full(3, i, dtype=np.float32), np.float64(i) / 2, i

        def __len__(self):
            return 4
    same(lambda m: [b for b in m.utils.data.DataLoader(Arrays(), batch_size=3)])


@pytest.mark.parametrize("make", [
    lambda m, ds: m.utils.data.RandomSampler(ds, num_samples=0),
    lambda m, ds: m.utils.data.RandomSampler(ds, replacement=1),
    lambda m, ds: m.utils.data.BatchSampler(range(3), 0, False),
    lambda m, ds: m.utils.data.BatchSampler(range(3), 2, None),
    lambda m, ds: m.utils.data.DataLoader(ds, sampler=range(3), shuffle=True),
    lambda m, ds: m.utils.data.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
    lambda m, ds: m.utils.data.DataLoader(ds, batch_size=None, drop_last=True),
    lambda m, ds: m.utils.data.DataLoader(ds, num_workers=-1),
    lambda m, ds: m.utils.data.DataLoader(ds, prefetch_factor=2),
    lambda m, ds: m.utils.data.DataLoader(ds, persistent_workers=True),
])
def test_bad_sampler_settings_raise_torchs_errors(make):
    same(lambda m: make(m, m.utils.data.TensorDataset(m.arange(3))))


def test_a_dataset_drawing_random_numbers_draws_those_of_torchs_worker_processes():
    """With num_workers, PyTorch loads each batch in a worker process whose torch, random and NumPy
    generators are its own (seeded from the loader's seed and the worker's id); the engine loads in
    its one process with each batch's worker generators in place, and the process's own untouched."""
    import random

    def program(m):
        class Noisy(m.utils.data.Dataset):
            def __len__(self):
                return 10

            def __getitem__(self, i):
                return m.rand(2) + i, random.random(), float(np.random.rand())  # noqa: NPY002 (the global generator a worker seeds)

        def init(worker_id):
            m.manual_seed(m.initial_seed() + 100)

        m.manual_seed(0)
        random.seed(0)
        np.random.seed(0)  # noqa: NPY002
        seen = []
        for kwargs in (dict(batch_size=3, num_workers=2), dict(batch_size=3, num_workers=2, shuffle=True),
                       dict(batch_size=4, num_workers=2, worker_init_fn=init), dict(batch_size=None, num_workers=2),
                       dict(batch_size=3, num_workers=1), dict(batch_size=3, num_workers=2, persistent_workers=True)):
            loader = m.utils.data.DataLoader(Noisy(), **kwargs)
            seen.append([b for _ in range(2) for b in loader])
            seen.append((m.rand(1), random.random(), float(np.random.rand())))  # noqa: NPY002 (the process's own, after)
        return seen

    same(program)


def test_the_numpy_seed_of_a_worker_is_torchs():
    from torch.utils.data._utils.worker import _generate_state

    from autograd_core.utils.data import _numpy_seed_of_worker

    rng = np.random.default_rng(0)
    for base_seed in [0, 1, 2**63 - 1, *rng.integers(0, 2**63 - 1, 50, dtype=np.int64).tolist()]:
        for worker_id in range(4):
            assert _numpy_seed_of_worker(base_seed, worker_id) == _generate_state(base_seed, worker_id)


def test_torch_multiprocessing_is_pythons_and_carries_tensors():
    # fastai's foundations notebook maps a dataset's __getitem__ over batches of indices in a pool
    import multiprocessing

    assert autograd_core.multiprocessing.Pool is multiprocessing.Pool
    ds = autograd_core.utils.data.TensorDataset(autograd_core.arange(12.0).reshape(6, 2), autograd_core.arange(6))
    with autograd_core.multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map(ds.__getitem__, [[0, 1], [4, 5]])
    assert [x.tolist() for x, _ in got] == [[[0.0, 1.0], [2.0, 3.0]], [[8.0, 9.0], [10.0, 11.0]]]
    assert [y.tolist() for _, y in got] == [[0, 1], [4, 5]]
