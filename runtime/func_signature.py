"""Functional signatures in OneFlow's ``functional_api.yaml`` style, and their argument binders.

A signature reads ``RETURN (PARAM, ...) => FUNCTOR``; a parameter is ``TYPE NAME[=DEFAULT]``,
a lone ``*`` makes the parameters after it keyword-only, and ``TYPE?`` also accepts ``None``.

>>> sig = parse_signature("Tensor (Tensor x, Float alpha=0.0) => LeakyRelu")
>>> sig.functor, [p.name for p in sig.params], sig.params[1].default
('LeakyRelu', ['x', 'alpha'], 0.0)
>>> str(sig)
'Tensor (Tensor x, Float alpha=0.0)'

:func:`make_binder` turns a signature into a closure, built once at import, that maps a call's
``(args, kwargs)`` to the tuple of parameter values (converted: ``Float`` gets a ``float``,
``Int32List`` a tuple, ``DataType`` its MLIR spelling), or ``None`` when the call does not fit;
:func:`explain_mismatch` says why, for the error message.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPES, dtype_from_numpy

from tdflow.core.errors import TdflowError

__all__ = ["BAD", "NO_DEFAULT", "Param", "Signature", "SignatureError", "TYPES",
           "explain_mismatch", "make_binder", "mismatch_detail", "parse_signature", "type_name"]


class SignatureError(TdflowError, ValueError):
    """A signature string that does not parse; says what was expected and where."""


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NO_DEFAULT = _Marker("NO_DEFAULT")
BAD = _Marker("BAD")  # what a converter returns for a value of the wrong type

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def type_name(value: Any) -> str:
    """How errors name the type of a Python value (``int``, ``Tensor``, ``tuple``, ``None``)."""
    return "None" if value is None else type(value).__name__


# ------------------------------------------------------------------ value converters
def _int(lo: int, hi: int) -> Callable[[Any], Any]:
    def conv(v):
        if type(v) is int or (isinstance(v, (numbers.Integral, np.integer))
                              and not isinstance(v, (bool, np.bool_))):
            v = int(v)
            return v if lo <= v <= hi else BAD
        return BAD
    return conv


def _float(v):
    t = type(v)
    if t is float:
        return v
    if t is bool or isinstance(v, np.bool_):
        return BAD
    if isinstance(v, (numbers.Real, np.floating, np.integer)):
        return float(v)
    return BAD


# |v| from here on rounds to inf in f32 (half an ulp above the largest f32, which ties to even).
F32_OVERFLOW = 2.0**128 - 2.0**103


_INF = float("inf")


def _float32(v):
    """``Float`` (an ``f32`` attribute): as ``_float``, but a finite value must fit in f32
    (rather than silently becoming inf); inf and nan themselves pass."""
    f = _float(v)
    if f is not BAD and F32_OVERFLOW <= abs(f) < _INF:
        return BAD
    return f


def _bool(v):
    if type(v) is bool:
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    return BAD


def _str(v):
    return v if isinstance(v, str) else BAD


def _scalar(v):
    """OneFlow's ``Scalar``: a Python or numpy bool/int/float (kept as is)."""
    t = type(v)
    if t is float or t is bool or t is int and INT64[0] <= v <= INT64[1]:
        return v
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        v = int(v)
    elif isinstance(v, numbers.Integral):
        v = int(v)
    elif isinstance(v, (np.floating, numbers.Real)):
        return float(v)
    else:
        return BAD
    # an int scalar becomes an si64 attribute (int_operand)
    return v if INT64[0] <= v <= INT64[1] else BAD


_DTYPE_ALIASES = {"float16": "f16", "half": "f16", "bfloat16": "bf16", "float32": "f32",
                  "float": "f32", "float64": "f64", "double": "f64", "bool": "i1",
                  "int8": "i8", "int32": "i32", "int": "i32", "int64": "i64", "long": "i64",
                  "int16": "i16", "short": "i16", "uint8": "ui8", "uint16": "ui16",
                  "uint32": "ui32", "uint64": "ui64"}


def _dtype(v):
    """``DataType``: ``"f32"``, ``"float32"``, ``np.float32``, ``np.dtype("float32")``."""
    if isinstance(v, str):
        if v in DTYPES:
            return v
        return _DTYPE_ALIASES.get(v, BAD)
    if v is bool:
        return "i1"
    try:
        return dtype_from_numpy(v)
    except (TypeError, ValueError):
        return BAD


def _list(elem: Callable[[Any], Any], single_ok: bool) -> Callable[[Any], Any]:
    def conv(v):
        if isinstance(v, (list, tuple)):
            out = tuple(elem(e) for e in v)
            return BAD if any(e is BAD for e in out) else out
        if single_ok:  # OneFlow accepts `dim=1` for an Int32List
            e = elem(v)
            return BAD if e is BAD else (e,)
        return BAD
    return conv


_SHAPE_ELEM = _int(*INT64)  # -1 (reshape: infer this dim) is for the hooks to judge

#: Non-tensor parameter types: name -> converter. Tensor types are handled by the binder.
TYPES: dict[str, Callable[[Any], Any]] = {
    "Scalar": _scalar,
    "Bool": _bool,
    "Int32": _int(*INT32),
    "Int64": _int(*INT64),
    "Int": _int(*INT64),
    "Float": _float32,
    "Double": _float,
    "String": _str,
    "DataType": _dtype,
    "Shape": _list(_SHAPE_ELEM, single_ok=False),
    "BoolList": _list(_bool, True),
    "Int32List": _list(_int(*INT32), True),
    "Int64List": _list(_int(*INT64), True),
    "FloatList": _list(_float32, True),
    "DoubleList": _list(_float, True),
    "StringList": _list(_str, True),
    "DataTypeList": _list(_dtype, True),
    "ScalarList": _list(_scalar, True),
    "ShapeList": _list(_list(_SHAPE_ELEM, single_ok=False), False),
}
TENSOR_TYPES = ("Tensor", "TensorTuple")
RETURN_TYPES = ("Tensor", "TensorTuple", "Void")


# ------------------------------------------------------------------ parsing
@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: ``Tensor? bias=None`` is ``Param("bias", "Tensor", True, None)``."""

    name: str
    type: str
    optional: bool = False  # `TYPE?`: None accepted
    default: Any = NO_DEFAULT
    kw_only: bool = False
    default_text: str | None = None

    @property
    def is_tensor(self) -> bool:
        return self.type in TENSOR_TYPES

    def __str__(self) -> str:
        s = f"{self.type}{'?' if self.optional else ''} {self.name}"
        return s if self.default_text is None else f"{s}={self.default_text}"


@dataclass(frozen=True, slots=True)
class Signature:
    returns: str
    params: tuple[Param, ...]
    functor: str

    def __str__(self) -> str:
        parts: list[str] = []
        star = False
        for p in self.params:
            if p.kw_only and not star:
                parts.append("*")
                star = True
            parts.append(str(p))
        return f"{self.returns} ({', '.join(parts)})"


_SIG_RE = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*=>\s*(\w+)\s*$", re.S)
_PARAM_RE = re.compile(r"^(\w+)(\?)?\s+([A-Za-z_]\w*)\s*(?:=\s*(.+))?$", re.S)


def _split_params(text: str) -> list[str]:
    """Split on top-level commas (defaults may be lists like ``[1, 2]``)."""
    out, depth, cur, quote = [], 0, [], None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


#: How deep list defaults may nest (real ones are flat; a cap keeps recursion bounded).
MAX_DEFAULT_DEPTH = 32


def parse_literal(text: str, _depth: int = 0) -> Any:
    """A default value: ``None``, ``True``/``False``, ints, floats, quoted strings, ``[...]``.

    >>> parse_literal("[1, -2]"), parse_literal("1e-5"), parse_literal('"NCHW"')
    ((1, -2), 1e-05, 'NCHW')
    """
    if _depth > MAX_DEFAULT_DEPTH:
        raise SignatureError(f"default value nested too deep (more than {MAX_DEFAULT_DEPTH} "
                             f"levels of brackets)")
    t = text.strip()
    if t in ("None", "none", "null"):
        return None
    if t in ("True", "true"):
        return True
    if t in ("False", "false"):
        return False
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1]
    if t.startswith("[") and t.endswith("]") or t.startswith("(") and t.endswith(")"):
        inner = t[1:-1].strip()
        return tuple(parse_literal(e, _depth + 1) for e in _split_params(inner)) if inner else ()
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    try:
        return float(t)
    except ValueError:
        if re.fullmatch(r"[A-Za-z_]\w*", t):  # a bare word: a dtype name like kFloat / f32
            return t
        raise SignatureError(f"cannot read default value {text!r}; expected None, True, "
                             f"False, a number, a quoted string or a [list]") from None


def parse_signature(text: str) -> Signature:
    """Parse ``"Tensor (Tensor x, *, Float alpha=0.0) => LeakyRelu"``."""
    m = _SIG_RE.match(text)
    if not m:
        raise SignatureError(f"bad signature {text!r}; expected 'RETURN (TYPE NAME[=DEFAULT], "
                             f"...) => Functor'")
    returns, body, functor = m.groups()
    if returns not in RETURN_TYPES:
        raise SignatureError(f"bad return type {returns!r} in {text!r}; expected one of "
                             f"{', '.join(RETURN_TYPES)}")
    params: list[Param] = []
    kw_only = False
    seen: set[str] = set()
    for part in _split_params(body):
        if part == "*":
            if kw_only:
                raise SignatureError(f"two '*' in {text!r}")
            kw_only = True
            continue
        pm = _PARAM_RE.match(part)
        if not pm:
            raise SignatureError(f"bad parameter {part!r} in {text!r}; expected 'TYPE NAME' "
                                 f"or 'TYPE NAME=DEFAULT'")
        ptype, q, name, dflt = pm.groups()
        if ptype not in TYPES and ptype not in TENSOR_TYPES:
            raise SignatureError(f"unknown parameter type {ptype!r} in {text!r}; expected one "
                                 f"of {', '.join(TENSOR_TYPES + tuple(TYPES))}")
        if name in seen:
            raise SignatureError(f"duplicate parameter {name!r} in {text!r}")
        seen.add(name)
        default: Any = NO_DEFAULT
        if dflt is not None:
            default = parse_literal(dflt)
            if default is not None and ptype not in TENSOR_TYPES:
                conv = TYPES[ptype](default)
                if conv is BAD:
                    raise SignatureError(f"default {dflt.strip()} of {name!r} in {text!r} is "
                                         f"not a valid {ptype}")
                default = conv
            elif default is not None:
                raise SignatureError(f"a tensor parameter's default can only be None: {text!r}")
            if default is None and not q:
                q = "?"
        elif params and not kw_only and params[-1].default is not NO_DEFAULT:
            raise SignatureError(f"parameter {name!r} without a default follows one with a "
                                 f"default in {text!r}")
        params.append(Param(name, ptype, bool(q), default, kw_only,
                            None if dflt is None else dflt.strip()))
    return Signature(returns, tuple(params), functor)


# ------------------------------------------------------------------ binding
def make_binder(sig: Signature, tensor_cls: type) -> Callable[[tuple, dict], tuple | None]:
    """A closure binding ``(args, kwargs)`` to converted values in parameter order, or ``None``."""
    params = sig.params
    names = tuple(p.name for p in params)
    index = {n: i for i, n in enumerate(names)}
    npos = sum(1 for p in params if not p.kw_only)
    defaults = tuple(p.default for p in params)

    def tensor_conv(opt):
        def conv(v):
            if isinstance(v, tensor_cls) or (opt and v is None):
                return v
            return BAD
        return conv

    def tuple_conv(opt):
        def conv(v):
            if opt and v is None:
                return v
            if isinstance(v, (list, tuple)) and all(isinstance(e, tensor_cls) for e in v):
                return tuple(v)
            return BAD
        return conv

    def plain_conv(base, opt):
        if not opt:
            return base
        return lambda v: None if v is None else base(v)

    convs = tuple(
        tensor_conv(p.optional) if p.type == "Tensor" else
        tuple_conv(p.optional) if p.type == "TensorTuple" else
        plain_conv(TYPES[p.type], p.optional) for p in params)
    all_plain_tensors = all(p.type == "Tensor" and not p.optional for p in params)
    n = len(params)

    if all_plain_tensors and npos == n:
        # the hot case (relu(x), broadcast_add(x, y), ...): positional tensors only
        def bind(args, kwargs):
            if kwargs or len(args) != n:
                return _bind_general(args, kwargs)
            for a in args:
                if not isinstance(a, tensor_cls):
                    return None
            return args
    elif npos == n:
        # every parameter given positionally (add(x, 1.0)): convert in place, nothing to fill
        pairs = tuple(enumerate(convs))

        def bind(args, kwargs):
            if kwargs or len(args) != n:
                return _bind_general(args, kwargs)
            vals = list(args)
            for i, c in pairs:
                v = c(vals[i])
                if v is BAD:
                    return None
                vals[i] = v
            return tuple(vals)
    else:
        def bind(args, kwargs):
            return _bind_general(args, kwargs)

    required = tuple(i for i, p in enumerate(params) if p.default is NO_DEFAULT)

    def _bind_general(args, kwargs):
        na = len(args)
        if na > npos:
            return None
        vals = list(args)
        vals.extend(defaults[na:])  # defaults are stored converted
        for i in range(na):
            c = convs[i](args[i])
            if c is BAD:
                return None
            vals[i] = c
        if kwargs:
            for k, v in kwargs.items():
                i = index.get(k)
                if i is None or i < na:
                    return None
                c = convs[i](v)
                if c is BAD:
                    return None
                vals[i] = c
        for i in required:
            if vals[i] is NO_DEFAULT:
                return None
        return tuple(vals)

    return bind


def explain_mismatch(fname: str, sig: Signature, args: tuple, kwargs: dict,
                     tensor_cls: type) -> str:
    """Why ``(args, kwargs)`` does not fit ``sig``, in PyTorch/OneFlow's words."""
    params = sig.params
    npos = sum(1 for p in params if not p.kw_only)
    if len(args) > npos:
        return (f"{fname}(): takes {npos} positional argument{'s' * (npos != 1)} but "
                f"{len(args)} {'was' if len(args) == 1 else 'were'} given")
    given: dict[str, Any] = {p.name: a for p, a in zip(params, args)}
    for k, v in kwargs.items():
        if k not in {p.name for p in params}:
            return f'{fname}(): got an unexpected keyword argument "{k}"'
        if k in given:
            return f'{fname}(): got multiple values for argument "{k}"'
        given[k] = v
    for p in params:
        if p.name not in given:
            if p.default is NO_DEFAULT:
                return f'{fname}(): missing required argument "{p.name}"'
            continue
        v = given[p.name]
        if v is None and p.optional:
            continue
        if p.type == "Tensor":
            ok = isinstance(v, tensor_cls)
        elif p.type == "TensorTuple":
            ok = isinstance(v, (list, tuple)) and all(isinstance(e, tensor_cls) for e in v)
        else:
            ok = TYPES[p.type](v) is not BAD
        if not ok:
            want = p.type + (" or None" if p.optional else "")
            return (f'{fname}(): argument "{p.name}" must be {want}, not {type_name(v)}'
                    f'{mismatch_detail(p.type, v)}')
    return f"{fname}(): arguments do not match {sig}"


_RANGES = {"Int32": INT32, "Int64": INT64, "Int": INT64, "Scalar": INT64}
_ELEMENT = {"Int32List": "Int32", "Int64List": "Int64", "Shape": "Int64", "FloatList": "Float",
            "DoubleList": "Double", "BoolList": "Bool", "StringList": "String",
            "DataTypeList": "DataType", "ScalarList": "Scalar", "ShapeList": "Shape"}


def mismatch_detail(ptype: str, v: Any) -> str:
    """What is wrong with ``v`` beyond its Python type, as `` (...)``; empty if nothing more.

    >>> mismatch_detail("Int32", 2**40)
    ' (out of Int32 range)'
    >>> mismatch_detail("Shape", [2, 1.5])
    ' (element 1 is float 1.5: not an integer)'
    """
    why = _why(ptype, v)
    return f" ({why})" if why else ""


def _why(ptype: str, v: Any) -> str:
    elem = _ELEMENT.get(ptype)
    if elem is not None and isinstance(v, (list, tuple)):
        for i, e in enumerate(v):
            if TYPES[elem](e) is BAD:
                # only a number with a wrong value needs saying; a wrong type shows in the list
                why = _why(elem, e)
                return why and f"element {i} is {type_name(e)} {e!r:.60}: {why}"
        return ""
    if elem is not None and ptype not in ("Shape", "ShapeList"):
        return _why(elem, v)  # a bare value where a list is accepted (`dim=1`)
    rng = _RANGES.get(ptype)
    integral = isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))
    if rng is not None and integral:
        return f"out of {ptype} range"
    if ptype == "Float" and isinstance(v, (numbers.Real, np.number)) and not isinstance(v, bool):
        return f"{v!r} overflows f32, whose largest finite value is 3.4028235e+38"
    if rng is not None and isinstance(v, (float, np.floating)):
        return "not an integer" if ptype != "Scalar" else ""
    return ""
