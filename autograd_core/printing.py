"""Print tensors exactly the way PyTorch does.

``repr(x)`` of one of our tensors must be byte-for-byte the text PyTorch 2.13
prints, so that a notebook cell gives the same output whichever library runs
it. This module rebuilds PyTorch's algorithm (``torch/_tensor_str.py``) in a
few small steps, using NumPy only:

1. Pick the values that will be shown. Above ``threshold`` elements only the
   first and last ``edgeitems`` entries of every dimension are shown, with
   ``...`` in between (see ``_shown_values``).
2. Choose one number style for the whole tensor from those values: integers,
   ``1.`` style floats, 4-decimal floats or scientific notation, and the width
   of the widest number, so that columns line up (see ``_Formatter``).
3. Write the nested brackets, wrapping long rows at ``linewidth`` and putting
   blank lines between 2-d blocks (see ``_format_nested``).
4. Append suffixes such as ``dtype=torch.float64`` or ``grad_fn=<...>``, on a
   new line when they would make the line too long (see ``_add_suffixes``).

Public functions: ``format_tensor``, ``dtype_suffix``, ``set_printoptions``
(plus ``get_printoptions`` and the ``printoptions`` context manager).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterable, Iterator

import numpy as np

__all__ = [
    "format_tensor",
    "dtype_suffix",
    "set_printoptions",
    "get_printoptions",
    "printoptions",
]


# ---------------------------------------------------------------------------
# Print options (same names, defaults and profiles as torch.set_printoptions)
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4  # digits after the decimal point
    threshold: float = 1000  # more elements than this -> summarize with '...'
    edgeitems: int = 3  # items kept at each end of a summarized dimension
    linewidth: int = 80  # where long rows wrap
    sci_mode: bool | None = None  # None: decided per tensor; True/False: forced


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Change how tensors are printed; same meaning as ``torch.set_printoptions``.

    ``profile`` ('default', 'short' or 'full') first resets the four numeric
    options, then any option given explicitly overrides it. Like PyTorch,
    ``sci_mode`` is *always* set, so omitting it restores automatic choice.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """Temporarily change print options: ``with printoptions(precision=2): ...``."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

# NumPy dtype -> the name PyTorch prints. float32 is PyTorch's default dtype.
_TORCH_DTYPE_NAMES = {
    np.dtype(np.float16): "torch.float16",
    np.dtype(np.float32): "torch.float32",
    np.dtype(np.float64): "torch.float64",
    np.dtype(np.int8): "torch.int8",
    np.dtype(np.int16): "torch.int16",
    np.dtype(np.int32): "torch.int32",
    np.dtype(np.int64): "torch.int64",
    np.dtype(np.uint8): "torch.uint8",
    np.dtype(np.uint16): "torch.uint16",
    np.dtype(np.uint32): "torch.uint32",
    np.dtype(np.uint64): "torch.uint64",
    np.dtype(np.bool_): "torch.bool",
}

_DEFAULT_FLOAT = np.dtype(np.float32)

# A non-empty tensor of one of these dtypes prints no 'dtype=': PyTorch
# considers them obvious from the values (float32 = the default float dtype,
# int64 = what torch.tensor([1, 2]) gives, bool = True/False).
_IMPLICIT_DTYPES = (_DEFAULT_FLOAT, np.dtype(np.int64), np.dtype(np.bool_))


def _torch_dtype_name(array_dtype) -> str:
    dtype = np.dtype(array_dtype)
    try:
        return _TORCH_DTYPE_NAMES[dtype]
    except KeyError:
        raise TypeError(f"cannot print tensors of dtype {dtype}") from None


def dtype_suffix(array_dtype: "np.dtype", default_float=_DEFAULT_FLOAT) -> "str | None":
    """'dtype=torch.float64' etc. when PyTorch would print one for a non-empty
    tensor, else None (float32 - the default -, int64 and bool print none; ``default_float``: the
    default dtype, ``torch.set_default_dtype``'s, prints none, and float32 does when it is not it)."""
    name = _torch_dtype_name(array_dtype)
    if np.dtype(array_dtype) in (np.dtype(default_float), *_IMPLICIT_DTYPES[1:]):
        return None
    return "dtype=" + name


# ---------------------------------------------------------------------------
# Step 1: which values are shown
# ---------------------------------------------------------------------------


def _shown_values(array: np.ndarray) -> np.ndarray:
    """The entries a summarized print shows, so the number style is chosen
    from them only (a hidden huge value must not force scientific notation)."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if edge == 0:
        # PyTorch's quirk: a 1-d tensor keeps all its values (x[-0:] is all of
        # x), a higher-dimensional one keeps none.
        return array if array.ndim == 1 else array[(slice(0, 0),) * array.ndim]
    # Every dimension is cut the same way: keep its first and last `edge`
    # indices when it is longer than 2 * edge.
    index = []
    for size in array.shape:
        if size > 2 * edge:
            index.append(np.r_[0:edge, size - edge : size])
        else:
            index.append(np.arange(size))
    return array[np.ix_(*index)]


# ---------------------------------------------------------------------------
# Step 2: one number style for the whole tensor
# ---------------------------------------------------------------------------


class _Formatter:
    """Decides, from all shown values, how every single number is written.

    Floats get one of three styles, shared by the whole tensor so that
    columns line up:
      * int_mode - every finite value is a whole number: ``12.``, ``-3.``
      * fixed    - ``precision`` decimals: ``0.5000``
      * sci_mode - ``1.0000e+08``, chosen when the numbers span too many
        orders of magnitude for fixed decimals to show them well.
    ``max_width`` is the width of the widest number; the others are padded
    on the left to it.
    """

    def __init__(self, values: np.ndarray):
        self.is_float = np.issubdtype(values.dtype, np.floating)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)
        if not self.is_float:
            # ints and bools: as Python writes them ('-12', 'False').
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return

        # Zeros, nan and inf tell nothing about the magnitude of the data, so
        # only nonzero finite values choose the style (and the width: 'nan'
        # and 'inf' may therefore stick out of the column).
        nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero.size == 0:
            return  # e.g. all zeros: '0.' style, width 1

        # Compare magnitudes in float64: the ratio overflows in float16.
        magnitudes = np.abs(nonzero).astype(np.float64)
        smallest, largest = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = (
                largest / smallest > 1000.0  # spans > 3 orders of magnitude
                or largest > 1.0e8  # too many digits before the point
                or smallest < 1.0e-4  # would round to 0.0000
            )
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        for value in nonzero.tolist():
            if self.sci_mode:
                text = f"{value:.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}."  # the '.' marks a float tensor
            else:
                text = f"{value:.{PRINT_OPTS.precision}f}"
            self.max_width = max(self.max_width, len(text))

    def format(self, value) -> str:
        """One number (a Python scalar), right-aligned to ``max_width``."""
        if not self.is_float:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."  # 'nan' and 'inf' get no dot
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return text.rjust(self.max_width)


# ---------------------------------------------------------------------------
# Step 3: brackets, rows and line wrapping
# ---------------------------------------------------------------------------


def _format_row(row: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    """A 1-d row, wrapped so lines fit in ``linewidth``.

    ``indent`` is the column of the opening '['; continuation lines start
    one column further, under the first number.
    """
    edge = PRINT_OPTS.edgeitems
    if summarize and edge == 0:
        items = ["..."]
    elif summarize and len(row) > 2 * edge:
        # ' ...' is one more item, as wide as it needs to look like a gap.
        items = (
            [formatter.format(v) for v in row[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in row[-edge:].tolist()]
        )
    else:
        items = [formatter.format(v) for v in row.tolist()]

    # Every number takes max_width characters plus ', '; PyTorch counts this
    # from the indent (without the '[') and always fits at least one item.
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (formatter.max_width + 2))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_nested(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    """Any number of dimensions, by recursion down to rows (or a scalar)."""
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _format_row(array, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems

    def block(i: int) -> str:
        return _format_nested(array[i], indent + 1, summarize, formatter)

    n = array.shape[0]
    if summarize and n > 2 * edge:
        blocks = [block(i) for i in range(edge)] + ["..."] + [block(i) for i in range(n - edge, n)]
    else:
        blocks = [block(i) for i in range(n)]
    # Sub-blocks are separated by one newline per dimension below them:
    # rows of a matrix by '\n', matrices of a 3-d tensor by a blank line, ...
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


# ---------------------------------------------------------------------------
# Step 4: suffixes and the whole 'tensor(...)'
# ---------------------------------------------------------------------------


def _add_suffixes(text: str, suffixes: Iterable[str], indent: int) -> str:
    """Append ', suffix' items and the closing ')'. A suffix goes on a new,
    indented line when it would make the current line longer than linewidth."""
    parts = [text]
    # PyTorch's own measure of the last line, which counts 2 more than its
    # true length when there is no newline; kept so the wrapping matches.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def format_tensor(array: "np.ndarray", suffixes: "list[str]" = (), default_float=_DEFAULT_FLOAT) -> str:
    """'tensor(...)' text for a NumPy array, with suffixes like 'requires_grad=True',
    'grad_fn=<MulBackward0>', 'dtype=torch.float64' placed as PyTorch places them
    (line wrapping at linewidth 80).

    The suffixes that depend only on the array - 'size=(...)' and
    'dtype=torch....' - are worked out here, in PyTorch's order and with its
    special rules for empty tensors; if the caller passes them too they are
    not repeated. Other suffixes follow in the order given.
    """
    array = np.asarray(array)
    prefix = "tensor("
    indent = len(prefix)

    own = []  # the suffixes this function derives from the array
    if array.size == 0:
        # Nothing to infer the shape or the dtype from, so show them: the
        # shape unless it is (0,), the dtype unless it is the default float32.
        if array.ndim != 1:
            own.append("size=" + str(tuple(array.shape)))
        if array.dtype != np.dtype(default_float):
            own.append("dtype=" + _torch_dtype_name(array.dtype))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            own.append("size=" + str(tuple(array.shape)))  # '[...]' hides it
        dtype_text = dtype_suffix(array.dtype, default_float)
        if dtype_text is not None:
            own.append(dtype_text)
        summarize = array.size > PRINT_OPTS.threshold
        formatter = _Formatter(_shown_values(array) if summarize else array)
        body = _format_nested(array, indent, summarize, formatter)

    others = [s for s in suffixes if not s.startswith(("size=", "dtype="))]
    return _add_suffixes(prefix + body, own + others, indent)
