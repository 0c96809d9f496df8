"""The plain-data wire between the trusted grader and a student's kernel.

Only plain data crosses it, in both directions: ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``,
NumPy arrays and NumPy scalars (numeric and bool dtypes), torch tensors (sent as their bytes, dtype,
shape and ``requires_grad``), ``Ref`` (a name for an object that stays in the kernel), and lists,
tuples and dicts of those. Anything else (a class of the
student's, a subclass of ``float`` or of ``np.ndarray``, an object array, a generator) is refused
with ``NotPlainData``: it is never handed to the grader's code, so an object cannot lie to a
comparison (``__eq__``, ``__float__``, ``__array__``) on the trusted side.

The grader imports this module; the same source text is executed inside the kernel (see
``course/grading/boundary.py``), so both ends encode and decode the same way. It uses only the
standard library and NumPy (torch only when it is already imported). Text form: base64 of JSON,
checked for size before it is decoded.
"""

from __future__ import annotations

import base64
import json
import sys

import numpy as np

MAX_TEXT = 64 * 1024 * 1024  # characters of one message (an array: about 36 MiB of data)
MAX_DEPTH = 24  # nesting of lists, tuples and dicts
MAX_ITEMS = 2_000_000  # scalars, containers and array elements in one message
MAX_NDIM = 16
MAX_DICT = 1_000  # entries of one dict (keys that hash alike make a dict quadratic to build)
MAX_DICT_ENTRIES = 20_000  # dict entries in one message (so at most ~0.5 s of such building)
# dtype names that may cross (little-endian on the wire); torch adds bfloat16
NUMPY_KINDS = "biufcUS"  # bool, signed, unsigned, float, complex, str, bytes (never object)
TORCH_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16",
                "float32", "float64", "complex64", "complex128")  # fmt: skip


class NotPlainData(Exception):
    """A value that may not cross the wire (what it is, and why), or a malformed message."""


class Ref:
    """A name for something that stays in the kernel: ``Ref("h", 3)`` the kernel's live object
    number 3 (a stand-in model, a trainer: see course/grading/boundary.py), ``Ref("f", "train_step")``
    the notebook's function of that name. It carries no data; only the kernel resolves it."""

    __slots__ = ("kind", "key")

    def __init__(self, kind: str, key):
        if not ((kind == "h" and type(key) is int and key >= 0) or
                (kind == "f" and type(key) is str and key.isidentifier())):  # fmt: skip
            raise NotPlainData(f"bad reference {kind!r} {key!r}")
        self.kind, self.key = kind, key

    def __repr__(self) -> str:
        return f"Ref({self.kind!r}, {self.key!r})"


def is_tensor(obj) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and type(obj) in (torch.Tensor, torch.nn.Parameter)


def grad_leaves(obj, depth: int = 0) -> list:
    """The tensors of a plain-data tree that require grad, in the order ``encode`` visits them
    (both ends list them alike, so the n-th on one side is the n-th on the other)."""
    torch = sys.modules.get("torch")
    if torch is None or depth > MAX_DEPTH:
        return []
    t = type(obj)
    if t in (torch.Tensor, torch.nn.Parameter):
        return [obj] if obj.requires_grad else []
    if t in (list, tuple):
        return [x for item in obj for x in grad_leaves(item, depth + 1)]
    if t is dict:  # values only: a tensor is never a key here
        return [x for v in obj.values() for x in grad_leaves(v, depth + 1)]
    return []


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _np_dtype(spec) -> np.dtype:
    """The dtype of a wire spec such as '<f8', '|b1', '<U5': numeric, bool, str or bytes; little-endian."""
    try:
        dt = np.dtype(spec) if type(spec) is str and len(spec) <= 8 else None
    except (TypeError, ValueError, SyntaxError):  # numpy parses some specs with ast
        dt = None
    if (dt is None or dt.kind not in NUMPY_KINDS or spec[:1] not in ("<", "|") or dt.names
            or dt.shape or (dt.kind in "US" and dt.itemsize > 4096) or dt.str != spec):  # fmt: skip
        raise NotPlainData(f"dtype {spec!r} is not plain data")
    return dt


def _spec(dt: np.dtype) -> str:
    if dt.kind not in NUMPY_KINDS or dt.names or dt.shape:
        raise NotPlainData(f"an array of dtype {dt} is not plain data")
    return (dt.newbyteorder("<") if dt.byteorder == ">" else dt).str


def _native(arr: np.ndarray) -> np.ndarray:
    return arr.astype(arr.dtype.newbyteorder("="))  # native byte order, writable, owns its data


def encode(obj, depth: int = 0):
    """A JSON-able tree for ``obj``; ``NotPlainData`` for anything outside the list above."""
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    t = type(obj)
    if obj is None or t is bool or t is str:
        return obj
    if t is bytes:
        return {"t": "bytes", "b": _b64(obj)}
    if t is Ref:
        return {"t": "ref", "k": obj.kind, "v": obj.key}
    if t is int:
        return {"t": "int", "v": str(obj)}  # any size, exactly
    if t is float:
        return {"t": "float", "v": obj.hex()}  # exact, NaN and inf included
    if t is list:
        if len(obj) >= FLOATS_MIN and all(type(x) is float for x in obj):
            # a list of floats (a run's log) as its float64 bytes: exact, as .hex() is, and one
            # C call instead of one string per number
            return {"t": "floats", "b": _b64(np.array(obj, dtype="<f8").tobytes())}
        return [encode(x, depth + 1) for x in obj]
    if t is tuple:
        return {"t": "tuple", "v": [encode(x, depth + 1) for x in obj]}
    if t is dict:
        return {"t": "dict", "v": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in obj.items()]}  # fmt: skip
    if t is np.ndarray:
        spec = _spec(obj.dtype)
        data = np.ascontiguousarray(obj, dtype=np.dtype(spec))
        node = {"t": "ndarray", "d": spec, "s": list(obj.shape), "b": _b64(data.tobytes())}
        if not obj.flags.writeable:
            node["w"] = False  # a read-only input stays read-only on the other side
        return node
    if isinstance(obj, np.generic) and t is np.dtype(t).type:
        arr = np.asarray(obj)
        spec = _spec(arr.dtype)
        return {"t": "npscalar", "d": spec, "b": _b64(arr.astype(np.dtype(spec)).tobytes())}
    if is_tensor(obj):
        torch = sys.modules["torch"]
        name = str(obj.dtype).removeprefix("torch.")
        if name not in TORCH_DTYPES or obj.is_sparse or obj.is_quantized:
            raise NotPlainData(f"a tensor of dtype {name} (layout {obj.layout}) is not plain data")
        x = obj.detach().to("cpu").contiguous()
        if name == "bfloat16":
            x = x.view(torch.int16)
        raw = x.numpy().astype(x.numpy().dtype.newbyteorder("<"), copy=False).tobytes()
        return {"t": "tensor", "d": name, "s": list(obj.shape), "g": bool(obj.requires_grad), "b": _b64(raw)}  # fmt: skip
    raise NotPlainData(f"a {t.__module__}.{t.__qualname__} is not plain data")


# a list of at least this many floats (and nothing else) crosses as one "floats" node
FLOATS_MIN = 2
MAX_KEY_TUPLE = 8  # a dict key may be a short tuple of scalars: hashing a long one is slow


def _plain_key(k) -> bool:
    """A dict key whose hash and comparison are cheap (colliding long tuples are not)."""
    scalar = (str, int, float, bool, type(None))
    if type(k) is tuple:
        return len(k) <= MAX_KEY_TUPLE and all(type(x) in scalar for x in k)
    return type(k) in scalar and (type(k) is not str or len(k) <= 1000)


class _Budget:
    def __init__(self, refs: bool = True):
        self.refs = refs  # a request may name kernel objects; an answer may not
        self.left = MAX_ITEMS
        self.dict_left = MAX_DICT_ENTRIES

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise NotPlainData(f"more than {MAX_ITEMS} items in one message")


def _shape(s) -> tuple[int, ...]:
    if type(s) is not list or len(s) > MAX_NDIM or not all(type(n) is int and n >= 0 for n in s):
        raise NotPlainData(f"bad shape {s!r}")
    return tuple(s)


def _array(node: dict, dt: np.dtype, shape: tuple[int, ...], budget: _Budget) -> np.ndarray:
    if dt.itemsize == 0:  # '<U0': empty strings carry no bytes
        _raw(node, 0, shape, budget)
        return np.zeros(shape, dt)
    return np.frombuffer(_raw(node, dt.itemsize, shape, budget), dtype=dt).reshape(shape)


def _raw(node: dict, itemsize: int, shape: tuple[int, ...], budget: _Budget) -> bytes:
    count = 1
    for n in shape:
        count *= n
    budget.take(count)
    b = node.get("b")
    if type(b) is not str or len(b) != 4 * ((count * itemsize + 2) // 3):
        raise NotPlainData("array bytes do not match the shape and dtype")
    return base64.b64decode(b, validate=True)


def decode(node, refs: bool = True):
    """The value of a tree made by ``encode``, built from scratch: only genuine builtin, NumPy and
    torch types come out (and ``Ref``s, unless ``refs`` is False: the trusted side reading an
    answer); a malformed tree raises ``NotPlainData`` (and nothing else)."""
    try:
        return _decode(node, 0, _Budget(refs))
    except NotPlainData:
        raise
    except (ValueError, TypeError, OverflowError, RecursionError, KeyError, IndexError,
            SyntaxError) as err:  # fmt: skip
        raise NotPlainData(f"malformed data on the wire ({type(err).__name__})") from None


def _decode(node, depth: int, budget: _Budget):
    budget.take(1)
    if depth > MAX_DEPTH + 1:
        raise NotPlainData("nested too deep")
    if node is None or type(node) in (bool, str):
        return node
    if type(node) is list:
        return [_decode(x, depth + 1, budget) for x in node]
    if type(node) is not dict or type(node.get("t")) is not str:
        raise NotPlainData(f"unexpected {type(node).__name__} on the wire")
    tag = node["t"]
    if tag == "int" and type(node.get("v")) is str and len(node["v"]) <= 4300:
        return int(node["v"])
    if tag == "float" and type(node.get("v")) is str and len(node["v"]) <= 40:
        try:
            return float.fromhex(node["v"])
        except ValueError:
            raise NotPlainData("bad float") from None
    if tag in ("tuple", "dict") and type(node.get("v")) is list:
        if tag == "dict":
            budget.dict_left -= len(node["v"])
            if len(node["v"]) > MAX_DICT or budget.dict_left < 0:
                raise NotPlainData(f"a dict over {MAX_DICT} entries, or over {MAX_DICT_ENTRIES} "
                                   "dict entries in one message")  # fmt: skip
        items = [_decode(x, depth + 1, budget) for x in node["v"]]
        if tag == "tuple":
            return tuple(items)
        if not all(type(kv) is list and len(kv) == 2 and _plain_key(kv[0]) for kv in items):
            raise NotPlainData("bad dict on the wire (keys: str, int, float, bool, None, or a "
                               f"tuple of up to {MAX_KEY_TUPLE} of those)")  # fmt: skip
        try:
            return {k: v for k, v in items}
        except TypeError:
            raise NotPlainData("unhashable dict key") from None
    if tag == "floats" and type(node.get("b")) is str and len(node["b"]) <= MAX_TEXT:
        try:
            raw = base64.b64decode(node["b"], validate=True)
        except ValueError:
            raise NotPlainData("bad floats") from None
        if len(raw) % 8:
            raise NotPlainData("float bytes that are not whole float64s")
        budget.take(len(raw) // 8)
        return np.frombuffer(raw, dtype="<f8").tolist()  # Python floats, bit for bit
    if tag == "ndarray":
        arr = _native(_array(node, _np_dtype(node.get("d")), _shape(node.get("s")), budget))
        if node.get("w") is False:
            arr.flags.writeable = False
        return arr
    if tag == "npscalar":
        return _native(_array(node, _np_dtype(node.get("d")), (), budget))[()]
    if tag == "bytes" and type(node.get("b")) is str and len(node["b"]) <= MAX_TEXT:
        budget.take(len(node["b"]) // 4)
        try:
            return base64.b64decode(node["b"], validate=True)
        except ValueError:
            raise NotPlainData("bad bytes") from None
    if tag == "tensor":
        return _decode_tensor(node, budget)
    if tag == "ref":
        if not budget.refs:
            raise NotPlainData("a reference to a kernel object is not an answer")
        return Ref(node.get("k"), node.get("v"))
    raise NotPlainData(f"unknown tag {tag!r} on the wire")


def _decode_tensor(node: dict, budget: _Budget):
    import torch

    name, shape = node.get("d"), _shape(node.get("s"))
    if name not in TORCH_DTYPES or type(node.get("g")) is not bool:
        raise NotPlainData(f"bad tensor dtype {name!r}")
    np_name = "int16" if name == "bfloat16" else name
    arr = _array(node, np.dtype(np_name).newbyteorder("<"), shape, budget)
    t = torch.from_numpy(_native(arr))
    if name == "bfloat16":
        t = t.view(torch.bfloat16)
    if node["g"] and (t.is_floating_point() or t.is_complex()):
        t.requires_grad_(True)
    return t


def envelope(items: list) -> str:
    """A list of JSON-able items (trees made by ``encode`` among them) as one line of base64."""
    return _b64(json.dumps(items, separators=(",", ":")).encode())


def open_envelope(text) -> object:
    """The JSON of an ``envelope`` text, after checking its type, size and alphabet."""
    if type(text) is not str or len(text) > MAX_TEXT:
        raise NotPlainData("the message is not text of an acceptable size")
    try:
        return json.loads(base64.b64decode(text, validate=True))
    except (ValueError, RecursionError):
        raise NotPlainData("the message is not valid wire text") from None


def dumps(obj) -> str:
    """``obj`` as one line of base64 text (``NotPlainData`` if it cannot cross)."""
    return _b64(json.dumps(encode(obj), separators=(",", ":")).encode())


def loads(text) -> object:
    """The value of a ``dumps`` text, after checking its type, size and alphabet."""
    return decode(open_envelope(text))
