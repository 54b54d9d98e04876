"""bernoulli, multinomial, bernoulli_ and exponential_ against PyTorch's, bit for bit after the
same seed (dtype, shape, every bit, the repr, the errors, and the generator's position after:
each program ends with a draw from the default generator)."""
import numpy as np
import pytest

from engine_helpers import import_torch, same
from test_random_vs_torch import draws_alike

torch = import_torch()

RNG = np.random.default_rng(5)
WEIGHTS = RNG.random((6, 27)) ** 3  # makemore's 27 letters, some nearly never drawn
WEIGHTS[2, 4] = 0.0


@pytest.mark.parametrize("seed", [0, 1, 2147483647, 2**40 + 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_with_and_without_replacement(seed, dtype):
    def program(m):
        d = getattr(m, dtype)
        p = m.tensor(WEIGHTS.tolist(), dtype=d)
        g = m.Generator().manual_seed(seed + 1)
        return [m.multinomial(p[0], 1, replacement=True), m.multinomial(p, 1), m.multinomial(p, 40, replacement=True),
                m.multinomial(p[1], 27), m.multinomial(p, 5, replacement=False), p[2].multinomial(3, True),
                m.multinomial(p[3] / p[3].sum(), num_samples=20, replacement=True, generator=g),
                m.multinomial(p[:, :2], 1, generator=g), m.rand(2)]

    draws_alike(program, seed)


def test_makemore_sampling_loop():
    """makemore part 1: draw names letter by letter from bigram counts, with its own generator."""
    def program(m):
        counts = m.tensor((WEIGHTS[:, :6] * 100).round().tolist()) + 1
        probs = counts / counts.sum(1, keepdim=True)
        g = m.Generator().manual_seed(2147483647)
        names = []
        for _ in range(5):
            ix, out = 0, []
            for _ in range(12):
                ix = m.multinomial(probs[ix % 6], num_samples=1, replacement=True, generator=g).item()
                out.append(ix)
                if ix == 0:
                    break
            names.append(out)
        return names

    draws_alike(program)


@pytest.mark.parametrize("size", [(), (1,), (7,), (3, 17), (40, 40)])
def test_bernoulli_of_a_number_and_of_probabilities(size):
    def program(m):
        p = m.rand(size)
        x = m.empty(size)
        return [m.bernoulli(p), m.bernoulli(p.double()), x.bernoulli_(0.3).clone(), x.bernoulli_(p).clone(),
                m.bernoulli(p, 0.7), m.zeros(size, dtype=m.long).bernoulli_(0.5), m.zeros(size, dtype=m.bool).bernoulli_(p),
                m.empty(size, dtype=m.float64).bernoulli_(0.25, generator=m.Generator().manual_seed(9)), m.rand(3)]

    draws_alike(program)


def test_bernoulli_into_a_transposed_view_and_its_gradient():
    def program(m):
        x = m.zeros(5, 4).t()
        x.bernoulli_(0.5)
        p = m.full((3,), 0.5, requires_grad=True)
        y = m.bernoulli(p)
        y.sum().backward()
        return [x, y, p.grad, m.rand(2)]

    draws_alike(program)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_exponential(dtype):
    draws_alike(lambda m: [m.empty(100, dtype=getattr(m, dtype)).exponential_(),
                           m.empty(3, 5, dtype=getattr(m, dtype)).exponential_(2.5), m.rand(2)])


ERRORS = [
    lambda m: m.multinomial(m.tensor([0.2, 0.3]), 3),
    lambda m: m.multinomial(m.tensor([0.2, -0.3]), 1),
    lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
    lambda m: m.multinomial(m.tensor([0.0, 0.0]), 2, True),
    lambda m: m.multinomial(m.tensor([0.2, -0.3]), 2, True),
    lambda m: m.multinomial(m.tensor([0.2, float("inf")]), 2, True),
    lambda m: m.multinomial(m.tensor([0.2, 0.3]), 0),
    lambda m: m.multinomial(m.tensor([[[0.2, 0.3]]]), 1),
    lambda m: m.multinomial(m.tensor([1, 2]), 1),
    lambda m: m.multinomial(m.tensor(0.5), 1),
    lambda m: m.multinomial(m.tensor([0.2, float("nan")]), 1, True),
    lambda m: m.bernoulli(m.tensor([0.2, 1.3])),
    lambda m: m.bernoulli(m.tensor([1, 0])),
    lambda m: m.bernoulli(m.tensor([0.2, 0.3]), 1.5),
    lambda m: m.empty(3).bernoulli_(-0.5),
    lambda m: m.empty(3).exponential_(-1.0),
]


@pytest.mark.parametrize("program", ERRORS)
def test_errors_are_pytorchs(program):
    same(program)
