"""Functional functions written with other ops (OneFlow's C++ functors), by functor name.

A signature in ``signatures.yaml`` whose functor is registered here (``=> Mean``) calls the
function with an :class:`Ops` and the signature's parameters in order; everything it computes
goes through ops, so eager autograd records it like any op call.

>>> import numpy as np, tdflow
>>> F = tdflow.functional
>>> x = tdflow.tensor(np.arange(6.0).reshape(2, 3))
>>> F.mean(x).item(), F.mean(x, dim=[1]).numpy().tolist(), F.sum(x, dim=[0], keepdim=True).shape
(2.5, [1.0, 4.0], (1, 3))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tdflow.core.declarations import Declaring, declared_by, record

__all__ = ["Ops", "composite", "composite_for", "scalar_attrs"]

_COMPOSITES: dict[str, Callable[..., Any]] = {}


class Ops:
    """What a composite functor calls: ``ops.fn[mnemonic](...)`` is the op's default-signature
    function, ``ops.scalar[mnemonic]((tensor, scalar))`` a scalar op (``scalar_add``...).
    One per functional build, so functions built for different dialects never mix."""

    def __init__(self) -> None:
        self.fn: dict[str, Callable[..., Any]] = {}
        self.scalar: dict[str, Callable[[tuple], Any]] = {}


def composite(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a functor written with other ops: ``fn(ops, *args)`` with ``ops`` an
    :class:`Ops` and ``args`` the signature's parameters in order."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        if record("composite", (name, fn), getattr(fn, "__module__", None)):
            return fn  # a hooks module imported for a context: that context's
        _COMPOSITES[name] = fn
        return fn

    return deco


def composite_for(functor: str, context: Declaring | None = None) -> Callable[..., Any] | None:
    """The functor registered by :func:`composite` under ``functor`` — ``context``'s own (from
    its hooks modules) first — or ``None``.

    >>> composite_for("ScalarSub") is not None, composite_for("NoSuchFunctor") is None
    (True, True)
    """
    for name, fn in reversed(declared_by(context, "composite")):
        if name == functor:
            return fn
    return _COMPOSITES.get(functor)


def scalar_attrs(v: Any) -> tuple:
    """OneFlow's scalar-operand attributes for a Python number (has_int_operand, ...)."""
    if isinstance(v, float):
        return (False, True, 0, v)
    return (True, False, int(v), 0.0)


@composite("ScalarSub")
def _scalar_sub(ops, x, other):
    return ops.scalar["scalar_add"]((x, -other))


@composite("ScalarRSub")
def _scalar_rsub(ops, x, other):  # x is the scalar: x - other
    return ops.scalar["scalar_add"]((ops.fn["negative"](other), x))


def _reciprocal(v: float) -> float:
    """``1 / v`` with IEEE semantics: ``x * (1 / 0.0)`` must give ``x / 0`` (inf or nan)."""
    if v == 0:
        return math.copysign(math.inf, v) if isinstance(v, float) else math.inf
    return 1.0 / v


@composite("ScalarRDiv")
def _scalar_rdiv(ops, x, other):  # x / other with x a scalar
    return ops.scalar["scalar_mul"]((ops.fn["reciprocal"](other), x))


# -- reductions, layers and losses (OneFlow's functors of the same names) --------------------
def _axes(x: Any, dim: Any) -> list[int]:
    """``dim`` as a list of non-negative dims of ``x`` (``None``: every dim)."""
    rank = len(x.shape)
    if dim is None:
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = []
    for d in dims:
        if not -rank <= d < max(rank, 1):
            raise IndexError(f"dim {d} is out of range for a tensor of rank {rank}")
        out.append(d % rank if rank else 0)
    return out


@composite("ReduceSumWhole")
def _sum(ops, x, dim, keepdim):
    """``sum(x, dim=None, keepdim=False)``: reduce_sum over ``dim`` (every dim by default)."""
    return ops.fn["reduce_sum"](x, axis=_axes(x, dim), keepdims=keepdim)


@composite("ReduceMean")
def _mean(ops, x, dim, keepdim):
    """``mean(x, dim=None, keepdim=False)``: the sum over ``dim`` times 1/count, as OneFlow's
    ReduceMean functor computes it (so its gradient is reduce_sum's, scaled)."""
    axes = _axes(x, dim)
    count = 1
    for d in axes:
        count *= x.shape[d]
    total = ops.fn["reduce_sum"](x, axis=axes, keepdims=keepdim)
    return ops.scalar["scalar_mul"]((total, 1.0 / count if count else math.nan))


@composite("Linear")
def _linear(ops, x, weight, bias):
    """``linear(x, weight, bias=None)``: ``x @ weight.T + bias`` over the last dim of ``x``
    (PyTorch's and OneFlow's layout: ``weight`` is ``[out_features, in_features]``)."""
    if len(weight.shape) != 2:
        raise ValueError(f"linear: weight must be 2-D [out, in], got shape {list(weight.shape)}")
    lead = list(x.shape[:-1])
    flat = x if len(x.shape) == 2 else ops.fn["reshape"](x, shape=[-1, x.shape[-1]])
    y = ops.fn["matmul"](flat, weight, transpose_b=True)
    if bias is not None:
        y = ops.fn["bias_add"](y, bias, axis=1)
    if len(x.shape) != 2:
        y = ops.fn["reshape"](y, shape=lead + [weight.shape[0]])
    return y


_REDUCTIONS = ("mean", "sum", "none")


@composite("CrossEntropy")
def _cross_entropy(ops, input, target, reduction):  # noqa: A002 - PyTorch's parameter name
    """``cross_entropy(input [N, C] logits, target [N] class indices, reduction="mean")``."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"cross_entropy: reduction must be one of {', '.join(_REDUCTIONS)}, "
                         f"got {reduction!r}")
    if len(input.shape) != 2 or len(target.shape) != 1:
        raise ValueError(f"cross_entropy: expected input [N, C] and target [N], got "
                         f"{list(input.shape)} and {list(target.shape)} (reshape to 2-D first)")
    _, loss = ops.fn["sparse_softmax_cross_entropy"](input, target, depth=input.shape[1])
    if reduction == "none":
        return loss
    if reduction == "sum":
        return ops.fn["reduce_sum"](loss, axis=[0])
    return _mean(ops, loss, None, False)
