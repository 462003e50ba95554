"""Render an elementwise expression to a CUDA C expression string.

>>> from tdflow.dialect.formula.expr import Input, sigmoid, maximum
>>> render_cuda(sigmoid(Input(0)), ["f32"])
'(1.0f / (1.0f + __expf((-x0))))'
>>> render_cuda(maximum(Input(0), 0), ["f64"], names=["in0[i]"])
'([](const double a, const double b) -> double { return (a > b || a != a) ? a : b; }(in0[i], 0.0))'
>>> render_cuda(Input(0) * 2, ["f16"], "f16")
'__float2half((__half2float(x0) * 2.0f))'

The string is an expression over the names given for the inputs (``x0, x1, ...`` by default);
the CUDA code generator wraps it in a kernel (``out[i] = <expr>;``). Half types load with
``__half2float``/``__bfloat162float``, compute in ``float`` and store with ``__float2half``/
``__float2bfloat16``; ``f64`` uses the double-precision functions; integers use C arithmetic
(division truncates; ``max``/``min`` are conditionals). ``fast_math`` selects ``__expf`` for
``f32`` exp. Float ``max``/``min`` follow numpy's ``maximum``/``minimum`` exactly: NaN wins,
and of two equal operands (``+0``, ``-0``) the second is the result.
A ``cudasim`` shim header only needs the names used here (listed in ``CUDA_FUNCTIONS``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.formula.expr import Binary, Cast, Const, Expr, Input, Select, Unary, bind
from tdflow.dialect.formula.types import (
    compute_dtype,
    default_out_dtype,
    infer_dtypes,
    operand_dtype,
)

C_TYPES = {"f16": "__half", "bf16": "__nv_bfloat16", "f32": "float", "f64": "double",
           "i1": "bool", **{n: t.c_type for n, t in INT_TYPES.items()}}

# C's math library by name: ``f64`` calls it as is, ``f32`` with the ``f`` suffix (``rint`` is
# round half to even, numpy's ``rint`` and ONNX's ``Round``).
_LIBM = {"exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "tanh": "tanh",
         "erf": "erf", "floor": "floor", "ceil": "ceil", "abs": "fabs", "round": "rint",
         "max": "fmax", "min": "fmin", "pow": "pow", "mod": "fmod",
         **{op: op for op in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                              "asinh", "acosh", "atanh")}}
_F32 = {op: f"{fn}f" for op, fn in _LIBM.items()}
_F64 = dict(_LIBM)
# `xor` of two truth values (its operands are converted to bool first) is `!=`.
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">",
          "ge": ">=", "eq": "==", "ne": "!=", "and": "&&", "or": "||", "xor": "!=",
          "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}
# Integer ops whose constant divisor is baked even when constants are kernel arguments.
_BAKED_INT_DIVISOR = frozenset({"div", "mod", "floor_mod"})
# Integer arithmetic that wraps in numpy: rendered in unsigned C types (see render_cuda).
_WRAPPING = frozenset({"add", "sub", "mul"})
# Every function name a rendered expression may call (for shim headers and tests).
CUDA_FUNCTIONS = frozenset(_F32.values()) | frozenset(_F64.values()) | {
    "__expf", "abs", "llabs", "__half2float", "__float2half", "__bfloat162float",
    "__float2bfloat16", "isnan", "isinf", "copysign", "copysignf"}


def _literal(value: object, dtype: str) -> str:
    """A C literal of ``value`` in compute type ``dtype``."""
    if dtype == "i1":
        return "true" if value else "false"
    it = INT_TYPES.get(dtype)
    if it is not None:
        v = int(value)  # type: ignore[call-overload]
        if not it.signed:  # the value the constant has in the type (-1 is 255 in ui8)
            v = it.wrap(v)
            return f"{v}ULL" if it.bits == 64 else f"{v}U"
        text = f"{v}LL" if dtype == "i64" else str(v)
        return f"({text})" if v < 0 else text
    v = float(value)  # type: ignore[arg-type]
    suffix = "f" if dtype == "f32" else ""
    if math.isnan(v):
        return "NAN" if suffix else "((double)NAN)"
    if math.isinf(v):
        text = "INFINITY" if suffix else "((double)INFINITY)"
        return text if v > 0 else f"(-{text})"
    text = repr(v)
    if "e" not in text and "." not in text:
        text += ".0"
    text += suffix
    return f"({text})" if v < 0 or text.startswith("-") else text


# Compute types a constant may be passed in as a kernel argument (``params``): the types with
# a C scalar that ctypes and pycuda pass by value. A bool constant selects a branch: baked.
PARAM_DTYPES = frozenset({"f32", "f64", *(n for n in INT_TYPES if n != "i1")})


def param_value(value: object, dtype: str) -> int | float | None:
    """The value the literal ``_literal(value, dtype)`` has in C, as a host scalar to pass by
    value; ``None`` when it must stay baked (a signed integer outside its type, which C's
    literal keeps unwrapped, or a type without a by-value kernel argument).

    >>> param_value(0.1, "f32") == float(np.float32(0.1)), param_value(-1, "ui8")
    (True, 255)
    """
    if dtype not in PARAM_DTYPES or isinstance(value, bool):
        return None
    it = INT_TYPES.get(dtype)
    if it is not None:
        v = int(value)  # type: ignore[call-overload]
        if not it.signed:
            return it.wrap(v)
        lo, hi = it.range
        return v if lo <= v <= hi else None
    v = float(value)  # type: ignore[arg-type]
    if dtype == "f32":
        with np.errstate(over="ignore"):  # 1e300 in an f32 kernel is inf, as the literal is
            return float(np.float32(v))
    return v


def render_cuda(expr: Expr, in_dtypes: Sequence[str], out_dtype: str | None = None,
                names: Sequence[str] | None = None, fast_math: bool = True,
                attrs: dict[str, object] | None = None,
                params: list[tuple[str, int | float]] | None = None) -> str:
    """C expression computing ``expr`` over inputs named ``names`` (default ``x0, x1, ...``).

    ``out_dtype`` (default: input 0's type for arithmetic, ``i1`` for predicates) decides the
    final conversion; ``attrs`` binds remaining attributes.

    With a ``params`` list, each numeric constant (an attribute's value once bound, or a
    literal of the formula) renders as a kernel argument ``s<k>`` instead of a literal, and
    ``(dtype, value)`` is appended for it (the dtype is its compute type, the value converted
    as C converts the literal): the text then depends only on the expression's shape, so a
    kernel compiled once serves every value (``t * 0.25``, ``t * 0.125``). An integer divisor
    (``div``, ``mod``, ``floor_mod`` of integers) stays a literal: measurably cheaper code.

    >>> ps = []
    >>> render_cuda(Input(0) * 0.25, ["f32"], params=ps), ps
    ('(x0 * s0)', [('f32', 0.25)])
    """
    in_dtypes = tuple(in_dtypes)
    expr = bind(expr, attrs or {})
    names = list(names) if names is not None else [f"x{i}" for i in range(len(in_dtypes))]
    if out_dtype is None:
        out_dtype = default_out_dtype(expr, in_dtypes)
    context = compute_dtype(out_dtype)
    types = infer_dtypes(expr, in_dtypes, context)

    def conv(text: str, src: str, dst: str) -> str:
        """Convert a value computed in ``src`` to compute type ``dst``."""
        if src == dst:
            return text
        return f"(({C_TYPES[dst]})({text}))"

    def go(n: Expr, want: str | None = None) -> str:
        """Render ``n``; a constant renders in ``want`` (its consumer's operand type)."""
        if isinstance(n, Const):
            dt = want or context
            value = None if params is None else param_value(n.value, dt)
            if value is None:
                return _literal(n.value, dt)
            params.append((dt, value))
            return f"s{len(params) - 1}"
        if isinstance(n, Input):
            dt = in_dtypes[n.index]
            name = names[n.index]
            if dt == "f16":
                return f"__half2float({name})"
            if dt == "bf16":
                return f"__bfloat162float({name})"
            return name
        t = types[n]
        if isinstance(n, Unary):
            src = types.get(n.x, operand_dtype(n, types, context))
            if n.op == "not":
                return f"(!{go(n.x, src)})"
            if n.op == "neg":
                return f"(-{go(n.x, src)})"
            if n.op in ("isnan", "isinf"):
                return f"{n.op}({go(n.x, compute_dtype(src))})"
            if n.op == "bitwise_not":  # on bool it is logical: ~true is -2, still true in C
                return f"(!{go(n.x, src)})" if t == "i1" else f"(({C_TYPES[t]})(~{go(n.x, t)}))"
            if n.op == "sign":
                # a lambda reads x once
                ct = C_TYPES[t]
                x = conv(go(n.x, t), compute_dtype(src), t)
                # numpy's sign: +0 for either zero, NaN for NaN
                return (f"([](const {ct} a) -> {ct} {{ return a > 0 ? ({ct})1 : a < 0 ? "
                        f"({ct})-1 : a == 0 ? ({ct})0 : a; }}({x}))")
            x = conv(go(n.x, t), compute_dtype(src), t)
            if t in ("f32", "f64"):
                fn = _F32[n.op] if t == "f32" else _F64[n.op]
                if n.op == "exp" and t == "f32" and fast_math:
                    fn = "__expf"
                return f"{fn}({x})"
            if n.op == "abs":
                if t in INT_TYPES and not INT_TYPES[t].signed:
                    return x  # |x| of an unsigned value is itself
                return f"{'llabs' if t == 'i64' else 'abs'}({x})"
            raise ValueError(f"{n.op} is not defined for {t}")
        if isinstance(n, Binary):
            opnd = operand_dtype(n, types, context)
            a = conv(go(n.a, opnd), _value_type(n.a, types, opnd), opnd)
            if n.op in _BAKED_INT_DIVISOR and opnd in INT_TYPES and isinstance(n.b, Const):
                # an integer divisor stays a literal: nvcc divides by a known constant with a
                # multiply and shifts and folds the zero and -1 checks (an i32 scalar_div:
                # 97 PTX instructions baked, 137 as an argument, before ptxas expands div)
                b = _literal(n.b.value, opnd)
            else:
                b = conv(go(n.b, opnd), _value_type(n.b, types, opnd), opnd)
            if n.op in ("left_shift", "right_shift"):
                return _shift(n.op, opnd, a, b)
            if n.op == "floor_mod":
                return _floor_mod(opnd, a, b)
            it = INT_TYPES.get(opnd)
            if n.op == "div" and it is not None:
                # numpy's kernels (elementwise_numpy._int_div): truncation, x / 0 == 0, and
                # INT_MIN / -1 wraps to INT_MIN (C traps on both on x86, where cudasim runs).
                t, u = it.c_type, it.c_unsigned
                if not it.signed:  # no -1 divisor (b == -1 would compare with the type's max)
                    return (f"([](const {t} a, const {t} b) -> {t} {{ return b == 0 ? ({t})0 : "
                            f"({t})(a / b); }}({a}, {b}))")
                return (f"([](const {t} a, const {t} b) -> {t} {{ return b == 0 ? ({t})0 : "
                        f"b == -1 ? ({t})(({u})0 - ({u})a) : ({t})(a / b); }}({a}, {b}))")
            wide = "uint64_t" if it is not None and it.bits == 64 else "uint32_t"
            if it is not None and n.op in _WRAPPING and it.c_type != wide:
                # numpy wraps every step to the type; in C signed overflow is undefined and
                # 8- and 16-bit operands are promoted to int (a ui16 product can overflow it),
                # so compute in unsigned 32 or 64 bits and convert back.
                return f"(({it.c_type})(({wide})({a}) {_INFIX[n.op]} ({wide})({b})))"
            if n.op in _INFIX:
                return f"({a} {_INFIX[n.op]} {b})"
            if opnd in ("f32", "f64") and n.op in ("max", "min"):
                # numpy's maximum/minimum: a NaN operand gives NaN (fmaxf/fminf would return
                # the other one: relu(NaN) was 0), and equal operands (+0 and -0) give the
                # second. A lambda reads each operand once.
                t, cmp = C_TYPES[opnd], ">" if n.op == "max" else "<"
                return (f"([](const {t} a, const {t} b) -> {t} {{ return (a {cmp} b || a != a) "
                        f"? a : b; }}({a}, {b}))")
            if opnd in ("f32", "f64"):
                return f"{(_F32 if opnd == 'f32' else _F64)[n.op]}({a}, {b})"
            if n.op in ("max", "min"):
                # A conditional, not max()/min(): CUDA's integer overloads are ambiguous for
                # int64_t vs long long and std::max needs equal types after C's promotions.
                return f"(({a}) {'>' if n.op == 'max' else '<'} ({b}) ? ({a}) : ({b}))"
            if n.op == "pow":
                return _int_pow(opnd, a, b)
            if n.op == "mod":
                # Integer remainder as numpy gives it: x % 0 == 0, and x % -1 == 0 (C's
                # INT_MIN % -1 traps on x86, which cudasim runs on). A lambda evaluates each
                # operand once, so nested mods do not grow the text exponentially.
                t = C_TYPES[opnd]
                zero = "b == 0" if it is not None and not it.signed else "(b == 0 || b == -1)"
                return (f"([](const {t} a, const {t} b) -> {t} {{ return ({zero}) "
                        f"? ({t})0 : ({t})(a % b); }}({a}, {b}))")
            raise ValueError(f"{n.op} is not defined for {opnd}")  # pragma: no cover
        if isinstance(n, Select):
            c = go(n.cond, "i1")
            a = conv(go(n.a, t), _value_type(n.a, types, t), t)
            b = conv(go(n.b, t), _value_type(n.b, types, t), t)
            return f"({c} ? {a} : {b})"
        if isinstance(n, Cast):
            src = _value_type(n.x, types, context)
            x = go(n.x, src)
            if n.dtype == "f16":
                return f"__half2float(__float2half({conv(x, src, 'f32')}))"
            if n.dtype == "bf16":
                return f"__bfloat162float(__float2bfloat16({conv(x, src, 'f32')}))"
            return f"(({C_TYPES[n.dtype]})({x}))"
        raise TypeError(f"cannot render {n!r}")  # pragma: no cover

    body = go(expr, context)
    src = _value_type(expr, types, context)
    if out_dtype == "f16":
        return f"__float2half({conv(body, src, 'f32')})"
    if out_dtype == "bf16":
        return f"__float2bfloat16({conv(body, src, 'f32')})"
    return conv(body, src, out_dtype)


def _int_pow(dtype: str, a: str, b: str) -> str:
    """numpy's integer power: exact, wrapping to the type (squaring in unsigned 32 or 64 bits).
    A double ``pow`` lost the low bits past 2**53, and its out-of-range conversion back is
    undefined: x86 (cudasim) wrapped an i8 ``9 ** 9`` as numpy does, the H200 saturated it.
    numpy refuses a negative exponent; here it is ``1 / a ** -b`` truncated, as C divides (1 for
    a == 1, +-1 for a == -1, else 0).

    >>> print(_int_pow("ui8", "x", "y"))
    ([](const uint8_t a, const uint8_t b) -> uint8_t { uint32_t r = 1, x = (uint32_t)a; \
for (uint32_t e = (uint32_t)b; e; e >>= 1) { if (e & 1) r *= x; x *= x; } return (uint8_t)r; }(x, y))
    """
    it = INT_TYPES[dtype]
    t = it.c_type
    w = "uint64_t" if it.bits == 64 else "uint32_t"
    neg = (f"if (b < 0) return a == 1 ? ({t})1 : a == -1 ? ({t})((b & 1) ? -1 : 1) : ({t})0; "
           if it.signed else "")
    return (f"([](const {t} a, const {t} b) -> {t} {{ {neg}{w} r = 1, x = ({w})a; "
            f"for ({w} e = ({w})b; e; e >>= 1) {{ if (e & 1) r *= x; x *= x; }} "
            f"return ({t})r; }}({a}, {b}))")


def _shift(op: str, dtype: str, a: str, b: str) -> str:
    """numpy's shifts: a count outside ``[0, width)`` gives 0 (or -1 shifting a negative right);
    C leaves those undefined, and a left shift of a negative value too, so it shifts unsigned."""
    it = INT_TYPES[dtype]
    t, u, width = it.c_type, it.c_unsigned, it.bits
    out_of_range = f"(b < 0 || b >= {width})" if it.signed else f"(b >= {width})"
    if op == "left_shift":
        body = f"return {out_of_range} ? ({t})0 : ({t})(({u})a << b);"
    elif it.signed:
        body = f"return {out_of_range} ? (a < 0 ? ({t})-1 : ({t})0) : ({t})(a >> b);"
    else:
        body = f"return {out_of_range} ? ({t})0 : ({t})(a >> b);"
    return f"([](const {t} a, const {t} b) -> {t} {{ {body} }}({a}, {b}))"


def _floor_mod(dtype: str, a: str, b: str) -> str:
    """Python's remainder (numpy's ``remainder``): the sign of the divisor. For integers
    ``x % 0 == 0`` and ``x % -1 == 0`` (C traps on both on x86, where cudasim runs); for floats
    a zero remainder takes the divisor's sign, as numpy's does. Unsigned values have no sign:
    C's ``%``, with ``x % 0 == 0``."""
    t = C_TYPES[dtype]
    it = INT_TYPES.get(dtype)
    if dtype in ("f32", "f64"):
        fmod, copysign = ("fmodf", "copysignf") if dtype == "f32" else ("fmod", "copysign")
        body = (f"const {t} r = {fmod}(a, b); return r != 0 ? ((r < 0) != (b < 0) ? r + b : r) "
                f": {copysign}(({t})0, b);")
    elif it is not None and not it.signed:
        body = f"return b == 0 ? ({t})0 : ({t})(a % b);"
    else:
        body = (f"if (b == 0 || b == -1) return ({t})0; const {t} r = ({t})(a % b); "
                f"return (r != 0 && ((r < 0) != (b < 0))) ? ({t})(r + b) : r;")
    return f"([](const {t} a, const {t} b) -> {t} {{ {body} }}({a}, {b}))"


def _value_type(n: Expr, types: dict[Expr, str], default: str) -> str:
    """Compute type of a rendered node (inputs of half type are already widened to f32)."""
    if isinstance(n, Const):
        return default
    if isinstance(n, Cast) and n.dtype in ("f16", "bf16"):
        return "f32"
    return compute_dtype(types[n])


def __getattr__(name: str) -> str:
    """``CUDASIM_SHIM``: the simulator's header (lowering/cuda/cudasim_shim.h), for tests and
    hand-written drivers that include it directly and start kernels with
    ``tdf_launch(grid, block, kernel, args...)``; read on first use (``importlib.resources``
    is ~4 ms of every CPU lowering's start-up otherwise).

    >>> from tdflow.lowering.elementwise_cuda import CUDASIM_SHIM
    >>> "tdf_launch" in CUDASIM_SHIM
    True
    """
    if name != "CUDASIM_SHIM":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import resources

    text = resources.files("tdflow.lowering.cuda").joinpath("cudasim_shim.h").read_text()
    globals()[name] = text
    return text
