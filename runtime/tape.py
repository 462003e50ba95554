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

from .eager_call import attrs_cache_key
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
                 "released", "versions", "wants", "key", "__weakref__")

    def __init__(self, opdef, ctx, attrs, inputs, outputs, edges, index_of, versions=(),
                 wants=None, key=None):
        self.opdef = opdef
        self.ctx = ctx
        self.attrs = attrs        # every attribute's value (shared between nodes: read only)
        self.inputs = inputs      # operand name -> Tensor (saved or shape-only) / None / tuple
        self.outputs = outputs    # result name -> Tensor (saved or shape-only)
        self.edges = edges        # operand name -> edge, or a list of edges (variadic)
        self.index_of = index_of  # id(result tensor) -> result index
        self.released = False
        self.versions = versions  # (operand name, tensor, its _version when saved)
        if wants is None:
            wants = tuple(n for n, e in edges.items() if e is not None and (
                not isinstance(e, list) or any(x is not None for x in e)))
        self.wants = wants        # the operands a gradient flows to, in operand order
        # what the gradient's trace depends on besides the flowing gradients' types: the
        # applied op, its attribute values, ``wants`` and the input types (result types
        # follow from those); None: autograd builds the key from the values
        self.key = key

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


class _PlanKey:
    """A plan's part of its nodes' trace keys: what the gradient's trace depends on besides
    the types (the runner, its attribute key, the gradient definition), compared and hashed
    by identity: backward looks a trace up per node, and hashing the definition (a frozen
    dataclass, its fields hashed each time) cost more than the rest of the key. A plan made
    again for the same values (after the cache below is cleared) gets a new trace, no more."""

    __slots__ = ("runner", "akey", "gd")

    def __init__(self, runner: Any, akey: tuple, gd: Any) -> None:
        self.runner = runner
        self.akey = akey
        self.gd = gd


# (runner, attribute key) -> (gradient definition, attrs, saves, results kept, trace key part)
_PLANS: dict[tuple, tuple] = {}


def _plan(runner: AppliedOp, attr_vals: Sequence[Any]) -> tuple | None:
    """What recording an application of ``runner`` with ``attr_vals`` needs besides the
    tensors, worked out once per (runner, attribute values, gradient definition: a rule
    registered later replaces it); None for a NoGrad op without a gradient definition."""
    opdef = runner.opdef
    try:
        gd = gradient_of(runner.dialect, opdef)
    except GradError:
        gd = None
    if gd is None and opdef.has_trait("NoGrad"):
        return None  # nothing flows through: the results are constants to autograd
    akey = attrs_cache_key(tuple(attr_vals))
    pk = (runner, akey)
    plan = _PLANS.get(pk)
    if plan is None or plan[0] is not gd:
        attrs = runner.attr_values(tuple(attr_vals))
        saves = gd.saves(attrs) if gd is not None else None
        operands = tuple((d.name, saves is None or d.name in saves) for d in opdef.operands)
        results = tuple((rd.name, saves is None or rd.name in saves) for rd in opdef.results)
        plan = (gd, attrs, operands, results, _PlanKey(runner, akey, gd))
        if len(_PLANS) >= 4096:
            _PLANS.clear()
        _PLANS[pk] = plan
    return plan


def record(runner: AppliedOp, tensors: Sequence[Any], attr_vals: Sequence[Any],
           results: Sequence[Tensor]) -> None:
    """Record one eager op application (called by the eager op paths when an input requires
    a gradient and gradients are enabled): mark its floating-point results as requiring
    gradients, with a :class:`Node` as their ``grad_fn``."""
    plan = _plan(runner, attr_vals)
    if plan is None:
        return  # nothing flows through: the results are constants to autograd
    _, attrs, operands, kept, static = plan
    inputs: dict[str, Any] = {}
    edges: dict[str, Any] = {}
    versions: list[tuple[str, Tensor, int]] = []
    wants: list[str] = []
    types: list[Any] = []
    for (name, keep), t in zip(operands, tensors):
        if t is None:
            inputs[name] = None
            edges[name] = None
            types.append(None)
        elif type(t) is tuple:
            inputs[name] = tuple(_saved(e) if keep else _shape_only(e) for e in t)
            es = edges[name] = [_edge(e) for e in t]  # a list: edges themselves are tuples
            if any(e is not None for e in es):
                wants.append(name)
            types.append(tuple((e._buf.shape, e.dtype) for e in t))
            if keep:
                versions.extend((name, e, e._version) for e in t)
        else:
            a = t._buf
            if keep:  # (_saved and _edge, written out: this runs for every recorded operand)
                s = _wrap(a, t.dtype, t.device)
                s._sync = t._sync
                inputs[name] = s
                versions.append((name, t, t._version))
            else:
                inputs[name] = _shape_only(t)
            if t.requires_grad:
                fn = t.grad_fn
                edges[name] = ("leaf", t) if fn is None else ("node", fn, fn.index_of[id(t)])
                wants.append(name)
            else:
                edges[name] = None
            types.append((a.shape, t.dtype))
    outputs = {}
    index_of = {}
    k = 0
    for r, (name, keep) in zip(results, kept):
        outputs[name] = _saved(r) if keep else _shape_only(r)
        index_of[id(r)] = k
        k += 1
    wt = tuple(wants)
    node = Node(runner.opdef, runner.dialect, attrs, inputs, outputs, edges, index_of,
                tuple(versions), wt, (static, wt, tuple(types)))
    for r in results:
        if r.dtype in FLOAT_DTYPES:
            r.requires_grad = True
            r.grad_fn = node
