"""``torch.autograd.detect_anomaly`` and ``set_detect_anomaly`` compared with PyTorch: the warning that
names the node whose backward failed and shows the forward call that made it, the hint of the error
for a saved tensor changed in place, ``check_nan``, the switches and what they report."""
import re

import pytest

import autograd_core
from engine_helpers import assert_alike, import_torch, outcome, same

torch = import_torch()
pytestmark = pytest.mark.usefixtures("speed_both_ways")  # with the engine's shortcuts on, and off


def _frames_of_this_file(warnings):
    """The warnings with the forward call's frames outside this file left out: the callers of the
    program differ by engine (the lines of ``same`` that call it), and PyTorch's trace has frames of
    its own Python code where a test before set a default device (as the engine's has none of its own)."""
    here = re.escape(__file__)
    frame = re.compile(r'\n?  File "(?!' + here + r')[^"]*", line \d+, in [^\n]*(?:\n    [^\n]*)?')
    return [(kind, frame.sub("", text)) for kind, text in warnings]


def same_with_trace(program):
    """``same``, the warnings compared on the frames of this file (checked to be there)."""
    (ours, our_warnings), (theirs, their_warnings) = outcome(program, autograd_core), outcome(program, torch)
    assert_alike(ours, theirs)
    assert _frames_of_this_file(our_warnings) == _frames_of_this_file(their_warnings)
    return _frames_of_this_file(our_warnings)


def test_a_failing_backward_names_the_forward_call_that_made_the_node():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            a = x * 1
            y = a.sin()
            a.mul_(2)
            y.sum().backward()
    shown = same_with_trace(program)[1][1]
    assert shown.startswith("Error detected in SinBackward0. Traceback of forward call that caused the error:\n") \
        and shown.endswith("in program\n    y = a.sin()")


def test_the_forward_call_is_shown_through_the_functions_that_made_it():
    def layer(m, x):
        return (x * 3).exp()

    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            y = layer(m, x)
            y.add_(1)
            (y * 2).sum().backward()
    assert "in layer\n    return (x * 3).exp()" in same_with_trace(program)[1][1]


def test_a_backward_that_returns_nan_fails_with_check_nan():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly():
            z = (x - 1).sqrt() * 0
            z.sum().backward()
    same_with_trace(program)


def test_without_check_nan_a_nan_gradient_is_returned():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with m.autograd.detect_anomaly(check_nan=False):
            z = (x - 1).sqrt() * 0
            z.sum().backward()
        return x.grad
    same(program)


def test_nodes_made_before_detection_was_on_have_no_forward_call_to_show():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = a.sin()
        a.mul_(2)
        with m.autograd.detect_anomaly():
            y.sum().backward()
    same(program)


def test_without_detection_the_error_hints_at_it():
    def program(m):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        y = a.sin()
        a.mul_(2)
        y.sum().backward()
    same(program)


def test_a_backward_that_works_is_the_same_with_detection_on():
    def program(m):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with m.autograd.detect_anomaly():
            y = (x @ x).relu().softmax(-1)
            v = y[0]
            v.mul_(2)
            (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
            g.sum().backward()
        return y, g, x.grad
    same_with_trace(program)


def test_the_switches_and_what_they_report():
    def program(m):
        seen = [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.autograd.set_detect_anomaly(True)
        seen += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.autograd.set_detect_anomaly(False)
        seen.append(m.is_anomaly_enabled())
        with m.autograd.set_detect_anomaly(True, check_nan=False) as entered:
            seen += [entered, m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        seen += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        with m.autograd.detect_anomaly(check_nan=False):
            seen += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.set_anomaly_enabled(True, False)
        seen += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.set_anomaly_enabled(False)
        seen += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        return seen
    same(program)


def test_detect_anomaly_is_no_decorator():
    def program(m):
        @m.autograd.detect_anomaly()
        def train_step(x):
            return (x * 2).sum()
    same(program)
