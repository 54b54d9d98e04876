"""The student's answers as plain values: what may cross from the student's process to the grader.

A trusted test asks the student's process for a value (``student("f(2.0)")``); the answer comes
back as JSON built by ``encode`` in the student's process and is rebuilt by ``decode`` on the
grader's side. ``decode`` trusts nothing: it accepts only the tags below, checks every size, and
never unpickles or imports anything. What it returns is made of Python's and NumPy's own plain
types, so a test that compares it runs no student code.

    None, bool, int, float, str          as themselves
    list                                  a list
    tuple / dict                          {"tuple": [...]} / {"dict": [[key, value], ...]}
    NumPy array, tensor (.detach().numpy())  {"ndarray": {"dtype", "shape", "data": base64}}
    NumPy scalar                          {"scalar": {"dtype", "data": base64}}
    exception                             {"exception": {"type", "message"}}  -> StudentException
    anything else                         {"object": {"type", "repr"}}        -> Opaque
"""

from __future__ import annotations

import base64
import math

import numpy as np

#: The dtypes an array may have (no object arrays: their elements would be student objects).
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"}
MAX_DEPTH = 32
MAX_ITEMS = 2_000_000
MAX_TEXT = 1_000_000
MAX_REPR = 300


class ValueRejected(ValueError):
    """The student's process sent something that is not a well-formed plain value."""


class StudentException:
    """An exception object the student's code returned (its type name and message, as text)."""

    def __init__(self, type_name: str, message: str):
        self.type_name, self.message = type_name, message

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"{self.type_name}({self.message!r})"

    def __eq__(self, other):
        return isinstance(other, StudentException) and (self.type_name, self.message) == (other.type_name, other.message)

    __hash__ = None


class Opaque:
    """Any other object: only its type name and (clipped) repr are known."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return self.text

    def __eq__(self, other):
        return isinstance(other, Opaque) and (self.type_name, self.text) == (other.type_name, other.text)

    __hash__ = None


# ---- the student's side ---------------------------------------------------------------------------
def encode(value, _depth=0):
    """A JSON-ready description of ``value`` (runs in the student's process: it may call their code)."""
    if _depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic) and value.dtype.name in DTYPES:
        return {"scalar": _array(np.asarray(value))}
    if hasattr(value, "detach") and hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value.detach().numpy())
        except Exception:
            return _opaque(value)
    if isinstance(value, np.ndarray):
        if value.dtype.name not in DTYPES:
            return _opaque(value)
        return {"ndarray": _array(value)}
    if type(value) is list:
        return [encode(item, _depth + 1) for item in value]
    if type(value) is tuple:
        return {"tuple": [encode(item, _depth + 1) for item in value]}
    if type(value) is dict and all(type(k) in (str, int) for k in value):
        return {"dict": [[key, encode(item, _depth + 1)] for key, item in value.items()]}
    if isinstance(value, BaseException):
        return {"exception": {"type": type(value).__name__, "message": _clip(str(value), MAX_TEXT)}}
    if isinstance(value, (int, float)):  # int/float subclasses (bool is handled above)
        return encode(int(value) if isinstance(value, int) else float(value), _depth)
    return _opaque(value)


def _array(array: np.ndarray) -> dict:
    """An array's dtype, shape and elements in C order, in the machine's byte order.

    Exact for any array: 0-d stays 0-d (``ascontiguousarray`` would make it shape (1,)), and views,
    transposes and negative strides are read element by element in order by ``tobytes``.
    """
    native = array.astype(array.dtype.newbyteorder("="), copy=False)
    return {"dtype": native.dtype.name, "shape": list(native.shape), "data": _b64(native.tobytes(order="C"))}


def _opaque(value):
    try:
        text = repr(value)
    except Exception:
        text = "<unprintable>"
    return {"object": {"type": type(value).__name__, "repr": _clip(str(text), MAX_REPR)}}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# ---- the grader's side ----------------------------------------------------------------------------
def decode(data):
    """Rebuild a value from ``encode``'s description; raise ``ValueRejected`` on anything else."""
    budget = [MAX_ITEMS]
    return _decode(data, 0, budget)


def _decode(data, depth, budget):
    if depth > MAX_DEPTH:
        raise ValueRejected("nested too deeply")
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueRejected("too many items")
    if data is None or type(data) in (bool, int, float):
        return data
    if type(data) is str:
        if len(data) > MAX_TEXT:
            raise ValueRejected("text too long")
        return data
    if type(data) is list:
        return [_decode(item, depth + 1, budget) for item in data]
    if type(data) is not dict or len(data) != 1:
        raise ValueRejected(f"unexpected {type(data).__name__}")
    (tag, body), = data.items()
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "tuple" and type(body) is list:
        return tuple(_decode(item, depth + 1, budget) for item in body)
    if tag == "dict" and type(body) is list:
        result = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                raise ValueRejected("malformed dict entry")
            result[pair[0]] = _decode(pair[1], depth + 1, budget)
        return result
    if tag in ("ndarray", "scalar") and type(body) is dict:
        shape = body.get("shape", []) if tag == "ndarray" else []
        dtype = body.get("dtype")
        if dtype not in DTYPES or type(shape) is not list or len(shape) > 32 \
                or not all(type(n) is int and 0 <= n for n in shape) or type(body.get("data")) is not str:
            raise ValueRejected("malformed array")
        count = math.prod(shape)
        budget[0] -= count
        if budget[0] < 0:
            raise ValueRejected("array too large")
        try:
            raw = base64.b64decode(body["data"], validate=True)
        except ValueError:
            raise ValueRejected("malformed array data") from None
        if len(raw) != count * np.dtype(dtype).itemsize:
            raise ValueRejected("array data does not match its shape")
        array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return array if tag == "ndarray" else array[()]
    if tag == "exception" and type(body) is dict and type(body.get("type")) is str and type(body.get("message")) is str:
        return StudentException(_clip(body["type"], MAX_REPR), _clip(body["message"], MAX_TEXT))
    if tag == "object" and type(body) is dict and type(body.get("type")) is str and type(body.get("repr")) is str:
        return Opaque(_clip(body["type"], MAX_REPR), _clip(body["repr"], MAX_REPR))
    raise ValueRejected(f"unknown tag {str(tag)[:40]!r}")


def plain(value):
    """What a trusted test receives for ``value``: the same in a notebook's kernel and in the grader."""
    return decode(encode(value))
