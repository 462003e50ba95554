"""Matrix products: ``matmul`` (2-D, or N-D ``a`` against 2-D ``b``), ``batch_matmul`` and
``matmul_bias`` (a product plus a last-axis bias in one launch).

``out = alpha * op(a) @ op(b) (+ _add_to_output)`` with ``op`` transposing the last two dims when
``transpose_a``/``transpose_b`` is set. Output 0 may be the ``_add_to_output`` buffer
(``inplace={0: 2}``), which is how a gradient accumulates into an existing one. Half inputs
multiply in f32 (numpy has no f16 BLAS) and round once.

>>> import numpy as np
>>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete  # defaults
>>> matmul(complete("tdflow.matmul", {"transpose_b": True, "alpha": 2.0}), [a, a], [None])[0].tolist()
[[10.0, 28.0], [28.0, 100.0]]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.runtime.kernels._blas import blas_scoped_launch
from tdflow.runtime.kernels._util import NUMERIC, acc_dtype, operands
from tdflow.runtime.kernels.registry import register_kernel, same_dtype

# batch products whose transposed b is copied to its plain layout first (see _product)
_COPY_BT = (np.dtype(np.float32), np.dtype(np.float64))
_COPY_BT_MAX = 1 << 22


def _product(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any],
             op: str, batched: bool) -> list[np.ndarray]:
    if (len(inputs) == 2 or len(inputs) == 3 and inputs[2] is None) \
            and not attrs["transpose_a"] and not attrs["transpose_b"] and attrs["alpha"] == 1.0:
        # The common case (eager calls, forward layers) without the general bookkeeping.
        a, b = inputs[0], inputs[1]
        out = outs[0] if outs else None
        if (a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and a.dtype != np.float16
                and (out is None or out.dtype == a.dtype)):
            return [np.matmul(a, b, out=out)]
    a, b, add = operands(inputs, attrs, 3)
    ta, tb = bool(attrs["transpose_a"]), bool(attrs["transpose_b"])
    alpha = float(attrs["alpha"])
    if a.ndim < 2 or b.ndim < 2 or (not batched and b.ndim != 2):
        raise ValueError(f"{op}: operand ranks {a.ndim} and {b.ndim} are not supported "
                         f"({'both >= 2' if batched else 'a >= 2, b == 2'} expected)")
    if ta:
        a = np.swapaxes(a, -1, -2)
    if tb:
        b = np.swapaxes(b, -1, -2)
        if b.ndim > 2 and b.dtype in _COPY_BT and b.size <= _COPY_BT_MAX:
            # a stack of small products (attention's q @ k^T): OpenBLAS's transposed-b
            # kernel takes ~1.4x the plain one there (64 of 64x32 @ 32x64 f32: 287 vs 201 us
            # with this copy); the same multiply-adds in the same order, so the same bits
            # (tests/runtime/test_kernels_linalg.py compares them)
            b = np.ascontiguousarray(b)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}: inner dimensions differ: a is {a.shape[-2:]} and b is "
                         f"{b.shape[-2:]} after transpose_a={ta}, transpose_b={tb}")
    out = outs[0] if outs else None
    dt = a.dtype
    wide = acc_dtype(dt)
    if wide != dt:
        a, b = a.astype(wide), b.astype(wide)
    direct = (out is not None and wide == dt and out.dtype == dt and out.flags.writeable
              and not (add is not None and np.may_share_memory(out, add)))
    if direct:
        prod = np.matmul(a, b, out=out)
    else:
        prod = np.matmul(a, b)
    if alpha != 1.0:
        prod *= prod.dtype.type(alpha)
    if add is not None:
        if add is out or (out is not None and np.may_share_memory(out, add)):
            np.add(out, prod, out=out, casting="unsafe")
            return [out]
        prod += add
    if out is None:
        return [prod if prod.dtype == dt else prod.astype(dt)]
    if prod is not out:
        np.copyto(out, prod, casting="unsafe")
    return [out]


def plain_product(attrs: Mapping[str, Any], inputs: Sequence[Any]) -> Any:
    """``run(inputs, out)`` doing exactly ``np.matmul(a, b, out=out)`` when this call of the
    matmul kernel is the plain product (no transpose, ``alpha`` 1, nothing to accumulate, 2-D
    operands of one non-half dtype), which is what the kernel's common case does; else
    ``None``. Eager calls on small inputs run it without the kernel's generic handling.

    >>> a = np.ones((2, 2), np.float32); out = np.empty_like(a)
    >>> run = plain_product({"transpose_a": False, "transpose_b": False, "alpha": 1.0}, [a, a])
    >>> run([a, a], out); out.tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    if attrs["transpose_a"] or attrs["transpose_b"] or attrs["alpha"] != 1.0:
        return None
    if len(inputs) > 2 and inputs[2] is not None:
        return None
    a, b = inputs[0], inputs[1]
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype == np.float16:
        return None
    if a.dtype in _DOT_DTYPES and min(a.shape[0], a.shape[1], b.shape[1]) >= 2:
        return _dot
    return _plain


def _plain(inputs: Sequence[Any], out: np.ndarray) -> None:
    np.matmul(inputs[0], inputs[1], out=out)


# np.dot's call costs half of np.matmul's (0.5 against 1.0 µs on 4x4). For C-contiguous float
# matrices with every dimension at least 2 both end in the same cblas gemm call (row-major,
# no transpose, alpha 1, beta 0), so the bits are the same; a dimension of 1 takes other
# paths in each (gemv, a plain loop whose 0 + a*b turns -0.0 into +0.0), and a strided input
# may be a transposed gemm in matmul but a copy in dot: those keep np.matmul.
_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_np_dot = np.dot  # positional out: a keyword costs a fifth of the call


def _dot(inputs: Sequence[Any], out: np.ndarray) -> None:
    a, b = inputs[0], inputs[1]
    if a.flags.c_contiguous and b.flags.c_contiguous:
        try:
            _np_dot(a, b, out)  # refuses an out that is not C-contiguous (eager's is)
            return
        except ValueError:
            pass
    np.matmul(a, b, out=out)


#: Products of at most this many multiply-adds run on one BLAS thread in any case.
SMALL_PRODUCT = 65536 * 4


def bind_product(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                 dead: frozenset[int] = frozenset()) -> Any:
    """The kernel for one launch of a compiled plan (``Executor``'s ``bind`` protocol): for
    2-D operands of one non-half type, ``alpha`` 1 and nothing to accumulate, exactly the
    ``np.matmul(op(a), op(b), out=out)`` the kernel's general path makes (a transposed
    operand is a ``.T`` view: BLAS reads it transposed, nothing is copied); else ``None``.

    >>> f4 = np.dtype("f4")
    >>> run = bind_product({"transpose_a": True, "transpose_b": False, "alpha": 1.0},
    ...                    [((3, 2), f4), ((3, 2), f4)], [((2, 2), f4)])
    >>> a = np.arange(6, dtype=np.float32).reshape(3, 2)
    >>> run({}, [a, a], [np.empty((2, 2), np.float32)])[0].tolist()
    [[20.0, 26.0], [26.0, 35.0]]
    """
    if attrs["alpha"] != 1.0 or (len(ins) > 2 and ins[2] is not None) or len(outs) != 1:
        return None
    (sa, da), (sb, db), (_, do) = ins[0], ins[1], outs[0]
    if len(sa) != 2 or len(sb) != 2 or not da == db == do or da == np.float16:
        return None
    ta, tb = bool(attrs["transpose_a"]), bool(attrs["transpose_b"])
    if (sa[::-1] if ta else sa)[1] != (sb[::-1] if tb else sb)[0]:
        return None  # the general path raises the error naming the dims

    def nn(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        np.matmul(inputs[0], inputs[1], out=outs[0])
        return outs

    def tn(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        np.matmul(inputs[0].T, inputs[1], out=outs[0])
        return outs

    def nt(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        np.matmul(inputs[0], inputs[1].T, out=outs[0])
        return outs

    def tt(_attrs: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        np.matmul(inputs[0].T, inputs[1].T, out=outs[0])
        return outs

    run = ((nn, nt), (tn, tt))[ta][tb]
    m, k = sa[::-1] if ta else sa
    n = sb[0] if tb else sb[1]
    # OpenBLAS runs a product of at most SMP_THRESHOLD_MIN (65536) * GEMM_MULTITHREAD_THRESHOLD
    # (4, its build default) multiply-adds on the calling thread whatever its thread count
    # (interface/gemm.c): setting the count around such a call would only cost it ~1 us
    return run if m * n * k <= SMALL_PRODUCT else blas_scoped_launch(run)


def _with_plain(fn: Any) -> Any:
    fn.direct = plain_product  # read by the eager path; set before registration wraps fn
    fn.bind = bind_product  # read by the executor when it loads a plan
    return fn


@register_kernel("tdflow.matmul", "cpu", dtypes=NUMERIC, match=same_dtype(1, 2),
                 inplace={0: 2}, uses_blas=True)
@_with_plain
def matmul(attrs: Mapping[str, Any], inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
    """out = alpha * op(a) @ op(b) + _add_to_output."""
    return _product(attrs, inputs, outs, "tdflow.matmul", batched=False)


@register_kernel("tdflow.batch_matmul", "cpu", dtypes=NUMERIC, match=same_dtype(1, 2),
                 inplace={0: 2}, uses_blas=True)
def batch_matmul(attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> list[np.ndarray]:
    """Batched matmul over leading dims (numpy broadcasting of batch dims)."""
    return _product(attrs, inputs, outs, "tdflow.batch_matmul", batched=True)


def bind_matmul_bias(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
                     dead: frozenset[int] = frozenset()) -> Any:
    """``matmul_bias`` for one launch of a compiled plan: the bound product of
    :func:`bind_product`, then the bias added into its output, as ``bias_add``'s bound
    last-axis form does; ``None`` where either would take its general path.

    >>> f4 = np.dtype("f4")
    >>> run = bind_matmul_bias({"transpose_a": False, "transpose_b": False, "alpha": 1.0},
    ...                        [((2, 2), f4), ((2, 2), f4), ((2,), f4)], [((2, 2), f4)])
    >>> a = np.eye(2, dtype=np.float32); bias = np.array([1, -1], np.float32)
    >>> run({}, [a, a, bias], [np.empty((2, 2), np.float32)])[0].tolist()
    [[2.0, -1.0], [1.0, 0.0]]
    """
    if len(ins) != 3 or len(outs) != 1:
        return None
    (sb, db), (so, do) = ins[2], outs[0]
    if db != do or len(so) != 2 or sb != (so[1],):
        return None
    product = bind_product(attrs, ins[:2], outs, dead)
    if product is None:
        return None

    def run(attrs_: Any, inputs: Sequence[Any], outs: Sequence[Any]) -> list[np.ndarray]:
        out = product(attrs_, inputs, outs)[0]
        np.add(out, inputs[2], out=out)
        return outs

    return run


def _with_bind(fn: Any) -> Any:
    fn.bind = bind_matmul_bias  # set before registration wraps fn (the executor reads it)
    return fn


@register_kernel("tdflow.matmul_bias", "cpu", dtypes=NUMERIC, match=same_dtype(1, 2),
                 uses_blas=True)
@_with_bind
def matmul_bias(attrs: Mapping[str, Any], inputs: Sequence[Any],
                outs: Sequence[Any]) -> list[np.ndarray]:
    """out = alpha * op(a) @ op(b), then ``bias`` added along the last axis in place: the
    bits of ``matmul`` followed by ``bias_add(axis=1)``.

    >>> from tdflow.runtime.kernels.registry import complete_kernel_attrs as complete
    >>> a = np.eye(2, dtype=np.float32); bias = np.array([1, -1], np.float32)
    >>> matmul_bias(complete("tdflow.matmul_bias", {}), [a, a, bias], [None])[0].tolist()
    [[2.0, -1.0], [1.0, 0.0]]
    """
    bias = inputs[2]
    out = _product(attrs, inputs[:2], outs, "tdflow.matmul_bias", batched=False)[0]
    if bias.shape != out.shape[-1:]:
        raise ValueError(f"tdflow.matmul_bias: bias of shape {bias.shape} does not match the "
                         f"product's {out.shape}")
    # bias_add's own call on the product (its output in place, as the plan ran it)
    np.add(out, bias.reshape((1,) * (out.ndim - 1) + bias.shape), out=out, casting="unsafe")
    return [out]
