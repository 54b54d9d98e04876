"""Random numbers against PyTorch's, bit for bit: the same seed gives the same tensors.

Each program runs once with the engine and once with PyTorch after the same ``manual_seed``,
and what it returns must be identical: dtype, shape, every bit of every value (so -0.0 and 0.0
differ), the repr, and the errors raised. Several calls in a row check that the generator's
state carries over (the stream position, the normal number kept from a Box-Muller pair).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograd_core
from engine_helpers import Raised, describe, import_torch, outcome

torch = import_torch()


def exactly(obj):
    """``describe``'s output with every array as its dtype, shape and bytes: == is bit equality."""
    if isinstance(obj, np.ndarray):
        return ("array", str(obj.dtype), obj.shape, obj.tobytes())
    if isinstance(obj, Raised):
        return ("raised", obj.type, obj.message)
    if isinstance(obj, dict):
        return tuple((k, exactly(v)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return tuple(exactly(o) for o in obj)
    if isinstance(obj, float):
        return ("float", np.float64(obj).tobytes())
    return obj


def draws_alike(program, seed=0):
    """``program(m)`` after ``m.manual_seed(seed)``, for the engine and for PyTorch: the same."""
    def seeded(m):
        m.manual_seed(seed)
        return program(m)

    ours, theirs = outcome(seeded, autograd_core)[0], outcome(seeded, torch)[0]
    assert exactly(ours) == exactly(theirs), f"\nengine:  {ours!r}\npytorch: {theirs!r}"
    return ours


# -- values ----------------------------------------------------------------------------------

SIZES = [(), (0,), (1,), (3,), (15,), (16,), (17,), (2, 3), (4, 8), (5, 7), (33,), (1000,), (3, 337)]


@pytest.mark.parametrize("size", SIZES)
def test_rand_and_randn_draw_pytorchs_numbers(size):
    draws_alike(lambda m: [m.randn(size), m.rand(size), m.randn(*size or [()]), m.rand(size, dtype=m.float64),
                           m.randn(size, dtype=m.float64), m.randn(size, dtype=m.float16), m.rand(size, dtype=m.float16)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 5, 16, 27, 64, 101])
def test_normal_and_uniform_in_place_with_a_mean_and_a_spread(dtype, n):
    def program(m):
        d = getattr(m, dtype)
        return [m.empty(n, dtype=d).normal_(0.25, 3.5), m.empty(n, dtype=d).uniform_(-0.3, 2.9),
                m.empty(n, dtype=d).normal_(), m.empty(n, dtype=d).uniform_(), m.empty(n, dtype=d).normal_(-2, 0.01)]

    draws_alike(program, seed=n)


def test_a_million_float32_normal_numbers_are_pytorchs_to_the_last_bit():
    # float32 randn of 16 or more goes through PyTorch's AVX2 Box-Muller (avx_mathfun.py)
    draws_alike(lambda m: m.empty(2**20 + 5).normal_(0.5, 3.0), seed=12345)


def test_the_generator_state_carries_over_between_calls():
    # randn(3) keeps the sin half of its second Box-Muller pair; the next small draw starts with it
    draws_alike(lambda m: [m.randn(3), m.randn(1), m.randn(2, dtype=m.float64), m.rand(1), m.randn(20), m.randn(5),
                           m.randint(0, 10, (4,)), m.randn(3)])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(-2**63, 2**64 - 1),
       shape=st.lists(st.integers(0, 9), max_size=3).map(tuple),
       dtype=st.sampled_from(["float32", "float64"]))
def test_any_seed_and_shape(seed, shape, dtype):
    def program(m):
        d = getattr(m, dtype)
        return [m.initial_seed(), m.randn(shape, dtype=d), m.rand(shape, dtype=d), m.randint(-5, 2**30, shape),
                m.randperm(len(shape) * 7), m.normal(1.0, 2.0, shape, dtype=d)]

    draws_alike(program, seed=seed)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
def test_randint_for_every_dtype_and_range(dtype):
    def program(m):
        d = getattr(m, dtype)
        ranges = [(0, 2), (3, 10), (-4, 5), (0, 256), (0, 2**28 - 1), (0, 2**28), (-2**40, 2**40), (0, 2**62)]
        fits = [(lo, hi) for lo, hi in ranges if dtype.startswith("float") or
                np.iinfo(dtype).min <= lo and hi - 1 <= np.iinfo(dtype).max]
        return [m.randint(lo, hi, (6,), dtype=d) for lo, hi in fits] + [m.randint(7, (3, 2), dtype=d)]

    draws_alike(program)


def test_randint_takes_its_arguments_as_pytorch_does():
    draws_alike(lambda m: [m.randint(5, (3,)), m.randint(2, 9, [2, 2]), m.randint(low=1, high=4, size=(3,)),
                           m.randint(high=5, size=(2,)), m.randint(0, 3, ()), m.randint(0, 3, (0,)),
                           m.randint(0, 4, (2,), dtype=m.float32, requires_grad=True)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"])
def test_random_in_place(dtype):
    def program(m):
        d = getattr(m, dtype)
        calls = [m.zeros(5, dtype=d).random_()]
        if dtype != "bool":
            calls += [m.zeros(5, dtype=d).random_(7), m.zeros(5, dtype=d).random_(2, 9)]
        return calls

    draws_alike(program)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 100, 30001])
def test_randperm(n):
    draws_alike(lambda m: [m.randperm(n), m.randperm(n, dtype=m.int32), m.randperm(n, dtype=m.float64), m.rand(2)])


def test_normal_in_all_its_forms():
    def program(m):
        means, stds = m.arange(20.0), m.linspace(0.1, 2.0, 20)
        return [m.normal(means, 2.0), m.normal(1.5, stds), m.normal(means, stds), m.normal(means.reshape(20, 1), stds),
                m.normal(mean=m.arange(4.0)), m.normal(2, 3, size=(3,)), m.normal(2, 3, (17,), dtype=m.float64),
                m.normal(m.zeros(3, dtype=m.float64), 1.0), m.normal(0.0, 1.0, (2, 2), requires_grad=True)]

    draws_alike(program)


def test_like_functions_and_the_default_dtype():
    def program(m):
        x = m.zeros(2, 9, dtype=m.float64)
        first = [m.rand_like(x), m.randn_like(x), m.randn_like(x, dtype=m.float32), m.rand_like(m.zeros(3))]
        m.set_default_dtype(m.float64)
        try:
            return first + [m.rand(3), m.randn(17), m.normal(0.0, 1.0, (2,))]
        finally:
            m.set_default_dtype(m.float32)

    draws_alike(program)


def test_normal_in_place_on_a_view_that_is_not_contiguous():
    # 20 numbers, but not contiguous: PyTorch draws them one at a time (the double Box-Muller path)
    def program(m):
        x = m.zeros(4, 5)
        x.t().normal_()
        return x

    draws_alike(program)


# -- generators, seeds and state -------------------------------------------------------------

def test_a_generator_is_independent_of_the_default_one():
    def program(m):
        g = m.Generator().manual_seed(7)
        return [m.randn(3, generator=g), m.randn(3), m.rand(2, generator=g), m.randint(0, 9, (3,), generator=g),
                m.randperm(5, generator=g), m.randn(2), m.normal(0.0, 1.0, (3,), generator=g),
                m.empty(4).uniform_(generator=g), m.empty(4).normal_(generator=g), m.randn_like(m.zeros(2), generator=g),
                m.rand_like(m.zeros(2), generator=g), m.zeros(3, dtype=m.int64).random_(9, generator=g)]

    draws_alike(program)


def test_a_new_generator_starts_from_pytorchs_default_seed():
    draws_alike(lambda m: [m.Generator().initial_seed(), m.rand(3, generator=m.Generator()),
                           m.Generator().manual_seed(3).initial_seed(), m.Generator().device])


@pytest.mark.parametrize("seed", [0, 1, 42, -1, -2**63, 2**32 + 5, 2**63, 2**64 - 1, 1.9, "12", True])
def test_manual_seed_takes_what_pytorch_takes(seed):
    draws_alike(lambda m: [m.manual_seed(seed).initial_seed(), m.initial_seed(), m.rand(2)])


@pytest.mark.parametrize("seed", [2**64, -2**63 - 1, None, "x"])
def test_manual_seed_refuses_what_pytorch_refuses(seed):
    draws_alike(lambda m: m.manual_seed(seed))


@pytest.mark.parametrize("seed", ["3", 1.5, True, 2**64])
def test_a_generators_manual_seed_refuses_what_pytorchs_refuses(seed):
    draws_alike(lambda m: m.Generator().manual_seed(seed))


def test_seed_draws_a_fresh_64_bit_seed():
    s = autograd_core.seed()
    assert isinstance(s, int) and 0 <= s < 2**64 and autograd_core.initial_seed() == s
    assert autograd_core.Generator().seed() != autograd_core.Generator().seed()


def test_the_state_is_pytorchs_bytes():
    def program(m):
        states = [m.get_rng_state()]
        m.randn(3)  # two Box-Muller pairs: one number kept
        states.append(m.get_rng_state())
        m.rand(700)  # past a twist of the 624 words
        states.append(m.get_rng_state())
        m.randn(1)  # uses the kept number
        return states + [m.get_rng_state(), m.Generator().get_state(), m.Generator().manual_seed(9).get_state()]

    states = draws_alike(program, seed=5)
    assert states[1][0]["shape"] == (5056,) and states[1][0]["dtype"] == "torch.uint8"


def test_a_state_saved_by_pytorch_loads_here_and_the_other_way():
    torch.manual_seed(11)
    torch.rand(5)
    torch.randn(3)
    saved = torch.get_rng_state()
    autograd_core.set_rng_state(autograd_core.tensor(saved.numpy()))
    assert np.array_equal(autograd_core.get_rng_state().numpy(), saved.numpy())
    assert np.array_equal(autograd_core.randn(21).numpy(), torch.randn(21).numpy())
    assert np.array_equal(autograd_core.randn(1).numpy(), torch.randn(1).numpy())

    g = autograd_core.Generator().manual_seed(4)
    autograd_core.rand(630, generator=g)  # past the first twist
    clone = g.clone_state()
    torch_g = torch.Generator().set_state(torch.tensor(g.get_state().numpy()))
    drawn = autograd_core.randn(7, generator=g).numpy()
    assert np.array_equal(drawn, torch.randn(7, generator=torch_g).numpy())
    assert np.array_equal(drawn, autograd_core.randn(7, generator=clone).numpy())


def test_bad_states_are_refused_as_pytorch_refuses_them():
    def program(m):
        results = []
        for bad in (lambda: m.zeros(10, dtype=m.uint8), lambda: m.zeros(5056), lambda: m.zeros(5056, dtype=m.uint8),
                    lambda: [1, 2]):
            try:
                m.set_rng_state(bad())
            except Exception as exc:
                results.append(Raised(exc))
        return results

    draws_alike(program)


# -- errors ----------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda m: m.randint(5, 5, (2,)), lambda m: m.randint(5, 3, (2,)), lambda m: m.randint(0, 5, (-1,)),
    lambda m: m.randint(0, 2**32, (2,), dtype=m.int32), lambda m: m.randint(-3, 5, (3,), dtype=m.uint8),
    lambda m: m.randint(0, 5, (2,), dtype=m.bool), lambda m: m.randint(0, 5, (2,), requires_grad=True),
    lambda m: m.randint(5), lambda m: m.randint(0.5, 5.5, (3,)),
    lambda m: m.rand(-1), lambda m: m.randn(2, -3), lambda m: m.rand(2, dtype=m.int64), lambda m: m.randn(2, dtype=m.int64),
    lambda m: m.randn(), lambda m: m.rand_like(m.zeros(2, dtype=m.int64)),
    lambda m: m.randperm(-1), lambda m: m.randperm(5.0), lambda m: m.randperm(5, dtype=m.bool),
    lambda m: m.normal(0.0, -1.0, (2,)), lambda m: m.normal(0.0, 1.0), lambda m: m.normal(m.zeros(2), m.ones(3)),
    lambda m: m.normal(m.zeros(2), -1.0), lambda m: m.normal(0.0, -m.ones(2)),
    lambda m: m.empty(2).normal_(0, -1), lambda m: m.empty(2).uniform_(1, 0), lambda m: m.empty(2).uniform_(0.5, 0.25),
    lambda m: m.zeros(2, dtype=m.int64).uniform_(), lambda m: m.zeros(2, dtype=m.int64).normal_(),
    lambda m: m.zeros(2, dtype=m.int64).random_(3, 3),
], ids=lambda call: "")
def test_bad_arguments_raise_pytorchs_errors(call):
    def program(m):
        result = call(m)
        return result

    ours = outcome(program, autograd_core)[0]
    theirs = outcome(program, torch)[0]
    assert isinstance(theirs, Raised) and isinstance(ours, Raised), (ours, theirs)
    # PyTorch lists its overloads after "expected one of:"; the engine says the first line
    assert (ours.type, ours.message.splitlines()[0]) == (theirs.type, theirs.message.splitlines()[0])


def test_fused_multiply_add_rounds_once():
    # the kernels' a * b + c: checked against exact fractions, on sums built to land on ties
    from fractions import Fraction

    from autograd_core.exact_math import fma

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a = (rng.standard_normal(3000) * 2.0 ** rng.integers(-20, 20, 3000)).astype(dtype)
        b = rng.standard_normal(3000).astype(dtype)
        tie = np.float32(2.0**-25) * a * b if dtype == np.float32 else 2.0**-54 * a * b
        for c in ((rng.standard_normal(3000)).astype(dtype), (-(a * b)).astype(dtype), (tie - a * b).astype(dtype)):
            exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in zip(a, b, c)]
            got = fma(a, b, c)
            for g, e in zip(got.tolist(), exact):
                up, down = np.nextafter(dtype(g), dtype(np.inf)), np.nextafter(dtype(g), dtype(-np.inf))
                assert abs(Fraction(g) - e) <= min(abs(Fraction(float(up)) - e), abs(Fraction(float(down)) - e))
    # 3a for an odd a in [2**24/3, 2**25/3) is odd, so halfway between two float32 numbers; a tiny c
    # decides the way, but float64 cannot hold 3a + c and rounds onto the tie: the case redone
    a = np.arange(5592407, 5592407 + 6000, 2).astype(np.float32)
    for c, way in ((2.0**-40, 1), (-(2.0**-40), -1)):
        assert np.array_equal(fma(a, np.float32(3), np.float32(c)), (3 * a.astype(np.int64) + way).astype(np.float32))


# -- nn.init and the data loader -------------------------------------------------------------

def test_layers_start_from_pytorchs_numbers():
    def program(m):
        layers = [m.nn.Linear(3, 2), m.nn.Linear(20, 30), m.nn.Linear(4, 1, bias=False)]
        net = m.nn.Sequential(m.nn.Linear(2, 8), m.nn.ReLU(), m.nn.Linear(8, 1))
        return [(p.detach(), b) for layer in layers + [net] for b, p in layer.named_parameters()]

    draws_alike(program)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nn_init_functions(dtype):
    def program(m):
        init, w = m.nn.init, m.empty(30, 40, dtype=getattr(m, dtype))
        g = m.Generator().manual_seed(3)
        return [init.xavier_uniform_(w).clone(), init.xavier_normal_(w, gain=2.0).clone(),
                init.kaiming_uniform_(w, nonlinearity="relu").clone(), init.kaiming_normal_(w, mode="fan_out").clone(),
                init.uniform_(w, -0.2, 0.2).clone(), init.normal_(w, 1.0, 0.01).clone(), init.normal_(w, generator=g).clone(),
                init.uniform_(w, generator=g).clone(), init.kaiming_uniform_(w, a=5 ** 0.5, generator=g).clone()]

    draws_alike(program)


@pytest.mark.parametrize("generator", [False, True])
def test_data_loader_shuffles_as_pytorchs(generator):
    def program(m):
        data = m.utils.data
        dataset = data.TensorDataset(m.arange(23), m.arange(23) * 2)
        g = m.Generator().manual_seed(8) if generator else None
        loader = data.DataLoader(dataset, batch_size=5, shuffle=True, generator=g)
        epochs = [[batch for batch, _ in loader] for _ in range(3)]
        plain = [batch for batch, _ in data.DataLoader(dataset, batch_size=10)]
        return epochs, plain, m.randn(4)  # (the default generator's position afterwards too)

    draws_alike(program)
