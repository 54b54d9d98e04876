"""Classes that print under PyTorch's names: ``type(x)`` shows ``<class 'torch.Tensor'>``.

Only the printed name changes: ``__module__`` stays where the class is defined, so that
tools that find classes by their module (pickle, the grader's integrity guard) still do.
"""


class ShownAs(type):
    """Metaclass: ``repr(cls)`` is ``<class 'NAME'>`` with ``NAME`` the class's ``_shown_as``."""

    def __repr__(cls):
        return f"<class '{cls._shown_as}'>"
