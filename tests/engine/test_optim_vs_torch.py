"""Every step of the optimizers (SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta) against PyTorch's, from the same parameters and gradients.

The gradients are set by hand (the same numbers for both), so what is compared is the update
alone. float64 steps agree to 1e-12; float32 steps to float32 rounding (PyTorch fuses some
multiply-adds that NumPy rounds twice).
"""
import numpy as np
import pytest

import autograd_core
from engine_helpers import import_torch, same

torch = import_torch()

RNG = np.random.default_rng(7)
START = RNG.standard_normal((3, 4))
GRADS = RNG.standard_normal((25, 3, 4)) * np.logspace(0, -2, 25)[:, None, None]  # shrinking, as in training
BIAS = RNG.standard_normal(3)

SETTINGS = {
    "sgd": ("SGD", dict(lr=0.1)),
    "sgd_momentum": ("SGD", dict(lr=0.1, momentum=0.9)),
    "sgd_dampening_weight_decay": ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=0.01)),
    "sgd_nesterov": ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    "sgd_maximize": ("SGD", dict(lr=0.1, maximize=True)),
    "adam": ("Adam", dict(lr=0.01)),
    "adam_betas_eps": ("Adam", dict(lr=0.1, betas=(0.5, 0.9), eps=1e-6)),
    "adam_weight_decay": ("Adam", dict(lr=0.01, weight_decay=0.1)),
    "adam_amsgrad": ("Adam", dict(lr=0.01, amsgrad=True)),
    "adamw": ("AdamW", dict(lr=0.01)),
    "adamw_weight_decay_amsgrad": ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True, betas=(0.8, 0.99))),
    "adamw_maximize": ("AdamW", dict(lr=0.01, maximize=True)),
    "adagrad": ("Adagrad", dict(lr=0.1)),
    "adagrad_decay_accumulator": ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2,
                                                  eps=1e-6)),
    "rmsprop": ("RMSprop", dict(lr=0.01)),
    "rmsprop_centered_momentum": ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.8, centered=True, weight_decay=0.05)),
    "rmsprop_momentum_maximize": ("RMSprop", dict(lr=0.02, momentum=0.5, maximize=True)),
    "adadelta": ("Adadelta", dict()),
    "adadelta_rho_weight_decay": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
}


def trajectory(m, name, settings, dtype):
    dt = getattr(m, dtype)
    w = m.tensor(START, dtype=dt, requires_grad=True)
    b = m.tensor(BIAS, dtype=dt, requires_grad=True)
    opt = getattr(m.optim, name)([w, b], **settings)
    steps = []
    for g in GRADS:
        opt.zero_grad()
        w.grad = m.tensor(g, dtype=dt)
        b.grad = m.tensor(g[:, 0], dtype=dt)
        opt.step()
        steps.append(np.concatenate([w.detach().numpy().ravel(), b.detach().numpy()]).copy())
    return np.array(steps)


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-12), ("float32", 2e-6)])
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_each_step_matches_torch(setting, dtype, rtol):
    name, settings = SETTINGS[setting]
    ours = trajectory(autograd_core, name, settings, dtype)
    theirs = trajectory(torch, name, settings, dtype)
    assert ours.dtype == theirs.dtype
    scale = np.abs(theirs).max()
    for step, (a, t) in enumerate(zip(ours, theirs)):
        assert np.allclose(a, t, rtol=rtol, atol=rtol * scale), f"step {step}: {a} != {t}"


def test_float32_sgd_steps_are_torchs_bit_for_bit():
    # p.add_(grad, alpha=-lr): one rounding, as PyTorch's fused kernel does
    ours = trajectory(autograd_core, "SGD", dict(lr=0.1), "float32")
    theirs = trajectory(torch, "SGD", dict(lr=0.1), "float32")
    assert np.array_equal(ours, theirs)


def test_optimizers_print_as_torchs():
    same(lambda m: [repr(m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1, momentum=0.9)),
                    repr(m.optim.Adam([m.ones(1, requires_grad=True)]))] +
         [repr(getattr(m.optim, name)([m.ones(1, requires_grad=True)])) for name in ("AdamW", "Adagrad", "RMSprop",
                                                                                     "Adadelta")])


def test_zero_grad_sets_grad_to_none_or_zero():
    def program(m):
        w = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        (w * 3).sum().backward()
        opt.zero_grad(set_to_none=False)
        zeroed = w.grad.clone()
        opt.zero_grad()
        return zeroed, w.grad

    same(program)


def test_a_parameter_without_grad_is_left_alone_and_state_is_per_parameter():
    def program(m):
        a, b = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        opt = m.optim.SGD([a, b], lr=0.5, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            (a * a).sum().backward()
            opt.step()
        return a, b, len(opt.state), [k for k in opt.state[a]]

    same(program)


def test_optimizer_state_is_kept_and_printed_as_pytorch_keeps_it():
    # lesson 10 asks students to look at optimizer.state: Adam's step count is a float32 tensor there
    def program(m):
        w = m.nn.Parameter(m.tensor([1.0, -2.0]))
        adam, sgd = m.optim.Adam([w], lr=0.1), m.optim.SGD([w], lr=0.1, momentum=0.9)
        others = [m.optim.Adagrad([w]), m.optim.RMSprop([w], centered=True, momentum=0.5), m.optim.Adadelta([w])]
        made = repr(others[0].state[w])  # Adagrad makes its state with the optimizer
        for _ in range(3):
            for opt in (adam, sgd, *others):
                opt.zero_grad()
                (w * w).sum().backward()
                opt.step()
        return (repr(adam.state[w]), repr(sgd.state[w]), repr(adam.state_dict()["state"]), w, made,
                [repr(opt.state[w]) for opt in others])

    same(program)


@pytest.mark.parametrize("make", [
    lambda m, p: m.optim.SGD(p, lr=-0.1), lambda m, p: m.optim.SGD(p, lr=0.1, momentum=-1),
    lambda m, p: m.optim.SGD(p, lr=0.1, nesterov=True), lambda m, p: m.optim.Adam(p, betas=(1.0, 0.9)),
    lambda m, p: m.optim.Adam(p, eps=-1), lambda m, p: m.optim.SGD([], lr=0.1),
    lambda m, p: m.optim.SGD(p[0], lr=0.1), lambda m, p: m.optim.SGD([p[0] * 2], lr=0.1),
    lambda m, p: m.optim.AdamW(p, lr=-1), lambda m, p: m.optim.Adagrad(p, lr_decay=-1),
    lambda m, p: m.optim.Adagrad(p, initial_accumulator_value=-1), lambda m, p: m.optim.RMSprop(p, alpha=-1),
    lambda m, p: m.optim.RMSprop(p, momentum=-0.5), lambda m, p: m.optim.Adadelta(p, rho=1.5),
    lambda m, p: m.optim.Adadelta(p, weight_decay=-1),
])
def test_bad_settings_raise_torchs_errors(make):
    same(lambda m: make(m, [m.ones(2, requires_grad=True)]))


def test_parameter_groups_have_their_own_settings():
    def program(m):
        a, b = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        opt = m.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
        (a + b).sum().backward()
        opt.step()
        return a, b, [g["lr"] for g in opt.param_groups]

    same(program)


def test_closure_loss_is_returned():
    def program(m):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        opt = m.optim.Adam([w], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        return opt.step(closure), w

    same(program)
