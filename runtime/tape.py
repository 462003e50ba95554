"""The eager tape: what one op application records for backward.

An eager op with an input that requires a gradient records a :class:`Node` (while gradients
are enabled, :mod:`~tdflow.runtime.grad_mode`): the op, its attribute values and only the
inputs and results its gradient definition reads (:attr:`~tdflow.dialect.grad.GradDef.saves`;
the others are kept as shapes alone, so forward buffers nobody needs are freed). Its results
require gradients and point to the node (``grad_fn``). :mod:`~tdflow.runtime.autograd` walks
the nodes backward.

>>> import tdflow
>>> x = tdflow.tensor([1.0, 2.0], requires_grad=True)
>>> y = tdflow.functional.mul(x, x)
>>> y.grad_fn, sorted(y.grad_fn.inputs)
(<broadcast_mul backward>, ['x', 'y'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from tdflow.dialect.grad import GradError, gradient_of
from tdflow.dialect.types import FLOAT_DTYPES

from .tensor import Tensor

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import OpDef

__all__ = ["AppliedOp", "Node", "record"]

_wrap = Tensor._wrap


_PLACEHOLDERS: dict[tuple, np.ndarray] = {}


def _shape_only(t: Tensor) -> Tensor:
    """A tensor with ``t``'s shape and dtype and no memory (a zero-strided, read-only view):
    what a gradient that only reads an input's shape (``reduce_sum_like``'s ``like``) needs.
    The views are shared per (shape, dtype): nothing can write them."""
    a = t._buf
    key = (a.shape, a.dtype)
    view = _PLACEHOLDERS.get(key)
    if view is None:
        if len(_PLACEHOLDERS) >= 4096:
            _PLACEHOLDERS.clear()
        view = _PLACEHOLDERS[key] = np.broadcast_to(np.empty((), a.dtype), a.shape)
    return _wrap(view, t.dtype, t.device)


def _saved(t: Tensor) -> Tensor:
    """The buffer of ``t`` without its history (so a node never keeps its own results'
    nodes alive), still ordered after the op that writes it."""
    s = _wrap(t._buf, t.dtype, t.device)
    s._sync = t._sync
    return s


class Node:
    """One recorded op application (``grad_fn`` of its results)."""

    __slots__ = ("opdef", "ctx", "attrs", "inputs", "outputs", "edges", "index_of",
                 "released", "versions", "__weakref__")

    def __init__(self, opdef, ctx, attrs, inputs, outputs, edges, index_of, versions=()):
        self.opdef = opdef
        self.ctx = ctx
        self.attrs = attrs
        self.inputs = inputs      # operand name -> Tensor (saved or shape-only) / None / tuple
        self.outputs = outputs    # result name -> Tensor (saved or shape-only)
        self.edges = edges        # operand name -> edge, or a list of edges (variadic)
        self.index_of = index_of  # id(result tensor) -> result index
        self.released = False
        self.versions = versions  # (operand name, tensor, its _version when saved)

    @property
    def name(self) -> str:
        return self.opdef.name

    def __repr__(self) -> str:
        return f"<{self.opdef.mnemonic} backward>"


# An edge says where an input's gradient goes: ("node", node, result index) for a computed
# tensor, ("leaf", tensor) for a leaf that requires a gradient, None for neither.
def _edge(t: Any) -> Any:
    if t is None or not t.requires_grad:
        return None
    fn = t.grad_fn
    if fn is None:
        return ("leaf", t)
    return ("node", fn, fn.index_of[id(t)])


class AppliedOp(Protocol):
    """What :func:`record` reads of the op an eager call ran (an
    :class:`~tdflow.runtime.eager.OpRunner`, which this module sits below)."""

    opdef: OpDef
    dialect: Dialect

    def attr_values(self, attr_vals: tuple) -> dict[str, Any]: ...


def record(runner: AppliedOp, tensors: Sequence[Any], attr_vals: Sequence[Any],
           results: Sequence[Tensor]) -> None:
    """Record one eager op application (called by the eager op paths when an input requires
    a gradient and gradients are enabled): mark its floating-point results as requiring
    gradients, with a :class:`Node` as their ``grad_fn``."""
    opdef = runner.opdef
    ctx = runner.dialect
    try:
        gd = gradient_of(ctx, opdef)
    except GradError:
        gd = None
    if gd is None and opdef.has_trait("NoGrad"):
        return  # nothing flows through: the results are constants to autograd
    attrs = runner.attr_values(attr_vals)
    saves = gd.saves(attrs) if gd is not None else None
    inputs: dict[str, Any] = {}
    edges: dict[str, Any] = {}
    versions: list[tuple[str, Tensor, int]] = []
    for d, t in zip(opdef.operands, tensors):
        keep = saves is None or d.name in saves
        if t is None:
            inputs[d.name] = None
            edges[d.name] = None
        elif type(t) is tuple:
            inputs[d.name] = tuple(_saved(e) if keep else _shape_only(e) for e in t)
            edges[d.name] = [_edge(e) for e in t]  # a list: edges themselves are tuples
            if keep:
                versions.extend((d.name, e, e._version) for e in t)
        else:
            inputs[d.name] = _saved(t) if keep else _shape_only(t)
            edges[d.name] = _edge(t)
            if keep:
                versions.append((d.name, t, t._version))
    outputs = {}
    index_of = {}
    for k, (r, rd) in enumerate(zip(results, opdef.results)):
        outputs[rd.name] = _saved(r) if saves is None or rd.name in saves else _shape_only(r)
        index_of[id(r)] = k
    node = Node(opdef, ctx, attrs, inputs, outputs, edges, index_of, tuple(versions))
    for r in results:
        if r.dtype in FLOAT_DTYPES:
            r.requires_grad = True
            r.grad_fn = node
