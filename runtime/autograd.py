"""Eager autograd: ``backward()`` through the tape (:mod:`~tdflow.runtime.tape`).

``t.backward()`` walks the recorded nodes from ``t`` in reverse topological order and runs each
op's gradient definition with an :class:`EagerEmitter`, which applies ops to tensors through
the same kernels as forward calls; gradients of leaves accumulate into ``.grad``. The same
definitions serve graph mode (the ``autodiff`` pass). Recording is switched by
:mod:`~tdflow.runtime.grad_mode` (``no_grad``), re-exported here.

>>> import tdflow
>>> F = tdflow.functional
>>> x = tdflow.tensor([1.0, 2.0, 3.0], requires_grad=True)
>>> y = F.reduce_sum(F.mul(x, x), axis=[0])
>>> y.backward()
>>> x.grad.numpy().tolist()
[2.0, 4.0, 6.0]
>>> with tdflow.no_grad():
...     F.mul(x, x).requires_grad
False
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.grad import Forward, GradError, input_gradients
from tdflow.dialect.types import TensorType

from .eager import OpRunner
from .eager_call import attrs_cache_key
from .grad_mode import enable_grad, grad_enabled, no_grad
from .tape import Node
from .tensor import Tensor

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect

__all__ = ["EagerEmitter", "backward", "emitter_for", "enable_grad", "grad_enabled", "no_grad"]

_wrap = Tensor._wrap


class EagerEmitter:
    """The :class:`~tdflow.dialect.grad.Emitter` of eager mode: applies ops to tensors."""

    def __init__(self, ctx: Dialect) -> None:
        self.ctx = ctx
        self._runners: dict[tuple, Any] = {}

    def op(self, name: str, operands: Sequence[Any], attrs: dict[str, Any]) -> tuple:
        names = tuple(sorted(attrs))
        key = (name, names)
        runner = self._runners.get(key)
        if runner is None:
            opdef = self.ctx.lookup(name)
            if opdef is None:
                raise GradError(f"a gradient uses '{name}', which is not an op of the context")
            runner = self._runners[key] = OpRunner(opdef, names, self.ctx)
        ts = tuple(tuple(v) if isinstance(v, list) else v for v in operands)
        vals = tuple(tuple(v) if isinstance(v, list) else v for v in (attrs[k] for k in names))
        out = runner.run(ts, vals)  # (tuples: the runner's cache keys on attribute values)
        if out is None:
            return ()
        return out if isinstance(out, tuple) else (out,)

    def run(self, key: tuple, vals: tuple, operands: tuple) -> tuple:
        """:meth:`op` with its arguments already in the runner's form (a trace's replay):
        ``key`` is ``(op name, sorted attribute names)``, ``vals`` their values and variadic
        operands are tuples."""
        runner = self._runners.get(key)
        if runner is None:
            return self.op(key[0], operands, dict(zip(key[1], vals)))
        out = runner.run(operands, vals)
        if out is None:
            return ()
        return out if type(out) is tuple else (out,)

    def fixed(self, key: tuple, vals: tuple) -> Any:
        """``call(operands) -> tuple of results``: :meth:`run` of one trace step, whose op and
        attribute values never change, with the runner's per-call work for them done once.

        >>> from tdflow.dialect.context import standard_context
        >>> import tdflow
        >>> g = emitter_for(standard_context())
        >>> key = ("tdflow.relu", ())
        >>> _ = g.run(key, (), (tdflow.tensor([1.0]),))  # the op's runner, made on first use
        >>> [t.numpy().tolist() for t in g.fixed(key, ())((tdflow.tensor([-1.0, 3.0]),))]
        [[0.0, 3.0]]
        """
        runner = self._runners.get(key)
        if runner is None:  # the first replay: the op's runner made by the general path
            return lambda operands: self.run(key, vals, operands)
        return runner.make_fixed(vals, tuples=True)

    def type_of(self, value: Tensor) -> TensorType:
        return TensorType(tuple(value._buf.shape), value.dtype)


_EMITTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def emitter_for(ctx: Dialect) -> EagerEmitter:
    """The context's eager emitter, kept with the context: its op runners cache inference and
    kernel selection, so a training loop's backward pays for them once."""
    g = _EMITTERS.get(ctx)
    if g is None:
        g = _EMITTERS[ctx] = EagerEmitter(ctx)
    return g


def _add(g: EagerEmitter, a: Tensor | None, b: Tensor) -> Tensor:
    """Gradients accumulate with ``broadcast_add``, as the autodiff pass accumulates them."""
    if a is None:
        return b
    return g.op("tdflow.broadcast_add", [a, b], {})[0]


def _topo(root: Node) -> list[Node]:
    """Nodes reachable from ``root``, each after every node that consumes its results.

    The order is that of a depth-first search from ``root`` visiting each node's producers in
    operand order, reversed post-order: the order gradients are accumulated in, which graph
    mode's autodiff matches bit for bit (a sum of several contributions rounds differently in
    another order). Iterative (a long chain of ops must not hit the recursion limit) and
    without generators: a node is expanded when first on top of the stack (its unvisited
    producers pushed last-first, so the first is visited first) and placed when on top again;
    a copy of a node pushed twice is dropped when met after it was placed."""
    order: list[Node] = []
    state: dict[int, bool] = {}  # id -> placed (False: expanded, its producers pending)
    stack = [root]
    while stack:
        node = stack[-1]
        placed = state.get(id(node))
        if placed is None:
            state[id(node)] = False
            producers = []
            for e in node.edges.values():
                if type(e) is list:
                    for edge in e:
                        if edge is not None and edge[0] == "node" and id(edge[1]) not in state:
                            producers.append(edge[1])
                elif e is not None and e[0] == "node" and id(e[1]) not in state:
                    producers.append(e[1])
            if producers:
                producers.reverse()
                stack.extend(producers)
        else:
            stack.pop()
            if not placed:
                state[id(node)] = True
                order.append(node)
    order.reverse()
    return order


def backward(t: Tensor, grad: Tensor | None = None, retain_graph: bool = False) -> None:
    """Accumulate the gradient of ``t`` into the ``.grad`` of every leaf it depends on.

    ``grad`` is the gradient flowing into ``t`` (default: one, for a one-element ``t``).
    The graph is released afterwards unless ``retain_graph`` is set.
    """
    if not t.requires_grad:
        raise GradError("backward() on a tensor that does not require a gradient (no input "
                        "of the ops that made it has requires_grad=True)")
    if grad is None:
        if t._buf.size != 1:
            raise GradError(f"backward() without a gradient needs a one-element tensor; this "
                            f"one has shape {list(t.shape)}: pass grad= of that shape")
        seed = _wrap(np.ones(t._buf.shape, t._buf.dtype), t.dtype, t.device)
    else:
        if tuple(grad.shape) != tuple(t.shape):
            raise GradError(f"backward(): grad has shape {list(grad.shape)}, the tensor "
                            f"{list(t.shape)}")
        seed = grad
    root = t.grad_fn
    with no_grad():
        if root is None:  # a leaf: its own gradient is the seed
            if t.grad is None:
                t.grad = seed
            else:
                from tdflow.dialect.context import standard_context

                t.grad = _add(emitter_for(standard_context()), t.grad, seed)
            return
        _run(root, root.index_of[id(t)], seed, retain_graph)


def _run(root: Node, index: int, seed: Tensor, retain_graph: bool) -> None:
    order = _topo(root)
    pending: dict[int, list[Any]] = {id(root): [None] * len(root.opdef.results)}
    pending[id(root)][index] = seed
    emitters: dict[int, EagerEmitter] = {}
    for node in order:
        douts = pending.pop(id(node), None)
        if douts is None:
            continue
        # the flowing gradients' types: part of the trace key, and None for all zero
        if len(douts) == 1:  # (most ops: one result, no list to build)
            d = douts[0]
            if d is None:
                continue
            dkey: tuple = ((d._buf.shape, d.dtype),)
        else:
            dkey = tuple([None if d is None else (d._buf.shape, d.dtype) for d in douts])
            if dkey.count(None) == len(dkey):
                continue
        if node.released:
            raise GradError(f"backward through '{node.name}' a second time: its saved tensors "
                            f"were freed by the first backward(); pass retain_graph=True to "
                            f"the first call to keep them")
        for name, t, version in node.versions:
            if t._version != version:
                raise GradError(f"'{node.name}' saved its input '{name}' for backward, and it "
                                f"was modified in place since (by an in-place op such as "
                                f"sgd_update); compute the loss again after updating, or "
                                f"update after backward()")
        g = emitters.get(id(node.ctx))
        if g is None:
            g = emitters[id(node.ctx)] = emitter_for(node.ctx)
        grads = _traced_gradients(node, g, douts, dkey)
        edges = node.edges
        for name, gval in grads:
            if gval is None:
                continue
            e = edges[name]
            if type(e) is list:
                for edge, gi in zip(e, gval):
                    _deliver(g, edge, gi, pending)
            else:
                _deliver(g, e, gval, pending)
        if not retain_graph:
            node.released = True
            node.inputs = node.outputs = {}
            node.versions = ()


def _deliver(g: EagerEmitter, edge: Any, grad: Tensor | None, pending: dict) -> None:
    if edge is None or grad is None:
        return
    if edge[0] == "leaf":
        leaf = edge[1]
        leaf.grad = grad if leaf.grad is None else _add(g, leaf.grad, grad)
        return
    _, node, k = edge
    slot = pending.setdefault(id(node), [None] * len(node.opdef.results))
    slot[k] = _add(g, slot[k], grad)


# -- traces: a gradient definition runs once per (op, attributes, types); later calls replay --
class _Sym:
    """A value in a trace: where it comes from (``ref``) and its type."""

    __slots__ = ("ref", "type")

    def __init__(self, ref: tuple, type: TensorType) -> None:
        self.ref = ref
        self.type = type


class _Tracer:
    """An emitter that records the ops a gradient definition applies, with inferred types."""

    def __init__(self, ctx: Dialect) -> None:
        self.ctx = ctx
        self.steps: list[tuple[str, list, dict]] = []

    def op(self, name: str, operands: Sequence[Any], attrs: dict[str, Any]) -> tuple:
        opdef = self.ctx.lookup(name)
        if opdef is None:
            raise GradError(f"a gradient uses '{name}', which is not an op of the context")
        types: dict[str, Any] = {}
        refs: list[Any] = []
        for d, v in zip(opdef.operands, operands):
            if v is None:
                refs.append(None)
            elif isinstance(v, list | tuple):
                types[d.name] = [e.type for e in v]
                refs.append([e.ref for e in v])
            else:
                types[d.name] = v.type
                refs.append(v.ref)
        out_types = self.ctx.infer_result_types(name, types, attrs)
        i = len(self.steps)
        self.steps.append((name, refs, dict(attrs)))
        return tuple(_Sym(("step", i, k), t) for k, t in enumerate(out_types))

    def type_of(self, value: _Sym) -> TensorType:
        return value.type


def _type(t: Tensor) -> TensorType:
    return TensorType(tuple(t._buf.shape), t.dtype)


def _symbolic(values: dict[str, Any], kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, v in values.items():
        if v is None:
            out[name] = None
        elif isinstance(v, tuple):
            out[name] = tuple(_Sym((kind, name, j), _type(e)) for j, e in enumerate(v))
        else:
            out[name] = _Sym((kind, name, None), _type(v))
    return out


def _freeze_value(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


def _types_key(values: dict[str, Any]) -> tuple:
    out = []
    for name, v in values.items():
        if v is None:
            out.append((name, None))
        elif isinstance(v, tuple):
            out.append((name, tuple((e._buf.shape, e.dtype) for e in v)))
        else:
            out.append((name, v._buf.shape, v.dtype))
    return tuple(out)


_TRACES: dict[tuple, tuple[list, tuple, list]] = {}

# A compiled ref (what a replay reads): (_STEP, step, result), (_SRC, 0/1, name) for an input or
# output, (_SRC, 2, index) for a flowing gradient, (_ELEM, kind, name, j) for an element of a
# variadic one, (_LIST, (compiled, ...)) for a variadic operand, or None.
_STEP, _SRC, _ELEM, _LIST = 0, 1, 2, 3
_KINDS = {"in": 0, "out": 1, "dout": 2}


def _compile_ref(ref: Any, dout_index: dict[str, int], pos: dict[int, int]) -> Any:
    if ref is None:
        return None
    if isinstance(ref, list):
        return (_LIST, tuple(_compile_ref(r, dout_index, pos) for r in ref))
    if ref[0] == "step":
        return (_STEP, pos[ref[1]], ref[2])
    kind = _KINDS[ref[0]]
    name = dout_index[ref[1]] if kind == 2 else ref[1]
    if ref[2] is None:
        return (_SRC, kind, name)
    return (_ELEM, kind, name, ref[2])


def _fetch(c: Any, results: list, sources: tuple) -> Any:
    """The value a compiled ref names. A module function, not a closure over the replay's
    locals: a recursive closure is a reference cycle, which kept every node's saved
    activations alive until the garbage collector ran (issue 23)."""
    if c is None:
        return None
    code = c[0]
    if code == _STEP:
        return results[c[1]][c[2]]
    if code == _SRC:
        return sources[c[1]][c[2]]
    if code == _ELEM:
        return sources[c[1]][c[2]][c[3]]
    return tuple(_fetch(e, results, sources) for e in c[1])


def _compile_trace(ctx: Dialect, steps: list, refs: dict, dout_index: dict[str, int]
                   ) -> tuple[list, tuple, list]:
    """The replay form of a trace: per step ``((op name, attribute names), attribute values,
    compiled operand refs)``, attribute values frozen as :meth:`EagerEmitter.op` freezes them,
    and the gradients' compiled refs (a variadic input's as a ``_LIST``).

    A step that repeats an earlier one (the same op without memory effects, attribute values
    and operands: batch normalization's gradient computes its normalized input twice) is
    dropped and read from the earlier one, as graph mode's CSE does: the same kernel on the
    same values gives the same bits."""
    out = []
    pos: dict[int, int] = {}  # trace step -> replay step
    seen: dict[tuple, int] = {}
    for i, (name, operand_refs, attrs) in enumerate(steps):
        names = tuple(sorted(attrs))
        vals = tuple(_freeze_value(attrs[k]) for k in names)
        operands = tuple(_compile_ref(r, dout_index, pos) for r in operand_refs)
        opdef = ctx.lookup(name)
        key = None
        if opdef is not None and opdef.results and opdef.has_trait("NoMemoryEffect"):
            key = (name, names, attrs_cache_key(vals), operands)
            try:
                j = seen.get(key)
            except TypeError:  # an attribute value that is not hashable: no sharing
                key = j = None
            if j is not None:
                pos[i] = j
                continue
        pos[i] = len(out)
        if key is not None:
            seen[key] = len(out)
        out.append(((name, names), vals, operands))
    # (the third part: the emitter the steps' calls were made for, and those calls)
    return out, tuple((n, _compile_ref(r, dout_index, pos)) for n, r in refs.items()), [None, None]


def _traced_gradients(node: Node, g: EagerEmitter, douts: list, dkey: tuple) -> tuple:
    """:func:`~tdflow.dialect.grad.input_gradients` of ``node`` as ``(input name, gradient)``
    pairs, traced once per (applied op and attribute values, wanted inputs, types of the
    inputs and of the flowing gradients: ``node.key`` and ``dkey``) and replayed on the
    tensors: a training loop's backward then costs its kernels, not the definitions'
    interpretation."""
    if node.key is not None:
        key = (node.key, dkey)
    else:  # a node recorded without a key: one from its values
        key = (id(node.ctx), node.opdef.name,
               tuple((k, _freeze_value(v)) for k, v in node.attrs.items()),
               tuple(sorted(node.wants)), _types_key(node.inputs), _types_key(node.outputs),
               dkey)
    trace = _TRACES.get(key)
    if trace is None:
        names = [r.name for r in node.opdef.results]
        ctx = node.ctx
        tracer = _Tracer(ctx)
        dmap = dict(zip(names, douts))
        sym = Forward(node.opdef, node.attrs, _symbolic(node.inputs, "in"),
                      _symbolic(node.outputs, "out"), _symbolic(dmap, "dout"),
                      frozenset(node.wants))
        result = input_gradients(ctx, tracer, sym)
        # a variadic input's gradients as a list: a ref itself is a tuple
        refs = {n: (None if v is None else [None if e is None else e.ref for e in v]
                    if isinstance(v, tuple) else v.ref) for n, v in result.items()}
        if len(_TRACES) >= 4096:
            _TRACES.clear()
        trace = _TRACES[key] = _compile_trace(ctx, tracer.steps, refs,
                                              {n: i for i, n in enumerate(names)})
    steps, grad_refs, bound = trace
    results: list[tuple] = []
    sources = (node.inputs, node.outputs, douts)
    if bound[0] is None or bound[0]() is not g:
        # the steps' calls, made on the next replay with this emitter (its runners exist then)
        bound[0] = weakref.ref(g)
        bound[1] = calls = [None] * len(steps)
        run = g.run
        for rkey, vals, operand_refs in steps:
            results.append(run(rkey, vals,
                               tuple([_fetch(c, results, sources) for c in operand_refs])))
    else:
        calls = bound[1]
        fixed = g.fixed
        i = 0
        for rkey, vals, operand_refs in steps:
            call = calls[i]
            if call is None:
                call = calls[i] = fixed(rkey, vals)
            results.append(call(tuple([_fetch(c, results, sources) for c in operand_refs])))
            i += 1
    return tuple([(n, _fetch(c, results, sources)) for n, c in grad_refs])
