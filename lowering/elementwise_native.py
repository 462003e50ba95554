"""Native evaluation of a fused elementwise expression: one C loop, no temporaries.

numpy evaluates ``where(gt(x, 0), dy, 0)`` or a six-op chain one ufunc at a time, each over
the whole array, so every intermediate goes through memory and every step costs a call. For
expressions made only of exactly rounded operations (``+ - * /``, ``sqrt``, ``abs``, ``neg``,
``floor``/``ceil``/``round``, ``min``/``max`` with numpy's NaN rules, comparisons, logic,
``where``, ``isnan``/``isinf``) over one floating type, the same values come out of one C
loop (bit for bit, signed zeros and NaN signs included; the one freedom is which payload a
NaN made from two NaN operands carries, which numpy's own ``add``/``multiply`` choose by the
element's position: the SIMD body keeps the first operand's, the tail loop the second's) compiled with the system compiler without fast math (``-ffp-contract=off``: no fused
multiply-add, which would round once instead of twice). Transcendental ops (``exp``,
``tanh``, ``erf``...) are left to numpy: libm rounds them differently.

The C is a CPython extension function (arrays arrive through the buffer protocol: no
``ctypes`` pointer objects per call), built by the runtime's
``kernel_build.build_shared_object`` (installed with :func:`set_builder`), so it is cached
as cudasim's objects are: content-addressed under
tdflow's private cache dir, MAC-checked before it is loaded, loaded from a process-private
copy of the checked bytes. No compiler, no Python headers, a failed build, or
``TDFLOW_NATIVE=0`` all mean numpy, which gives the same values.

>>> from tdflow.dialect.formula.expr import Input, exp, where
>>> src = c_source(where(Input(0) > 0, Input(1), 0), ("f32", "f32"), "f32", "m")
>>> "(x0 > tdf_f32(0x0u))" in src
True
>>> c_source(exp(Input(0)), ("f32",), "f32", "m") is None   # libm's exp is not numpy's
True
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, Select, Unary
from tdflow.dialect.formula.types import compute_dtype, infer_dtypes, operand_dtype
from tdflow.lowering import elementwise_native_build as nb
from tdflow.lowering.elementwise_layout import broadcast_layout
from tdflow.lowering.elementwise_native_c import KERNEL, METHOD, PRELUDE, TAIL

__all__ = ["EXACT_BINARY", "EXACT_UNARY", "MIN_ELEMENTS", "NATIVE_FLAGS", "USE_NATIVE",
           "bound_native", "build_extension", "builder_installed", "c_module", "c_source",
           "extension_once", "native_enabled", "named_extension", "native_kernel", "native_kernels", "set_builder",
           "with_native"]

#: Arrays smaller than this stay on numpy: the call is cheap either way, and a first use
#: would otherwise pay a compiler run for an expression evaluated once on a few values.
MIN_ELEMENTS = 4096
#: False: numpy only (read at every call; benches and tests compare both paths).
USE_NATIVE = True
#: Exact IEEE arithmetic: no fast math, no contraction into FMA; ``-fno-math-errno`` only
#: lets ``sqrt`` be the instruction (the value is the same correctly rounded root), and
#: ``-fno-trapping-math`` lets both arms of a ``?:`` be computed and blended (vectorized)
#: instead of branched on: the values are the same, only the FP status flags (which numpy
#: turns into RuntimeWarnings) are not kept.
NATIVE_FLAGS = ("-O2", "-fno-fast-math", "-ffp-contract=off", "-fno-math-errno",
                "-fno-trapping-math", "-ftree-vectorize", "-fvect-cost-model=dynamic")

_C_TYPES = {"f32": ("float", "uint32_t", "f"), "f64": ("double", "uint64_t", ""),
            "i1": ("unsigned char", "", "")}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_COMPARE = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_LOGIC = {"and": "&", "or": "|", "xor": "^"}
#: The ops the C loop renders (exactly rounded, or exact): a ``Select`` too. Anything else in
#: an expression (``exp``, ``tanh``, ``erf``, ``pow``...) is numpy's; see
#: :mod:`tdflow.lowering.elementwise_segments` for expressions mixing both.
EXACT_UNARY = frozenset({"neg", "abs", "sqrt", "floor", "ceil", "round", "not", "isnan",
                         "isinf"})
EXACT_BINARY = frozenset({*_ARITH, *_COMPARE, *_LOGIC, "max", "min"})


def native_enabled() -> bool:
    """False when ``TDFLOW_NATIVE`` is ``0``/``false``/``no`` (then numpy runs everything).

    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, TDFLOW_NATIVE="0"):
    ...     native_enabled()
    False
    """
    return os.environ.get("TDFLOW_NATIVE", "1").strip().lower() not in ("0", "false", "no")


def _const(value: Any, dt: str) -> str:
    """A literal of exactly the value numpy's renderer uses (cast to ``dt``), NaN payloads and
    signed zeros included: written as its bits."""
    if dt == "i1":
        return "1" if bool(value) else "0"
    ctype, utype, _ = _C_TYPES[dt]
    bits = np.asarray(value).astype(np.float32 if dt == "f32" else np.float64)
    u = int(bits.view(np.uint32 if dt == "f32" else np.uint64)[()])
    return f"tdf_{dt}({u:#x}u{'ll' if dt == 'f64' else ''})"


def c_source(expr: Expr | None, in_dtypes: Sequence[str], out_dtype: str,
             module: str, rows: frozenset[int] = frozenset(),
             cols: frozenset[int] = frozenset()) -> str | None:
    """The C source of extension module ``module`` evaluating ``expr``, or ``None`` when the
    expression has an op or a type the native path does not render exactly.

    The module's one function ``run(in0, ..., out[, m])`` takes C-contiguous buffers (the
    inputs ``expr`` reads, in order, then the output) of the output's number of elements,
    except the inputs in ``rows`` and ``cols``; the output is rows of ``m`` elements. An input
    in ``rows`` is whole rows read in turn, repeating over the output (numpy's broadcast of a
    trailing-dims operand, as a last-axis bias is); one in ``cols`` is one value a row,
    repeating over the rows (a layer norm's ``(..., 1)`` mean, a batch norm's ``(1, C, 1, 1)``
    scale: :func:`~tdflow.lowering.elementwise_layout.broadcast_layout` says which broadcasts
    these are). Without ``m``, the rows inputs are one row each and the cols inputs one value
    for each row, all of one length (``m`` follows from them). It returns ``False``, having
    done nothing, when the buffers do not fit (not C-contiguous, partly overlapping the
    output, sizes that are not whole periods).

    >>> from tdflow.dialect.formula.expr import Input
    >>> "outr[i] = (float)(t0);" in c_source(Input(0) * Input(1), ("f32", "f32"), "f32", "m")
    True
    """
    return c_module([(expr, in_dtypes, out_dtype, rows, cols)], module, ["run"])


#: One kernel of a module: (expression, input types, output type, inputs broadcast as rows[,
#: inputs broadcast as columns]).
KernelSpec = (tuple[Expr | None, Sequence[str], str, frozenset[int]]
              | tuple[Expr | None, Sequence[str], str, frozenset[int], frozenset[int]])


def c_module(kernels: Sequence[KernelSpec], module: str, names: Sequence[str]) -> str | None:
    """The C source of extension module ``module`` with one function per kernel, called
    ``names[k]`` (each as :func:`c_source`'s ``run``), or ``None`` when any kernel is not
    rendered natively.

    >>> from tdflow.dialect.formula.expr import Input
    >>> src = c_module([(Input(0) + 1.0, ["f32"], "f32", frozenset()),
    ...                 (Input(0) * Input(1), ["f64", "f64"], "f64", frozenset())], "m", ["a", "b"])
    >>> '"a", (PyCFunction)' in src and '"b", (PyCFunction)' in src
    True
    """
    parts = []
    for k, (spec, name) in enumerate(zip(kernels, names)):
        fields = _kernel_fields(*spec)
        if fields is None:
            return None
        parts.append(KERNEL.format(k=k, name=name, **fields))
    methods = "".join(METHOD.format(k=k, name=name) for k, name in enumerate(names))
    return PRELUDE.format() + "".join(parts) + TAIL.format(module=module, methods=methods)


def _kernel_fields(expr: Expr | None, in_dtypes: Sequence[str], out_dtype: str,
                   rows: frozenset[int] = frozenset(),
                   cols: frozenset[int] = frozenset()) -> dict[str, Any] | None:
    """The fields of :data:`KERNEL` for one expression, or ``None`` (not rendered natively)."""
    if expr is None:
        return None
    in_dtypes = tuple(in_dtypes)
    if any(d not in _C_TYPES for d in (*in_dtypes, out_dtype)):
        return None
    try:
        types = infer_dtypes(expr, in_dtypes, compute_dtype(out_dtype))
    except (KeyError, TypeError, ValueError):
        return None
    if any(t not in _C_TYPES for t in types.values()):
        return None  # an integer or half value inside (a cast): numpy's conversions
    floats = {t for t in (*types.values(), out_dtype) if t != "i1"}
    if len(floats) > 1 or types.get(expr) != out_dtype:
        return None  # mixed precisions or a cast on store: numpy's conversions stay numpy's
    context = compute_dtype(out_dtype)
    used = sorted({n.index for n in _walk(expr) if isinstance(n, Input)})
    if not used:
        return None
    lines: list[str] = []
    names: dict[Expr, str] = {}

    def emit(n: Expr) -> str | None:
        if n in names:
            return names[n]
        if isinstance(n, Input):
            names[n] = f"x{n.index}"  # loaded up front: a load under a ?: blocks vectorizing
            return names[n]
        if isinstance(n, Const):
            return None  # a constant root or a bare constant operand: handled by the parent
        opnd = operand_dtype(n, types, context)
        args = []
        for c in n.children():
            if isinstance(c, Const):
                args.append(_const(c.value, types[n] if isinstance(n, Select) else opnd))
            else:
                a = emit(c)
                if a is None:
                    return None
                args.append(a)
        code = _node(n, args, types[n], opnd)
        if code is None:
            return None
        name = f"t{len(lines)}"
        lines.append(f"    const {_C_TYPES[types[n]][0]} {name} = {code};")
        names[n] = name
        return name

    root = emit(expr)
    if root is None:
        return None
    params = ", ".join(f"const {_C_TYPES[in_dtypes[k]][0]} *in{k}" for k in used)
    loads = [f"      const {_C_TYPES[in_dtypes[k]][0]} x{k} = in{k}r[i];" for k in used if k not in cols]
    # a broadcast input's place in its period (see KERNEL); a per-row value is read once a
    # row, outside the inner loop
    state = "\n".join(f"  Py_ssize_t j{k} = 0;" for k in used if k in rows or k in cols)
    offsets = "\n".join(
        f"    const {_C_TYPES[in_dtypes[k]][0]} x{k} = in{k}[j{k}];" if k in cols
        else f"    const {_C_TYPES[in_dtypes[k]][0]} *in{k}r = in{k} + {f'j{k}' if k in rows else 'r'} * m;"
        for k in used)
    advance = "\n".join(f"    if (++j{k} == per[{pos}]) j{k} = 0;"
                         for pos, k in enumerate(used) if k in rows or k in cols)
    body = "\n".join(loads + lines)
    out_c = _C_TYPES[out_dtype][0]
    return dict(params=params, out_c=out_c, body=body, root=root, n_args=len(used) + 1,
                offsets=offsets, state=state, advance=advance,
                rows=", ".join("1" if k in rows else "2" if k in cols else "0" for k in used) + ", 0",
                views=_views(used, in_dtypes, out_dtype), call=", ".join(
                    [f"({_C_TYPES[in_dtypes[k]][0]} *)v[{j}].buf" for j, k in enumerate(used)]
                    + [f"({out_c} *)v[{len(used)}].buf"]))


def _walk(expr: Expr) -> list[Expr]:
    seen, stack, out = set(), [expr], []
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(n.children())
    return out


def _node(n: Expr, args: list[str], dt: str, opnd: str) -> str | None:
    """One node's C expression, or ``None`` for an op the native path leaves to numpy."""
    if dt not in _C_TYPES or opnd not in _C_TYPES:
        return None
    if isinstance(n, Select):
        if dt == "i1" and opnd != "i1":
            return None
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if opnd == "i1" and not (isinstance(n, Binary) and (n.op in _LOGIC or n.op in _COMPARE)
                             or isinstance(n, Unary) and n.op == "not"):
        return None  # arithmetic on booleans: numpy's bool loops, not C's int promotion
    suffix = _C_TYPES[opnd][2]
    if isinstance(n, Unary):
        (a,) = args
        if n.op == "not":
            return f"(unsigned char)!{a}"
        if opnd == "i1":
            return None
        if n.op == "isnan":
            return f"(unsigned char)({a} != {a})"
        if n.op == "isinf":
            return f"(unsigned char)(fabs{suffix}({a}) == tdf_inf_{opnd}())"
        simple = {"neg": f"tdf_neg_{opnd}({a})", "abs": f"tdf_abs_{opnd}({a})", "sqrt": f"sqrt{suffix}({a})",
                  "floor": f"floor{suffix}({a})", "ceil": f"ceil{suffix}({a})",
                  "round": f"rint{suffix}({a})"}
        return simple.get(n.op)
    if isinstance(n, Binary):
        a, b = args
        if n.op in _COMPARE:
            return f"(unsigned char)({a} {_COMPARE[n.op]} {b})"
        if n.op in _LOGIC:
            return f"(unsigned char)({a} {_LOGIC[n.op]} {b})" if opnd == "i1" else None
        if opnd == "i1":
            return None
        if n.op in ("add", "mul"):
            return f"tdf_{n.op}_{opnd}({a}, {b})"
        if n.op in _ARITH:
            return f"({a} {_ARITH[n.op]} {b})"
        if n.op in ("max", "min"):
            return f"tdf_{n.op}_{opnd}({a}, {b})"
    return None


def _views(used: list[int], in_dtypes: tuple[str, ...], out_dtype: str) -> str:
    sizes = [np.dtype(_NP[in_dtypes[k]]).itemsize for k in used] + [np.dtype(_NP[out_dtype]).itemsize]
    return ", ".join(map(str, sizes))


_NP = {"f32": np.float32, "f64": np.float64, "i1": np.bool_}



#: kept for callers that serialise with the builds of older versions; the builds' own state
#: is in elementwise_native_build
_lock = threading.Lock()


def _fresh_lock_after_fork() -> None:
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_lock_after_fork)


def native_kernel(expr: Expr, in_dtypes: Sequence[str], out_dtype: str,
                  rows: frozenset[int] = frozenset(), cols: frozenset[int] = frozenset(),
                  wait: bool = False) -> Callable[..., Any] | None:
    """``run(*used_inputs, out) -> bool`` evaluating ``expr`` natively (built, or loaded from
    the cache, on first use; ``rows``/``cols``: the inputs broadcast as rows or as columns,
    see :func:`c_source`),
    or ``None`` when the expression is not rendered natively or no build is possible (no
    compiler, no Python headers, native off): callers use numpy then.

    >>> from tdflow.dialect.formula.expr import Input
    >>> run = native_kernel(Input(0) * 2 + Input(1), ["f32", "f32"], "f32")
    >>> x = np.arange(4, dtype=np.float32); out = np.empty(4, np.float32)
    >>> run is None or (run(x, x, out), out.tolist())[1] == [0.0, 3.0, 6.0, 9.0]
    True
    """
    fns = native_kernels([(expr, in_dtypes, out_dtype, rows, cols)], wait)
    return None if fns is None else fns[0]


def native_kernels(kernels: Sequence[KernelSpec],
                   wait: bool = False) -> list[Callable[..., Any]] | None:
    """The ``run`` functions of several kernels (each as :func:`native_kernel`'s) built as one
    module, one compiler run; ``None`` when any is not rendered natively or no build is
    possible. A module neither loaded nor cached is built on a pool, side by side with the
    others asked for meanwhile: until it is ready the functions are stand-ins that wait for
    it on their first call, or refuse (``False``) under ``TDFLOW_NATIVE_BUILDS=background``
    (see :mod:`~tdflow.lowering.elementwise_native_build`); ``wait``: the build's own answer.

    >>> from tdflow.dialect.formula.expr import Input
    >>> fns = native_kernels([(Input(0) + 1.0, ["f32"], "f32", frozenset()),
    ...                       (Input(0) * Input(1), ["f32", "f32"], "f32", frozenset())])
    >>> x = np.arange(4, dtype=np.float32); out = np.empty(4, np.float32)
    >>> fns is None or (fns[1](x, x, out), out.tolist())[1] == [0.0, 1.0, 4.0, 9.0]
    True
    """
    if not native_enabled() or not kernels:
        return None
    names = ["run"] if len(kernels) == 1 else [f"run{k}" for k in range(len(kernels))]
    probe = c_module(kernels, "tdf_ew", names)
    if probe is None:
        return None
    module = f"tdf_ew_{hashlib.sha256(probe.encode()).hexdigest()[:24]}"
    # started at once, on the pool (this plan's other modules build beside it): stand-ins
    # until it is ready, see elementwise_native_build
    return nb.request(module, _builder, lambda: c_module(kernels, module, names), module, names,
                      NATIVE_FLAGS, wait)


#: ``build(source, flags) -> Path`` of a verified shared object: the runtime's cached
#: builder (``kernel_build.build_shared_object``), installed by the runtime's CPU kernels
#: (:func:`set_builder`), since the lowering never imports the runtime. None: numpy only.
_builder: Callable[[str, Sequence[str]], Path] | None = None


def set_builder(build: Callable[[str, Sequence[str]], Path] | None) -> None:
    """Install the function that compiles (and caches) a shared object from C++ source.

    >>> set_builder(_builder)  # the runtime's CPU kernels install kernel_build's
    """
    global _builder
    _builder = build


def bound_native(expr: Expr, in_dtypes: Sequence[str], out_dtype: str,
                 in_shapes: Sequence[tuple[int, ...] | None],
                 out_shape: tuple[int, ...]) -> Callable[..., bool] | None:
    """``run(inputs, out) -> bool``: ``expr`` on the native loop for inputs of ``in_shapes``
    into an output of ``out_shape``, all fixed in advance (a compiled plan's launch): the
    layout is worked out and the kernel built here, once, so a call only passes the buffers
    (``False``, nothing done, when the loop refuses them or the native path is switched off:
    the caller runs numpy then, the same values). ``None`` when the expression has no native
    form, the output is small (:data:`MIN_ELEMENTS`), the broadcast is not one
    :func:`broadcast_layout` reads, or no build is possible. Single-op expressions count too:
    a channel broadcast is 2-3x faster in the loop than in numpy's ufunc.

    >>> from tdflow.dialect.formula.expr import Input
    >>> run = bound_native(Input(0) * Input(1), ["f32", "f32"], "f32", [(64, 8, 4, 4), (8, 1, 1)],
    ...                    (64, 8, 4, 4))
    >>> x, c = np.ones((64, 8, 4, 4), np.float32), np.arange(8, dtype=np.float32).reshape(8, 1, 1)
    >>> out = np.empty_like(x)
    >>> run is None or (run([x, c], out) and out[1, :, 0, 0].tolist() == list(range(8)))
    True
    """
    try:
        if c_source(expr, in_dtypes, out_dtype, "probe") is None:
            return None
    except (KeyError, TypeError, ValueError):  # a node this renderer does not know: numpy's
        return None
    used = sorted({n.index for n in _walk(expr) if isinstance(n, Input)})
    if any(k >= len(in_shapes) or in_shapes[k] is None for k in used):
        return None
    out_shape = tuple(out_shape)
    if math.prod(out_shape) < MIN_ELEMENTS:
        return None
    layout = broadcast_layout(out_shape, [tuple(in_shapes[k]) for k in used])  # type: ignore[arg-type]
    if layout is None:
        return None
    fn = native_kernel(expr, in_dtypes, out_dtype, frozenset(used[j] for j in layout[0]),
                       frozenset(used[j] for j in layout[1]))
    if fn is None:
        return None
    m = layout[2]
    if used == [0, 1]:
        def run2(inputs: Sequence[Any], out: Any) -> bool:
            return USE_NATIVE and out is not None and fn(inputs[0], inputs[1], out, m)

        return run2

    def run(inputs: Sequence[Any], out: Any) -> bool:
        return USE_NATIVE and out is not None and fn(*[inputs[k] for k in used], out, m)

    return run


def with_native(run: Callable[..., np.ndarray], expr: Expr, in_dtypes: Sequence[str],
                out_dtype: str) -> Callable[..., np.ndarray]:
    """``run`` (a rendered numpy program's ``run(inputs, out=None)``) with the native loop in
    front: taken when every input ``expr`` reads is an ndarray of its declared type, the
    largest of at least :data:`MIN_ELEMENTS` elements and the others of its shape or broadcast
    over it as :func:`~tdflow.lowering.elementwise_layout.broadcast_layout` reads (trailing
    rows such as a last-axis bias; one value a row such as a per-row mean or a per-channel
    scale), C-contiguous, and ``out`` (if given) is of that shape and the output type,
    overlapping no input except in place. Anything else, or no native build, runs ``run``:
    the values are the same.

    >>> from tdflow.dialect.formula.expr import Input
    >>> numpy_only = lambda inputs, out=None: "numpy"
    >>> run = with_native(numpy_only, Input(0) * 2 + Input(1), ["f32", "f32"], "f32")
    >>> run([np.ones(3, np.float32)] * 2)     # small: numpy
    'numpy'
    >>> x = np.ones((2, 8192), np.float32)
    >>> out = run([x, x[0]])                  # native (or "numpy" where it cannot be built)
    >>> isinstance(out, str) or bool((out == 3).all())
    True
    """
    try:
        if c_source(expr, in_dtypes, out_dtype, "probe") is None:
            return run
    except (KeyError, TypeError, ValueError):  # a node this renderer does not know: numpy's
        return run
    used = sorted({n.index for n in _walk(expr) if isinstance(n, Input)})
    want = [np.dtype(_NP[in_dtypes[k]]) for k in used]
    np_out = np.dtype(_NP[out_dtype])
    # (broadcast rows, broadcast columns) -> kernel, built on first use
    kernels: dict[tuple[frozenset[int], frozenset[int]], Any] = {}
    # the inputs' shapes -> (rows, per-row inputs, row length) or None (numpy's broadcast)
    layouts: dict[tuple[tuple[int, ...], ...], Any] = {}

    def run_native(inputs: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        if not USE_NATIVE:
            return run(inputs, out)
        args = [inputs[k] for k in used]
        full = args[0]
        for a, dt in zip(args, want):
            if type(a) is not np.ndarray or a.dtype != dt:
                return run(inputs, out)
            if (a.ndim, a.size) > (full.ndim, full.size):
                full = a
        shape = full.shape
        if full.size < MIN_ELEMENTS:
            return run(inputs, out)
        shapes = tuple(a.shape for a in args)
        layout = layouts.get(shapes, False)
        if layout is False:  # worked out once per shapes (10 us of Python)
            found = broadcast_layout(shape, shapes)
            layout = layouts[shapes] = None if found is None else (
                frozenset(used[j] for j in found[0]), frozenset(used[j] for j in found[1]),
                found[2])
        if layout is None:
            return run(inputs, out)
        rows, cols, m = layout
        if out is not None and (type(out) is not np.ndarray or out.shape != shape
                                or out.dtype != np_out):
            return run(inputs, out)
        fn = kernels.get((rows, cols), False)
        if fn is False:
            fn = kernels[rows, cols] = native_kernel(expr, in_dtypes, out_dtype, rows, cols)
        if fn is not None:
            dest = np.empty(shape, np_out) if out is None else out
            if fn(*args, dest, m):
                return dest
        return run(inputs, out)

    return run_native


def build_extension(source: str | None, module: str) -> Callable[..., Any] | None:
    """The ``run`` function of the CPython extension ``module`` compiled from ``source`` with
    :data:`NATIVE_FLAGS` by the installed builder (cached, MAC-checked), or ``None`` when no
    build is possible: how other exact native loops (:mod:`tdflow.lowering.erf_native`) are
    built like the fused ones.

    >>> build_extension(None, "tdf_doc_none") is None
    True
    """
    mod = nb.load_or_build(_builder, source, module, NATIVE_FLAGS)
    return None if mod is None else mod.run


def named_extension(prefix: str, made_of: bytes,
                    source: Callable[[str], str]) -> tuple[Callable[..., Any] | None, bool]:
    """``(run, final)`` of a hand-written extension: the module is named ``prefix`` plus a digest
    of what its source is ``made_of`` (a changed template or table is a new module, never a stale
    cached one), ``source(module)`` its C++, built by :func:`build_extension`. ``final`` says
    whether the answer may be remembered: ``False`` when it is ``None`` only because no builder
    is installed yet (a later call may build it). Built as :func:`native_kernels`' modules are
(on the pool; ``run`` a stand-in until it is ready).

    >>> named_extension("tdf_doc", b"x", lambda module: None)[0] is None
    True
    """
    module = f"{prefix}_{hashlib.sha256(made_of).hexdigest()[:24]}"
    fns = nb.request(module, _builder, lambda: source(module), module, ["run"], NATIVE_FLAGS)
    return (None if fns is None else fns[0]), fns is not None or builder_installed()



def extension_once(built: list, lock: Any, switched_on: bool, prefix: str, made_of: bytes,
                   source: Callable[[str], str]) -> Callable[..., Any] | None:
    """:func:`named_extension`'s ``run``, remembered in the caller's one-slot list ``built``
    (under ``lock``) once the answer is final: the getter of a module-level hand-written
    extension (Winograd's transforms, the row loops). ``None`` when ``switched_on`` is false or
    native code is off; a ``None`` only because no builder is installed yet is not remembered.

    >>> import threading
    >>> extension_once([], threading.Lock(), False, "tdf_doc", b"x", str) is None
    True
    """
    if not switched_on or not native_enabled():
        return None
    if built:
        return built[0]
    with lock:
        if built:
            return built[0]
        run, final = named_extension(prefix, made_of, source)
        if final:  # else: try again once a builder is installed
            built.append(run)
        return run

def builder_installed() -> bool:
    """Whether a builder is installed (the runtime's CPU kernels install one): before that,
    native loops are not built and a ``None`` from a build says nothing about later ones.

    >>> isinstance(builder_installed(), bool)
    True
    """
    return _builder is not None
