"""optim.lr_scheduler against PyTorch's: the rates (and OneCycleLR's momenta) every step, to the
last bit of the float, the warnings and errors, state_dict."""
import pytest

from engine_helpers import import_torch, same

torch = import_torch()


def schedule(make, steps=30, metrics=None, optimizer="SGD", **settings):
    """A program: an optimizer over two parameter groups and ``make(m, opt)``; ``steps`` times one
    optimizer step and one scheduler step; the rates (momenta, betas) after each, and the parameters."""
    def program(m):
        a, b = m.ones(2, requires_grad=True), m.ones(3, requires_grad=True)
        opt = getattr(m.optim, optimizer)([{"params": [a]}, {"params": [b], "lr": 0.05}], **settings)
        scheduler = make(m, opt)
        seen = [scheduler.get_last_lr()]
        for i in range(steps):
            opt.zero_grad()
            (a.sum() * 2 + (b * b).sum()).backward()
            opt.step()
            scheduler.step(*([metrics[i]] if metrics else []))
            seen.append([scheduler.get_last_lr(), [g.get("momentum") for g in opt.param_groups],
                         [g.get("betas") for g in opt.param_groups], scheduler.last_epoch])
        return seen, a, b, [g["lr"] for g in opt.param_groups], sorted(scheduler.state_dict())
    return program


S = "torch.optim.lr_scheduler"
SCHEDULERS = {
    "step": lambda m, opt: m.optim.lr_scheduler.StepLR(opt, step_size=7, gamma=0.3),
    "multistep": lambda m, opt: m.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 10, 10, 21], gamma=0.5),
    "exponential": lambda m, opt: m.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9),
    "lambda": lambda m, opt: m.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.95 ** epoch),
    "lambda_per_group": lambda m, opt: m.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: e % 3]),
    "cosine": lambda m, opt: m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.001),
    "one_cycle": lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.5, 0.2], total_steps=30),
    "one_cycle_linear_three_phase": lambda m, opt: m.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.3, epochs=3, steps_per_epoch=10, anneal_strategy="linear", three_phase=True, pct_start=0.25),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_rate_is_torchs(name):
    same(schedule(SCHEDULERS[name], lr=0.1, momentum=0.9))


def test_one_cycle_moves_adams_first_beta():
    same(schedule(lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=30), optimizer="Adam"))


def test_one_cycle_past_its_steps_raises_torchs_error():
    same(schedule(lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=5), steps=6, lr=0.1,
                  momentum=0.9))


def test_reduce_on_plateau_is_torchs():
    metrics = [1.0, 0.9, 0.9, 0.95, 0.91, 0.8, 0.8, 0.8, 0.8, 0.8, 0.79999, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]
    for settings in (dict(patience=2), dict(patience=1, factor=0.5, cooldown=2, min_lr=[0.02, 0.001]),
                     dict(mode="max", threshold_mode="abs", threshold=0.05, patience=0)):
        same(schedule(lambda m, opt, settings=settings: m.optim.lr_scheduler.ReduceLROnPlateau(opt, **settings), steps=20,
                      metrics=metrics, lr=0.1))


def test_stepping_with_an_epoch_uses_the_closed_form_and_warns():
    def program(m):
        opt = m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1)
        schedulers = [m.optim.lr_scheduler.StepLR(opt, 3), m.optim.lr_scheduler.ExponentialLR(opt, 0.5)]
        opt.step()
        out = []
        for s in schedulers:
            s.step(7)
            out.append(s.get_last_lr())
        return out
    same(program)


def test_a_scheduler_stepped_before_the_optimizer_warns_as_torch_does():
    def program(m):
        opt = m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1)
        scheduler = m.optim.lr_scheduler.StepLR(opt, 2)
        scheduler.step()
        scheduler.get_lr()  # from outside step(): PyTorch says to use get_last_lr()
        return scheduler.get_last_lr()
    same(program)


@pytest.mark.parametrize("make", [
    lambda m, opt: m.optim.lr_scheduler.StepLR(object(), 2),
    lambda m, opt: m.optim.lr_scheduler.StepLR(opt, 2, last_epoch=3),
    lambda m, opt: m.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1, lambda e: 2]),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=0),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="step"),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=10),
    lambda m, opt: m.optim.lr_scheduler.OneCycleLR(m.optim.Adagrad(opt.param_groups[0]["params"]), 0.1, 10),
    lambda m, opt: m.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0),
    lambda m, opt: m.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="middle"),
    lambda m, opt: m.optim.lr_scheduler.ReduceLROnPlateau(opt, threshold_mode="percent"),
])
def test_bad_settings_raise_torchs_errors(make):
    same(lambda m: make(m, m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1)))


def test_the_scheduler_state_loads_into_another():
    def program(m):
        opt = m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1)
        first = m.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        for _ in range(5):
            opt.step()
            first.step()
        second = m.optim.lr_scheduler.StepLR(m.optim.SGD([m.ones(1, requires_grad=True)], lr=0.1), 9)
        second.load_state_dict(first.state_dict())
        return second.step_size, second.last_epoch, second.get_last_lr(), second.base_lrs
    same(program)


def test_schedulers_beyond_the_engine_say_so():
    import autograd_core

    with pytest.raises(NotImplementedError, match="torch.optim.lr_scheduler.CyclicLR is beyond autograd_core"):
        autograd_core.optim.lr_scheduler.CyclicLR
