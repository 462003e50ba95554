"""Render an elementwise expression to a numpy program (a chain of ufunc calls; no text).

>>> from tdflow.dialect.formula.expr import Input, exp
>>> import numpy as np
>>> prog = render_numpy(exp(Input(0)) * 2 + Input(1), ["f32", "f32"], "f32")
>>> x = np.zeros(3, np.float32); out = np.empty(3, np.float32)
>>> prog([x, x + 1], out) is out
True
>>> out.tolist()
[3.0, 3.0, 3.0]

The tree is walked once, at render time: shared subtrees are computed once, every node becomes
one ufunc call (``np.exp(a, out=t, dtype=f32)``), and temporaries are given register slots by
liveness so a long chain runs in one or two scratch buffers. Only the root writes ``out``, so
``out`` may alias an input (in-place execution). When all inputs have the same shape the
scratch buffers are preallocated, and kept per thread between calls when large (64 KiB to
64 MiB per program); with broadcasting each scratch slot gets the shape its values have
(numpy allocates per step only when one slot would hold two shapes).

Multi-step expressions of exactly rounded ops over large contiguous arrays run as one native
C loop instead (:mod:`tdflow.lowering.elementwise_native`; same values, numpy as fallback);
those mixing them with ops C rounds otherwise (``tanh``, ``exp``...) run as C segments between
the numpy calls, block by block (:mod:`tdflow.lowering.elementwise_segments`).

Types follow :func:`~tdflow.dialect.formula.types.infer_dtypes`: ``f16`` inputs compute in
``f32`` and round once when stored; integer ``div`` truncates toward zero, as C does.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.formula.expr import (
    COMPARE_OPS,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Select,
    Unary,
    bind,
)
from tdflow.dialect.formula.types import (
    compute_dtype,
    default_out_dtype,
    infer_dtypes,
    operand_dtype,
)
from tdflow.dialect.types import DTYPES
from tdflow.lowering import elementwise_blocks
from tdflow.lowering.elementwise_blocks import BLOCK, BlockRunner
from tdflow.lowering.elementwise_native import with_native
from tdflow.lowering.elementwise_segments import with_segments
from tdflow.lowering.elementwise_steps import make_step

_UFUNCS: dict[str, np.ufunc] = {
    "neg": np.negative, "abs": np.absolute, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "not": np.logical_not,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "max": np.maximum, "min": np.minimum, "pow": np.power,
    # C's remainder: fmod for floats; for integers truncated, and numpy gives x % 0 == 0.
    "mod": np.fmod,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal, "and": np.logical_and, "or": np.logical_or,
    "xor": np.logical_xor,
    # Python's remainder (sign of the divisor) for floats and integers; integer x % 0 == 0.
    "floor_mod": np.remainder,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
    "round": np.rint,  # half to even, as ONNX's Round and CUDA's rint
    "sign": np.sign,
    # numpy's shifts give 0 (or -1 shifting a negative right) for counts outside the type's
    # width; the CUDA renderer guards the same way (C leaves those undefined).
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "bitwise_not": np.invert, "left_shift": np.left_shift, "right_shift": np.right_shift,
}
# Ops whose IEEE results (inf, nan) are expected; numpy's warnings for them are silenced.
_WARNING_OPS = frozenset({"exp", "log", "sqrt", "rsqrt", "div", "pow", "erf", "mod", "floor_mod",
                          "tan", "asin", "acos", "sinh", "cosh", "acosh", "atanh"})


def _predicate(test: np.ufunc) -> Callable[..., np.ndarray]:
    """A float test (``isnan``, ``isinf``) called like the other steps: its ``dtype`` is the
    result's (bool), which must not select numpy's loop (that would test the input as bool)."""

    def run(x: Any, out: np.ndarray | None = None, dtype: Any = None, **_: Any) -> np.ndarray:
        return test(x, out=out)

    run.__name__ = test.__name__
    return run


_PREDICATES = {"isnan": _predicate(np.isnan), "isinf": _predicate(np.isinf)}

def _rsqrt(x: np.ndarray, out: np.ndarray | None = None, dtype: Any = None, **_: Any) -> np.ndarray:
    r = np.sqrt(x, out=out, dtype=dtype, casting="unsafe")
    # a 0-d input without ``out`` (a broadcast step) gives a numpy scalar, not an array
    return np.divide(1, r, out=r if isinstance(r, np.ndarray) else None)


def _int_div(a: Any, b: Any, out: np.ndarray | None = None, dtype: Any = None,
             **_: Any) -> np.ndarray:
    """Integer division truncating toward zero (C semantics); ``x / 0`` gives 0."""
    a = np.asarray(a, dtype=dtype)
    b = np.asarray(b, dtype=dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        rem = np.fmod(a, b)
        return np.floor_divide(a - rem, b, out=out, dtype=dtype, casting="unsafe")


class NumpyProgram:
    """A compiled expression: ``prog(inputs, out=None) -> out``.

    ``inputs`` are numpy arrays (numpy broadcasting applies); ``out`` is a preallocated array of
    the broadcast shape (any dtype; values are cast on store) or ``None`` to allocate one of
    ``out_dtype``. ``run`` is the same callable without the method-call hop.
    """

    __slots__ = ("expr", "in_dtypes", "out_dtype", "run", "n_steps", "n_temps")

    def __init__(self, expr: Expr, in_dtypes: tuple[str, ...], out_dtype: str,
                 run: Callable[[Sequence[np.ndarray], np.ndarray | None], np.ndarray],
                 n_steps: int, n_temps: int) -> None:
        self.expr = expr
        self.in_dtypes = in_dtypes
        self.out_dtype = out_dtype
        self.run = run
        self.n_steps = n_steps
        self.n_temps = n_temps

    def __call__(self, inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        return self.run(inputs, out)

    def __repr__(self) -> str:
        return (f"NumpyProgram({self.expr!r}, in={list(self.in_dtypes)}, out={self.out_dtype}, "
                f"steps={self.n_steps}, temps={self.n_temps})")


def render_numpy(expr: Expr, in_dtypes: Sequence[str], out_dtype: str | None = None,
                 attrs: dict[str, Any] | None = None) -> NumpyProgram:
    """Compile ``expr`` over inputs of ``in_dtypes`` (MLIR spellings) into a :class:`NumpyProgram`.

    ``out_dtype`` defaults to input 0's type for arithmetic and ``i1`` for predicates;
    ``attrs`` binds any :class:`~tdflow.dialect.formula.expr.Attr` left in ``expr``.
    """
    in_dtypes = tuple(in_dtypes)
    expr = bind(expr, attrs or {})
    if out_dtype is None:
        out_dtype = default_out_dtype(expr, in_dtypes)
    context = compute_dtype(out_dtype)
    types = infer_dtypes(expr, in_dtypes, context)
    np_out = DTYPES[out_dtype]
    n_in = len(in_dtypes)

    # Registers: inputs, then constants, then temporaries, then the output slot.
    consts: list[Any] = []
    uses: dict[Expr, int] = {}

    def count(n: Expr) -> None:
        uses[n] = uses.get(n, 0) + 1
        if uses[n] == 1:
            for c in n.children():
                count(c)

    count(expr)
    steps_spec: list[tuple[str, Any, tuple[Any, ...], Any, Any]] = []  # kind, f, args, dest, dt
    value_of: dict[Expr, tuple[str, int]] = {}
    free: dict[Any, list[int]] = {}
    temp_dtypes: list[Any] = []
    remaining = dict(uses)
    warns = False

    def const_ref(v: Any, dt: str) -> tuple[str, int]:
        consts.append(np.asarray(v).astype(DTYPES[dt])[()])
        return ("const", len(consts) - 1)

    def release(ref: tuple[str, int], node: Expr) -> None:
        remaining[node] -= 1
        if remaining[node] == 0 and ref[0] == "tmp":
            free.setdefault(temp_dtypes[ref[1]], []).append(ref[1])

    def new_temp(dt: Any) -> tuple[str, int]:
        pool = free.get(dt)
        if pool:
            return ("tmp", pool.pop())
        temp_dtypes.append(dt)
        return ("tmp", len(temp_dtypes) - 1)

    def emit(n: Expr) -> tuple[str, int]:
        nonlocal warns
        if n in value_of:
            return value_of[n]
        if isinstance(n, Input):
            ref = ("in", n.index)
            value_of[n] = ref
            return ref
        if isinstance(n, Const):  # only reached for a constant root
            return const_ref(n.value, context)
        opnd = operand_dtype(n, types, context)
        args: list[tuple[str, int]] = []
        for c in n.children():
            if isinstance(c, Const):
                args.append(const_ref(c.value, types[n] if isinstance(n, Select) else opnd))
            else:
                args.append(emit(c))
        dt = DTYPES[types[n]]
        # A select reads its condition after writing the destination, so the condition's
        # slot must not be recycled as the destination; ufuncs may write over an operand.
        if isinstance(n, Select):
            dest = ("out", 0) if n is expr else new_temp(dt)
        for c, a in zip(n.children(), args):
            if a[0] != "const":
                release(a, c)
        if not isinstance(n, Select):
            dest = ("out", 0) if n is expr else new_temp(dt)
        if isinstance(n, Unary):
            warns |= n.op in _WARNING_OPS
            f = _special_function(n.op) or _UFUNCS[n.op]
            steps_spec.append(("ufunc", f, tuple(args), dest, dt))
        elif isinstance(n, Binary):
            warns |= n.op in _WARNING_OPS
            if n.op == "div" and types[n] not in ("f16", "bf16", "f32", "f64"):
                steps_spec.append(("ufunc", _int_div, tuple(args), dest, dt))
            elif n.op in COMPARE_OPS:
                steps_spec.append(("cmp", _UFUNCS[n.op], tuple(args), dest, DTYPES[opnd]))
            else:
                steps_spec.append(("ufunc", _UFUNCS[n.op], tuple(args), dest, dt))
        elif isinstance(n, Select):
            steps_spec.append(("select", None, tuple(args), dest, dt))
        elif isinstance(n, Cast):
            steps_spec.append(("cast", None, tuple(args), dest, dt))
        else:  # pragma: no cover
            raise TypeError(f"cannot render {n!r}")
        value_of[n] = dest
        return dest

    root = emit(expr)
    n_const = len(consts)
    t0 = n_in + n_const
    n_temp = len(temp_dtypes)
    out_slot = t0 + n_temp

    def index(ref: tuple[str, int]) -> int:
        kind, i = ref
        if kind == "out":
            return out_slot
        return i if kind == "in" else (n_in + i if kind == "const" else t0 + i)

    steps: list[Callable[[list[Any]], None]] = []
    fresh_steps: list[Callable[[list[Any]], None]] = []  # broadcasting: temps of varied shapes
    for kind, f, args, dest, dt in steps_spec:
        d = index(dest)
        idx = tuple(index(a) for a in args)
        steps.append(make_step(kind, f, idx, d, dt, fresh=False))
        fresh_steps.append(make_step(kind, f, idx, d, dt, fresh=d != out_slot))
    root_is_value = root[0] != "out"
    root_index = index(root)
    template: list[Any] = [None] * n_in + consts + [None] * (n_temp + 1)
    temp_range = range(t0, t0 + n_temp)
    temp_np = [temp_dtypes[i - t0] for i in temp_range]
    temp_itemsize = sum(np.dtype(dt).itemsize for dt in temp_np)
    used_inputs = sorted({n.index for n in value_of if isinstance(n, Input)})

    local = threading.local()  # scratch buffers kept per thread (kernels may run concurrently)
    step_args = [tuple(index(a) for a in spec[2]) for spec in steps_spec]
    step_dest = [index(spec[3]) for spec in steps_spec]

    def broadcast_plan(sig: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
        """(temps, result shape) for inputs of these shapes, or (None, shape) when a scratch
        slot would hold values of two shapes (then numpy allocates every step's result)."""
        shapes: dict[int, tuple[int, ...]] = dict(zip(used_inputs, sig))
        slot_shape: dict[int, tuple[int, ...]] = {}
        ok = True
        full: tuple[int, ...] = ()
        for args, d in zip(step_args, step_dest):
            full = np.broadcast_shapes(*(shapes.get(a, ()) for a in args))
            shapes[d] = full
            if d != out_slot and slot_shape.setdefault(d, full) != full:
                ok = False
        if not ok:
            return None, full
        return [np.empty(slot_shape[i], dt) for i, dt in zip(temp_range, temp_np)], full

    def run(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        r = template.copy()
        r[:n_in] = inputs[:n_in]
        shape = None
        if used_inputs:
            shape = inputs[used_inputs[0]].shape
            for i in used_inputs:
                if inputs[i].shape != shape:
                    shape = None
                    break
        chain = steps
        if n_temp and not root_is_value:
            blocked = _try_blocks(r, inputs, out)
            if blocked is not None:
                return blocked
        if shape is not None:
            if n_temp:
                r[t0:out_slot] = _scratch(local, shape, temp_np, temp_itemsize)
            if out is None:
                out = np.empty(shape, np_out)
        elif not root_is_value:
            sig = tuple(inputs[i].shape for i in used_inputs)
            plans = local.__dict__.get("plans")
            if plans is None:
                plans = local.plans = {}
            cached = plans.get(sig)
            if cached is not None:
                temps, full = cached
            else:
                temps, full = broadcast_plan(sig)
                if temps is not None:
                    nbytes = sum(t.nbytes for t in temps)
                    if nbytes >= SCRATCH_KEEP_BYTES:
                        _keep(plans, sig, (temps, full), nbytes)
            if temps is None:
                chain = fresh_steps
            else:
                r[t0:out_slot] = temps
                if out is None:
                    out = np.empty(full, np_out)
        if root_is_value:
            value = r[root_index]
            if out is None:
                return np.array(value, dtype=np_out)
            np.copyto(out, value, casting="unsafe")
            return out
        r[out_slot] = out
        if warns:
            with np.errstate(all="ignore"):
                for step in chain:
                    step(r)
        else:
            for step in chain:
                step(r)
        result = r[out_slot]
        if out is None:
            result = np.asarray(result)
            if result.dtype != np_out:
                result = result.astype(np_out)
        return result

    _try_blocks = BlockRunner(steps, used_inputs, step_args, step_dest, temp_np, np_out,
                              out_slot, t0, warns)

    if used_inputs == [0] and not root_is_value:
        # One array input (unary ops, the common eager case): no shape comparisons.
        general = run

        def run(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
            x = inputs[0]
            if type(x) is not np.ndarray or (n_temp and x.size >= 2 * BLOCK
                                              and elementwise_blocks.USE_BLOCKS):
                return general(inputs, out)
            r = template.copy()
            r[0] = x
            if n_temp:
                r[t0:out_slot] = _scratch(local, x.shape, temp_np, temp_itemsize)
            if out is None:
                out = np.empty(x.shape, np_out)
            r[out_slot] = out
            if warns:
                with np.errstate(all="ignore"):
                    for step in steps:
                        step(r)
            else:
                for step in steps:
                    step(r)
            return out

    if len(steps) == 1 and not warns and steps_spec[0][0] in ("ufunc", "cmp"):
        run = _single_ufunc(steps_spec[0], [index(a) for a in steps_spec[0][2]], n_in,
                            consts, np_out) or run
    if len(steps) > 1:  # one ufunc is one pass already; a chain is one C loop instead of many
        native = with_native(run, expr, in_dtypes, out_dtype)
        if native is run:  # an op C does not round as numpy: C segments between numpy calls
            native = with_segments(run, expr, in_dtypes, out_dtype, numpy_function)
        run = native
    return NumpyProgram(expr, in_dtypes, out_dtype, run, len(steps), n_temp)


def _special_function(op: str) -> Callable[..., Any] | None:
    """The function of a unary op numpy has no ufunc for (erf, rsqrt, the predicates)."""
    if op == "erf":  # imported on first use: it builds decimal constants (start-up, issue 23)
        from tdflow.lowering.erf_f32 import erf_ufunc
        return erf_ufunc
    return _rsqrt if op == "rsqrt" else _PREDICATES.get(op)


def numpy_function(n: Expr) -> Callable[..., Any] | None:
    """The function a plain ``ufunc`` step of node ``n`` calls (``f(a[, b], out=, dtype=)``),
    or ``None`` when the node is rendered otherwise (comparisons, selects, casts).

    >>> from tdflow.dialect.formula.expr import Input, Unary
    >>> numpy_function(Unary("tanh", Input(0))) is np.tanh, numpy_function(Input(0) > 0)
    (True, None)
    """
    if isinstance(n, Unary):
        return _special_function(n.op) or _UFUNCS.get(n.op)
    if isinstance(n, Binary) and n.op not in COMPARE_OPS:
        return _UFUNCS.get(n.op)
    return None


def _single_ufunc(spec: tuple[str, Any, tuple[Any, ...], Any, Any], idx: list[int], n_in: int,
                  consts: list[Any], np_out: np.dtype) -> Callable[..., np.ndarray] | None:
    """A one-ufunc expression (``relu``, ``broadcast_add``...) runs without the register file."""
    kind, f, _, _, dt = spec
    if not isinstance(f, np.ufunc):
        return None
    kw: dict[str, Any] = {"casting": "unsafe"} if kind == "cmp" else {"dtype": dt, "casting": "unsafe"}
    if len(idx) == 1 and idx[0] < n_in:
        i = idx[0]

        def run1(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
            r = f(inputs[i], out=out, **kw)
            return r if out is not None else _as_result(r, np_out)

        return run1
    if len(idx) == 2:
        (i, a_in), (j, b_in) = ((idx[0], idx[0] < n_in), (idx[1], idx[1] < n_in))
        ca = None if a_in else consts[i - n_in]
        cb = None if b_in else consts[j - n_in]
        if a_in and b_in:
            def run2(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
                r = f(inputs[i], inputs[j], out=out, **kw)
                return r if out is not None else _as_result(r, np_out)
        elif a_in:
            def run2(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
                r = f(inputs[i], cb, out=out, **kw)
                return r if out is not None else _as_result(r, np_out)
        elif b_in:
            def run2(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
                r = f(ca, inputs[j], out=out, **kw)
                return r if out is not None else _as_result(r, np_out)
        else:
            return None
        return run2
    return None


# Scratch buffers above this size are kept between calls: allocating them maps fresh pages
# (page faults on first touch), which costs as much as the arithmetic of a cheap op.
SCRATCH_KEEP_BYTES = 1 << 16
SCRATCH_MAX_BYTES = 1 << 26


def _scratch(local: threading.local, shape: tuple[int, ...], dtypes: list[Any],
             itemsize: int) -> list[np.ndarray]:
    """Temporaries of ``shape``: the thread's cached ones when large, else fresh."""
    nbytes = math.prod(shape) * itemsize
    if nbytes < SCRATCH_KEEP_BYTES:
        return [np.empty(shape, dt) for dt in dtypes]
    kept = local.__dict__.get("bufs")
    if kept is None:
        kept = local.bufs = {}
    bufs = kept.get(shape)
    if bufs is None:
        bufs = [np.empty(shape, dt) for dt in dtypes]
        _keep(kept, shape, bufs, nbytes)
    return bufs


#: Shapes a program keeps scratch for, per thread: one program serves every layer of a model
#: whose expression repeats (batch normalization's gradient, at each layer's shape), and
#: keeping only the last shape's made every call of alternating shapes allocate (and page in)
#: its temporaries afresh.
SCRATCH_SHAPES = 8


def _keep(kept: dict, key: Any, value: Any, nbytes: int) -> None:
    """Keep ``value`` (scratch of ``nbytes``) under ``key`` while the thread's kept scratch of
    this program stays within :data:`SCRATCH_SHAPES` entries and ``SCRATCH_MAX_BYTES``."""
    if nbytes > SCRATCH_MAX_BYTES:
        return
    total = kept.get(_BYTES, 0) + nbytes
    if len(kept) > SCRATCH_SHAPES or total > SCRATCH_MAX_BYTES:
        kept.clear()
        total = nbytes
    kept[key] = value
    kept[_BYTES] = total


_BYTES = "bytes"  # the key of a kept-scratch dict's byte count (other keys are tuples)


def _as_result(r: Any, np_out: np.dtype) -> np.ndarray:
    """A fresh ufunc result as an array of the output type (0-d ufuncs return scalars)."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    return r if r.dtype == np_out else r.astype(np_out)
