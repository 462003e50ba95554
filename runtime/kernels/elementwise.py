"""CPU kernels of the elementwise ops that are not derived from a formula: ``bias_add``,
``add_n`` and ``fused_elementwise`` (the formula ops' kernels come from :mod:`.formula`).

``tdflow.fused_elementwise`` runs a fused expression: ``attrs["expr"]`` is an
:class:`~tdflow.dialect.formula.expr.Expr` (already bound) over the inputs, and the optional
``attrs["out_dtype"]`` fixes the result type (default: input 0's).

>>> import numpy as np
>>> bias_add({"axis": 1}, [np.zeros((2, 2), np.float32), np.array([1, 2], np.float32)],
...          [None])[0].tolist()
[[1.0, 2.0], [1.0, 2.0]]
>>> add_n({}, [np.ones(2, np.float32), np.full(2, 2, np.float32), np.full(2, 3, np.float32)],
...       [None])[0].tolist()
[6.0, 6.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import DTYPE_NAMES
from tdflow.dialect.formula.expr import Expr
from tdflow.dialect.types import dtype_from_numpy
from tdflow.lowering import elementwise_native
from tdflow.lowering.elementwise_numpy import render_numpy
from tdflow.runtime.kernels._util import NUMERIC
from tdflow.runtime.kernels.registry import (
    all_same_dtype,
    register_kernel,
    same_dtype,
)

ALL_DTYPES = frozenset(DTYPE_NAMES)


def _build_native(source: str, flags: Sequence[str]) -> Any:
    """Fused expressions' native loops are built and cached as cudasim's objects are."""
    from tdflow.runtime.backends.kernel_build import build_shared_object

    return build_shared_object(source, flags)


def _cached_native(source: str, flags: Sequence[str]) -> Any:
    """The built object's path when it is cached (no compiler run), else ``None``."""
    from tdflow.runtime.backends.kernel_build import cached_shared_object

    return cached_shared_object(source, flags)


_build_native.cached = _cached_native  # type: ignore[attr-defined]
elementwise_native.set_builder(_build_native)  # the lowering cannot import the runtime


def _mlir(dt: np.dtype) -> str:
    return dtype_from_numpy(dt)


@register_kernel("tdflow.bias_add", "cpu", dtypes=NUMERIC, match=same_dtype(1), inplace={0: 0})
def bias_add(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
             outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """out = a + b broadcast along ``axis`` (b is 1-D of length a.shape[axis])."""
    a, b = inputs[0], inputs[1]
    axis = attrs["axis"]  # TDF_AxisAttr of a: non-negative, in range
    if b.shape != (a.shape[axis],):
        raise ValueError(f"tdflow.bias_add: b of shape {b.shape} does not match axis {axis} "
                         f"of a with shape {a.shape}")
    shape = [1] * a.ndim
    shape[axis] = b.shape[0]
    out = outs[0]
    if out is None:
        out = np.empty(a.shape, a.dtype)
    return [np.add(a, b.reshape(shape), out=out, casting="unsafe")]


def _bind_bias_add(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                   dead: frozenset[int] = frozenset()) -> Any:
    """``bias_add`` for one launch of a compiled plan (the executor's ``bind``): the shapes
    are checked once, the bias's broadcast shape made once; the same ``np.add``."""
    (sa, da), (sb, db) = ins[0], ins[1]
    axis = attrs["axis"]
    if len(outs) != 1 or not 0 <= axis < len(sa) or sb != (sa[axis],):
        return None  # the general path raises the error
    shape = tuple(sb[0] if i == axis else 1 for i in range(len(sa)))
    if axis == len(sa) - 1 and da == db == outs[0][1]:
        # a last-axis bias broadcasts as it is, and one type needs no casting rule: the
        # same sums, without the reshape and keyword a general call makes
        def last(_attrs: Any, inputs: Sequence[np.ndarray], outs: Sequence[Any]) -> list[Any]:
            np.add(inputs[0], inputs[1], out=outs[0])
            return outs

        return last

    def run(_attrs: Any, inputs: Sequence[np.ndarray], outs: Sequence[Any]) -> list[np.ndarray]:
        np.add(inputs[0], inputs[1].reshape(shape), out=outs[0], casting="unsafe")
        return outs

    return run


bias_add.bind = _bind_bias_add  # type: ignore[attr-defined]

_fused_cache: dict[Any, Any] = {}


_parsed: dict[str, Expr] = {}


def _parsed_expr(text: str) -> Expr:
    expr = _parsed.get(text)
    if expr is None:
        from tdflow.dialect.formula.text import parse_expr

        if len(_parsed) >= 4096:
            _parsed.clear()
        expr = _parsed[text] = parse_expr(text)
    return expr


@register_kernel("tdflow.fused_elementwise", "cpu", dtypes=ALL_DTYPES, inplace={0: 0})
def fused_elementwise(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
                      outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """Run ``attrs["expr"]`` (an Expr) over the inputs; ``attrs["out_dtype"]`` optional."""
    expr = attrs["expr"]
    if isinstance(expr, str):  # the IR's text form, as eager calls and gradients pass it
        expr = _parsed_expr(expr)
    if not isinstance(expr, Expr):
        raise TypeError(f"tdflow.fused_elementwise: attribute 'expr' must be an Expr (or its text), "
                        f"got {type(expr).__name__}")
    return [_fused_program(expr, attrs.get("out_dtype"),
                           tuple(a.dtype for a in inputs))(inputs, outs[0])]


def _fused_program(expr: Expr, out_dtype: str | None, dtypes: tuple[np.dtype, ...]) -> Any:
    """The rendered program's ``run(inputs, out)`` for these input types (cached)."""
    return _rendered(expr, out_dtype, dtypes).run


def _rendered(expr: Expr, out_dtype: str | None, dtypes: tuple[np.dtype, ...]) -> Any:
    """The rendered :class:`~tdflow.lowering.elementwise_numpy.NumpyProgram` (cached)."""
    key = (expr, out_dtype, dtypes)
    prog = _fused_cache.get(key)
    if prog is None:
        prog = _fused_cache[key] = render_numpy(expr, [_mlir(d) for d in dtypes], out_dtype)
    return prog


def _bind_fused(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                dead: frozenset[int] = frozenset()) -> Any:
    """``fused_elementwise`` for one launch of a compiled plan (the executor's ``bind``): the
    program for the launch's input types looked up once; the same program runs."""
    expr = attrs["expr"]
    if isinstance(expr, str):
        expr = _parsed_expr(expr)
    if not isinstance(expr, Expr) or len(outs) != 1 or any(s is None for s in ins):
        return None
    prog = _rendered(expr, attrs.get("out_dtype"), tuple(d for _, d in ins))
    run = prog.run
    # the launch's shapes are fixed: the native loop's layout and kernel are settled here,
    # once (the program's own check costs 2-3 us a call), and a one-op channel broadcast
    # (dy * gamma) takes the loop too
    native = None
    if outs[0][1] == np.dtype(_NP_OUT.get(prog.out_dtype, "O")):
        native = elementwise_native.bound_native(prog.expr, prog.in_dtypes, prog.out_dtype,
                                                 [s for s, _ in ins], outs[0][0])
    if native is not None:
        def fused_native(_attrs: Any, inputs: Sequence[np.ndarray],
                         outs: Sequence[Any]) -> Any:
            if native(inputs, outs[0]):
                return outs
            return [run(inputs, outs[0])]

        return fused_native

    def fused(_attrs: Any, inputs: Sequence[np.ndarray], outs: Sequence[Any]) -> list[np.ndarray]:
        return [run(inputs, outs[0])]

    return fused


#: the native loop's output types (its kernels write these, with no cast on store)
_NP_OUT = {"f32": "float32", "f64": "float64", "i1": "bool"}


fused_elementwise.bind = _bind_fused  # type: ignore[attr-defined]


@register_kernel("tdflow.add_n", "cpu", dtypes=NUMERIC,
                 match=all_same_dtype(), inplace={0: 0})
def add_n(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
          outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
    """out = in[0] + in[1] + ... , added left to right in the inputs' type."""
    if len(inputs) < 2:
        raise ValueError(f"tdflow.add_n: needs at least 2 inputs, got {len(inputs)}")
    first = inputs[0]
    for i, a in enumerate(inputs[1:], 1):
        if a.shape != first.shape:
            raise ValueError(f"tdflow.add_n: input {i} has shape {a.shape} but input 0 has "
                             f"{first.shape}")
    out = outs[0] if outs else None
    if out is None:
        out = np.empty(first.shape, first.dtype)
    np.add(first, inputs[1], out=out)
    for a in inputs[2:]:
        np.add(out, a, out=out)
    return [out]
