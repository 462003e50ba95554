"""Fused expressions mixing exact ops with libm-sensitive ones: native C segments between numpy
calls, evaluated block by block.

The native loop (:mod:`tdflow.lowering.elementwise_native`) renders only exactly rounded ops:
``tanh``, ``exp``, ``log``, ``erf``... stay numpy's, whose SIMD functions round differently
from the C library's. An expression holding one of them, such as the 6-op chain
``square(max(tanh(x * y + x) * 0.5, 0))``, is cut into *stages*: each maximal run of exact ops
is one native segment (one C loop, no temporaries inside), each other op is the very numpy call
the renderer makes for it (``np.tanh(a, out=t, dtype=f32, casting="unsafe")``). The stages run
over blocks of :data:`BLOCK` elements of the flattened operands, the values passed between
stages kept in per-thread scratch of one block, so nothing the size of the whole array is
written but the output. Every element sees the same operations on the same values as on the
numpy path: the results are numpy's bit for bit (up to the NaN payload freedom the native loop
documents; ``tests/runtime/test_elementwise_segments.py``).

Used by :func:`tdflow.lowering.elementwise_numpy.render_numpy` for multi-step expressions the
native loop alone does not take, over one floating type (``f32`` or ``f64``, with ``i1``
conditions), when every operand is an ndarray of its declared type, all of one shape with at
least :data:`~tdflow.lowering.elementwise_native.MIN_ELEMENTS` elements, C-contiguous, and the
output (if given) of that shape and type, overlapping no input except in place. Anything else,
no compiler, ``TDFLOW_NATIVE=0`` or :data:`USE_SEGMENTS` off: the numpy program runs.

>>> from tdflow.dialect.formula.expr import Input, Unary
>>> import numpy as np
>>> plan = plan_segments(Unary("tanh", Input(0) * Input(1) + Input(0)) * 0.5, ["f32", "f32"],
...                      "f32", lambda n: np.tanh)
>>> [s.kind for s in plan.stages]
['native', 'numpy', 'native']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, Select, Unary
from tdflow.dialect.formula.types import compute_dtype, infer_dtypes, operand_dtype
from tdflow.dialect.types import DTYPES
from tdflow.lowering import elementwise_native
from tdflow.lowering.elementwise_native import (
    EXACT_BINARY,
    EXACT_UNARY,
    MIN_ELEMENTS,
    c_source,
    native_kernels,
)

from tdflow.core.valueclass import value_class

__all__ = ["BLOCK", "MIN_GAIN", "NUMPY_COST", "NUMPY_COST_F32", "USE_SEGMENTS", "SegmentPlan",
           "Stage", "plan_segments", "with_segments"]

#: Elements per block. 256K f32 is 1 MiB a buffer: two inputs, one or two values between
#: stages and the output stay in L2/L3 while a block goes through every stage; one call per
#: stage and block (~1 us) is noise at this size.
BLOCK = 1 << 18
#: False: the numpy program runs whole (read at every call; ``bench/fused_bench.py`` times both).
USE_SEGMENTS = True


@value_class(frozen=True)
class Stage:
    """One step over a block. ``kind`` is ``"native"`` (``expr`` over ``Input(j)`` for the
    ``j``-th of ``args``, of types ``in_dtypes``, rendered by the C loop) or ``"numpy"``
    (``func(*args, out=, dtype=, casting="unsafe")`` as the numpy renderer calls it).
    ``args`` and ``dest`` are register numbers: inputs, then constants, then the values
    passed between stages, then the output."""

    kind: str
    args: tuple[int, ...]
    dest: int
    expr: Expr | None = None
    in_dtypes: tuple[str, ...] = ()
    out_dtype: str = ""
    func: Callable[..., Any] | None = None


@value_class(frozen=True)
class SegmentPlan:
    """The stages of an expression in order; ``consts`` (registers ``n_in...``), then
    ``n_temps`` block buffers of ``dtype``, then the output register ``out``."""

    stages: tuple[Stage, ...]
    n_in: int
    consts: tuple[Any, ...]
    n_temps: int
    dtype: str

    @property
    def out(self) -> int:
        return self.n_in + len(self.consts) + self.n_temps


#: Rough cost of a numpy op per element, in passes of an exact op over memory (~0.2-0.4 ns):
#: numpy's SIMD ``tanh``/``exp``/``log`` about 2, the float64 ``erf`` (Cody's formulas in
#: numpy, gathers and scatters by range) about 25, anything else 4.
NUMPY_COST = {"tanh": 2, "exp": 2, "log": 2, "erf": 25}
#: Where float32 differs: its ``erf`` is one native loop (:mod:`tdflow.lowering.erf_native`,
#: ~0.9-1.6 ns an element with AVX-512), about 4 passes.
NUMPY_COST_F32 = {**NUMPY_COST, "erf": 4}
#: Segments are planned only when the passes they save (exact ops minus native segments) are
#: at least this share of the expression's estimated cost: each segmented expression costs a
#: compiler run on first use (cold cache), which an erf-bound GELU would not win back. Measured
#: (1M f32, segments against numpy): sigmoid (estimate 0.2) 0.91x, silu (0.33) 0.81x, softplus
#: 0.70x, the 6-op chain (0.43) 0.63x. With the float32 table erf (~10 ns an element) gelu
#: (0.07) and gelu_grad (0.19) were left out; with the native one they are in (f32: 0.25, 0.3).
MIN_GAIN = 0.2


def _worth_it(expr: Expr, specs: Sequence[tuple[Any, ...]], fdt: str = "f64") -> bool:
    exact = sum(1 for n in _nodes(expr) if _exact(n))
    numpy_ops = [n for n in _nodes(expr) if not _exact(n) and isinstance(n, (Unary, Binary))]
    saved = exact - sum(1 for spec in specs if spec[0] == "native")
    costs = NUMPY_COST_F32 if fdt == "f32" else NUMPY_COST
    cost = exact + sum(costs.get(n.op, 4) for n in numpy_ops)
    return saved >= MIN_GAIN * cost


def _nodes(expr: Expr) -> list[Expr]:
    """The distinct nodes of ``expr`` (shared subtrees once)."""
    seen: dict[Expr, None] = {}
    stack = [expr]
    while stack:
        n = stack.pop()
        if n not in seen and not isinstance(n, (Input, Const)):
            seen[n] = None
            stack.extend(n.children())
    return list(seen)


class _NotSplit(Exception):
    """A node neither the C loop nor a plain numpy call renders (a cast, integer math...)."""


def _exact(n: Expr) -> bool:
    return (isinstance(n, Select) or isinstance(n, Unary) and n.op in EXACT_UNARY
            or isinstance(n, Binary) and n.op in EXACT_BINARY)


def plan_segments(expr: Expr, in_dtypes: Sequence[str], out_dtype: str,
                  numpy_function: Callable[[Expr], Callable[..., Any] | None]) -> SegmentPlan | None:
    """The stages of ``expr``, or ``None`` when it does not split into at least one native
    segment and one numpy call over one floating type, or would save too little
    (:data:`MIN_GAIN`). ``numpy_function(node)`` is the function the numpy renderer calls for
    a non-exact node (``None``: not a plain call).

    >>> from tdflow.dialect.formula.expr import Input, exp
    >>> p = plan_segments(exp(Input(0) * Input(0) - 1.0) * Input(0) + 2.0, ["f64"], "f64",
    ...                   lambda n: np.exp)
    >>> [(s.kind, s.args, s.dest) for s in p.stages]   # registers: x, one block buffer, out
    [('native', (0,), 1), ('numpy', (1,), 1), ('native', (1, 0), 2)]
    >>> plan_segments(Input(0) + 1.0, ["f64"], "f64", lambda n: None) is None  # all exact
    True
    """
    in_dtypes = tuple(in_dtypes)
    context = compute_dtype(out_dtype)
    try:
        types = infer_dtypes(expr, in_dtypes, context)
    except (KeyError, TypeError, ValueError):
        return None
    floats = {t for t in (*types.values(), out_dtype) if t != "i1"}
    if len(floats) != 1 or not floats <= {"f32", "f64"} or types.get(expr) != out_dtype:
        return None
    (fdt,) = floats
    n_in = len(in_dtypes)
    consts: list[Any] = []
    specs: list[tuple[Any, ...]] = []
    temps = 0
    done: dict[Expr, Any] = {}

    def const_ref(v: Any, dt: str) -> Any:
        consts.append(np.asarray(v).astype(DTYPES[dt])[()])
        return ("const", len(consts) - 1)

    def new_dest(root: bool) -> Any:
        nonlocal temps
        if root:
            return ("out", 0)
        temps += 1
        return ("tmp", temps - 1)

    def dtype_of(ref: Any) -> str:
        return in_dtypes[ref[1]] if ref[0] == "in" else fdt

    def value(n: Expr, root: bool = False) -> Any:
        """The register holding ``n``'s value over the block, the stages computing it added."""
        if n in done:
            return done[n]
        if isinstance(n, Input):
            return ("in", n.index)
        if isinstance(n, Const):
            raise _NotSplit  # a constant root: folded away before rendering
        if _exact(n):
            leaves: dict[Any, int] = {}
            memo: dict[Expr, Expr] = {}

            def rewrite(m: Expr) -> Expr:
                if isinstance(m, Const):
                    return m  # never from the memo: Const(-0.0) == Const(0) == Const(0.0)
                if m in memo:
                    return memo[m]
                if _exact(m):
                    kids = [rewrite(c) for c in m.children()]
                    new: Expr = (Select(*kids) if isinstance(m, Select)
                                 else Unary(m.op, kids[0]) if isinstance(m, Unary)
                                 else Binary(m.op, kids[0], kids[1]))
                else:
                    new = Input(leaves.setdefault(value(m), len(leaves)))
                memo[m] = new
                return new

            sub = rewrite(n)
            args = tuple(leaves)
            dtypes = tuple(dtype_of(a) for a in args)
            if c_source(sub, dtypes, types[n], "probe") is None:
                raise _NotSplit
            dest = new_dest(root)
            specs.append(("native", args, dest, sub, dtypes, types[n], None))
        else:
            f = numpy_function(n)
            if (f is None or not isinstance(n, (Unary, Binary)) or types[n] != fdt
                    or operand_dtype(n, types, context) != fdt):
                raise _NotSplit
            args = tuple(const_ref(c.value, fdt) if isinstance(c, Const) else value(c)
                         for c in n.children())
            dest = new_dest(root)
            specs.append(("numpy", args, dest, None, (), fdt, f))
        done[n] = dest
        return dest

    try:
        value(expr, root=True)
    except _NotSplit:
        return None
    kinds = {s[0] for s in specs}
    if kinds != {"native", "numpy"} or not _worth_it(expr, specs, fdt):
        return None
    # One block buffer per value alive at once: a stage may write over an operand it is the
    # last to read (numpy's ufuncs and the C loop both allow exactly that overlap).
    last = {a: k for k, spec in enumerate(specs) for a in spec[1] if a[0] == "tmp"}
    physical: dict[Any, int] = {}
    free: list[int] = []
    n_buf = 0
    for k, spec in enumerate(specs):
        free.extend(physical[a] for a in dict.fromkeys(spec[1]) if last.get(a) == k)
        if spec[2][0] == "tmp":
            if free:
                physical[spec[2]] = free.pop()
            else:
                physical[spec[2]] = n_buf
                n_buf += 1
    t0 = n_in + len(consts)

    def reg(ref: Any) -> int:
        kind, i = ref
        if kind == "tmp":
            return t0 + physical[ref]
        return {"in": i, "const": n_in + i, "out": t0 + n_buf}[kind]

    stages = tuple(Stage(kind, tuple(reg(a) for a in args), reg(dest), sub, dtypes, odt, f)
                   for kind, args, dest, sub, dtypes, odt, f in specs)
    return SegmentPlan(stages, n_in, tuple(consts), n_buf, fdt)


class _Refused(Exception):
    """A native stage handed its buffers back (they did not fit): numpy runs instead."""


def with_segments(run: Callable[..., np.ndarray], expr: Expr, in_dtypes: Sequence[str],
                  out_dtype: str, numpy_function: Callable[[Expr], Callable[..., Any] | None]
                  ) -> Callable[..., np.ndarray]:
    """``run`` (a rendered numpy program's ``run(inputs, out=None)``) with the segmented,
    blocked evaluation in front (see the module's text for when it is taken); ``run`` itself
    when the expression does not split.

    >>> from tdflow.dialect.formula.expr import Input, Unary
    >>> numpy_only = lambda inputs, out=None: "numpy"
    >>> expr = Unary("tanh", Input(0) * 0.5 + 1.0) * 2.0 - 1.0
    >>> run = with_segments(numpy_only, expr, ["f32"], "f32", lambda n: np.tanh)
    >>> run([np.ones(3, np.float32)])        # small: numpy
    'numpy'
    >>> out = run([np.zeros(8192, np.float32)])   # segments (or "numpy" with no compiler)
    >>> isinstance(out, str) or bool((out == np.tanh(np.float32(1)) * 2 - 1).all())
    True
    """
    plan = plan_segments(expr, in_dtypes, out_dtype, numpy_function)
    if plan is None:
        return run
    np_dt = np.dtype(DTYPES[plan.dtype])
    np_out = np.dtype(DTYPES[out_dtype])
    used = sorted({a for s in plan.stages for a in s.args if a < plan.n_in})
    want = [np.dtype(DTYPES[in_dtypes[i]]) for i in used]
    t0 = plan.n_in + len(plan.consts)
    template: list[Any] = [None] * plan.n_in + list(plan.consts) + [None] * (plan.n_temps + 1)
    steps: list[Callable[[list[Any]], None]] | None = None
    local = threading.local()

    def build() -> list[Callable[[list[Any]], None]] | None:
        native = [st for st in plan.stages if st.kind == "native"]
        fns = native_kernels([(st.expr, st.in_dtypes, st.out_dtype, frozenset())
                              for st in native])  # one module, one compiler run
        if fns is None:
            return None
        by_stage = dict(zip(map(id, native), fns))
        return [_native_step(by_stage[id(st)], st.args, st.dest) if st.kind == "native"
                else _numpy_step(st.func, st.args, st.dest, np_dt) for st in plan.stages]

    def run_segments(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        nonlocal steps
        if not (USE_SEGMENTS and elementwise_native.USE_NATIVE):
            return run(inputs, out)
        first = inputs[used[0]]
        if type(first) is not np.ndarray or first.size < MIN_ELEMENTS:
            return run(inputs, out)
        shape = first.shape
        for i, dt in zip(used, want):
            a = inputs[i]
            if (type(a) is not np.ndarray or a.dtype != dt or a.shape != shape
                    or not a.flags.c_contiguous):
                return run(inputs, out)
        if out is not None:
            if (type(out) is not np.ndarray or out.shape != shape or out.dtype != np_out
                    or not out.flags.c_contiguous or not out.flags.writeable):
                return run(inputs, out)
            for i in used:  # in place (the same buffer) or apart: a block is read, then written
                a = inputs[i]
                if a is not out and np.may_share_memory(a, out) and not (
                        a.ctypes.data == out.ctypes.data and a.strides == out.strides):
                    return run(inputs, out)
        if steps is None:
            steps = build() or []
        if not steps:
            return run(inputs, out)
        dest = np.empty(shape, np_out) if out is None else out
        flat_out = dest.reshape(-1)
        n = flat_out.size
        block = BLOCK
        need = min(block, n)  # kept per thread: no page faults on fresh memory every call
        bufs = local.__dict__.get("bufs")
        if bufs is None or (bufs and bufs[0].size < need):
            bufs = local.bufs = [np.empty(need, np_dt) for _ in range(plan.n_temps)]
        r = template.copy()
        flat = [(i, inputs[i].reshape(-1)) for i in used]
        with np.errstate(all="ignore"):
            for lo in range(0, n, block):
                hi = min(lo + block, n)
                for i, a in flat:
                    r[i] = a[lo:hi]
                r[t0:t0 + plan.n_temps] = [b if b.size == hi - lo else b[:hi - lo] for b in bufs]
                r[-1] = flat_out[lo:hi]
                try:
                    for step in steps:
                        step(r)
                except _Refused:
                    if lo:  # pragma: no cover - every block is alike; the first would refuse
                        raise RuntimeError("a native segment refused a block after the first") from None
                    return run(inputs, out)
        return dest

    if out_dtype == "f32" and tuple(in_dtypes) == ("f32",) and _is_gelu(expr):
        return _gelu_first(run_segments)  # GELU's forward: one C loop, the erf inline, same bits
    return run_segments


def _native_step(fn: Callable[..., Any], args: tuple[int, ...], d: int
                 ) -> Callable[[list[Any]], None]:
    if len(args) == 1:
        (a,) = args

        def step(r: list[Any]) -> None:
            if not fn(r[a], r[d]):
                raise _Refused
    elif len(args) == 2:
        a, b = args

        def step(r: list[Any]) -> None:
            if not fn(r[a], r[b], r[d]):
                raise _Refused
    else:
        def step(r: list[Any]) -> None:
            if not fn(*[r[a] for a in args], r[d]):
                raise _Refused
    return step


def _numpy_step(f: Any, args: tuple[int, ...], d: int, dt: np.dtype
                ) -> Callable[[list[Any]], None]:
    if len(args) == 1:
        (a,) = args

        def step(r: list[Any]) -> None:
            f(r[a], out=r[d], dtype=dt, casting="unsafe")
    else:
        a, b = args

        def step(r: list[Any]) -> None:
            f(r[a], r[b], out=r[d], dtype=dt, casting="unsafe")
    return step


def _is_gelu(expr: Expr) -> bool:
    """Whether ``expr`` is the ``gelu`` op's formula exactly as the float32 GELU loop computes
    it (:func:`tdflow.lowering.erf_f32.gelu_f32_native`): the printed form too, so a constant
    of another type or value never matches."""
    from tdflow.dialect.formula.expr import erf

    gelu = 0.5 * Input(0) * (1.0 + erf(Input(0) * 0.7071067811865475))
    return expr == gelu and str(expr) == str(gelu)


def _gelu_first(run: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """``run`` with the one-loop float32 GELU in front: the segments' three stages (``x * c``,
    the erf, the rest) were three passes over 256K blocks; inline, the erf's neighbours cost
    ~0.1 of it instead of ~0.25 (``tests/runtime/test_erf_native.py`` checks the bits)."""
    from tdflow.lowering.erf_f32 import gelu_f32_native

    def run_gelu(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        x = inputs[0]
        if (USE_SEGMENTS and elementwise_native.USE_NATIVE and type(x) is np.ndarray
                and x.dtype == np.float32 and x.size >= MIN_ELEMENTS):
            dest = np.empty(x.shape, np.float32) if out is None else out
            if (type(dest) is np.ndarray and dest.shape == x.shape and dest.dtype == np.float32
                    and gelu_f32_native(x, dest)):
                return dest
        return run(inputs, out)

    return run_gelu
