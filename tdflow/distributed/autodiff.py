"""``value_and_grad`` and ``sgd_step`` of an SBP program over N ranks, on logical arrays.

The gradient function is built from the logical program (tdflow's ``autodiff``, as for one
process), the arguments keep their ``sbp`` attributes and the seeds are broadcast ones; then
the whole forward-and-backward function goes through the SBP pipeline, so ``infer-sbp``
inserts the boxing the backward pass needs (a broadcast parameter's partial gradient is
reduced, the gradient of an all-gather is a reduce-scatter, ...). Calls take and return
logical arrays on every rank, like :func:`tdflow.distributed.compile`.

>>> import numpy as np, tdflow.distributed as dist
>>> vg = dist.value_and_grad('func.func @f(%x: tensor<4xf64> {sbp = [#sbp.S<0>]}, '
...     '%w: tensor<4xf64>) -> tensor<f64> {\\n'
...     '  %p = "tdflow.broadcast_mul"(%x, %w) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>\\n'
...     '  %s = "tdflow.reduce_sum"(%p) {axis = [0 : si32]} : (tensor<4xf64>) -> tensor<f64>\\n'
...     '  return %s : tensor<f64>\\n}', nproc=2, wrt=["w"])
>>> loss, (dw,) = vg(np.arange(4.0), np.ones(4))
>>> float(loss), dw.tolist()
(6.0, [0.0, 1.0, 2.0, 3.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .overlap import DEFAULT_BUCKET_BYTES
from .program import DistributedProgram, compile

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp


class DistributedValueAndGrad:
    """``f(*logical_args) -> (results, grads)`` over the ranks (the example of the module
    docstring); ``program`` is the :class:`DistributedProgram` of ``@f_grad``.

    >>> DistributedValueAndGrad.__call__.__doc__ is None
    True
    """

    def __init__(self, program: DistributedProgram, n_results: int, wrt: tuple[str, ...],
                 seeds: Sequence[np.ndarray]) -> None:
        self.program = program
        self.n_results = n_results
        self.wrt = wrt
        self._seeds = list(seeds)

    def __call__(self, *args: Any) -> tuple[Any, tuple]:
        out = self.program(*args, *[s.copy() for s in self._seeds])
        out = out if isinstance(out, tuple) else (out,)
        results, grads = out[:self.n_results], tuple(out[self.n_results:])
        return (results[0] if len(results) == 1 else tuple(results)), grads

    def __repr__(self) -> str:
        return f"<distributed value_and_grad of {self.program!r} wrt {', '.join(self.wrt)}>"


def value_and_grad(program: Any, nproc: int | None = None, wrt: Sequence[str] | None = None, *,
                   entry: str | None = None, ops: Dialect | None = None,
                   device: str = "cpu", search: str = "lookahead", overlap: bool = False,
                   bucket_bytes: int = DEFAULT_BUCKET_BYTES) -> DistributedValueAndGrad:
    """The program's results and the gradients of ``wrt`` (default: every float argument),
    computed on ``nproc`` ranks (a fuller example is at the top of this module); ``search``,
    ``overlap`` and ``bucket_bytes`` as :func:`~tdflow.distributed.compile`. Each gradient
    gets its parameter's SBP (a broadcast parameter's partial gradient is all-reduced inside
    the plan, right after the backward pass produces it, where ``overlap=True`` lets it run
    beside the rest).

    >>> import numpy as np
    >>> vg = value_and_grad('func.func @f(%w: tensor<2xf64>) -> tensor<2xf64> {\\n'
    ...     '  %y = "tdflow.relu"(%w) : (tensor<2xf64>) -> tensor<2xf64>\\n'
    ...     '  return %y : tensor<2xf64>\\n}', nproc=2)
    >>> [a.tolist() for a in (vg(np.array([-1.0, 2.0]))[1][0],)]
    [[0.0, 1.0]]
    """
    from tdflow.dialect.types import DTYPES
    from tdflow.runtime.value_and_grad import prepare_grad

    _ctx, module, func, wrt_names, grad_func = prepare_grad(program, entry, wrt, ops)
    # the gradient function takes the entry's arguments first: they keep their SBP
    if func.arg_attrs:
        attrs = list(grad_func.arg_attrs or [])
        attrs += [{}] * (len(grad_func.args) - len(attrs))  # the seeds: broadcast ones
        attrs[:len(func.arg_attrs)] = [dict(a) if a else {} for a in func.arg_attrs]
        grad_func.arg_attrs = attrs
    if "hierarchy" in func.attributes:
        grad_func.attributes["hierarchy"] = func.attributes["hierarchy"]
    _grads_like_params(func, grad_func, wrt_names)
    seeds = [np.ones(tuple(t.shape), DTYPES[t.dtype]) for t in func.result_types]
    prog = compile(module, nproc, entry=grad_func.name, ops=ops, device=device, search=search,
                   overlap=overlap, bucket_bytes=bucket_bytes)
    return DistributedValueAndGrad(prog, len(func.result_types), wrt_names, seeds)


def _grads_like_params(func: FuncOp, grad_func: FuncOp, wrt: Sequence[str]) -> None:
    """Give each gradient result of ``grad_func`` the SBP of its parameter (broadcast when
    the parameter has none): what ``infer-sbp`` then boxes it to."""
    from tdflow.dialect.ir.attrs import ArrayAttr, IntegerAttr, OpaqueAttr

    hier = func.attributes.get("hierarchy")
    n_axes = len(hier.value) if isinstance(hier, ArrayAttr) and all(
        isinstance(v, IntegerAttr) for v in hier.value) else 1
    names = [a.name for a in func.args]
    arg_attrs = list(func.arg_attrs or [])
    n_results = len(func.result_types)
    res = list(grad_func.res_attrs or [])
    res += [{} for _ in range(n_results + len(wrt) - len(res))]
    for k, name in enumerate(wrt):
        i = names.index(name) if name in names else None
        given = (arg_attrs[i] or {}).get("sbp") if i is not None and i < len(arg_attrs) else None
        res[n_results + k] = dict(res[n_results + k] or {}) | {
            "sbp": given if given is not None else ArrayAttr((OpaqueAttr("#sbp.B"),) * n_axes)}
    grad_func.res_attrs = res


def sgd_step(program: Any, lr: float, nproc: int | None = None,
             wrt: Sequence[str] | None = None, **options: Any) -> Any:
    """A training step over the ranks: the results, and every ``wrt`` argument (a logical
    numpy array of the caller) updated in place, ``w -= lr * dw`` in its dtype
    (``sgd_update``'s arithmetic); every rank holds the same updated parameters.

    >>> import numpy as np, tdflow.distributed as dist
    >>> step = dist.sgd_step('func.func @f(%w: tensor<2xf64>, %x: tensor<2xf64> {sbp = [#sbp.S<0>]})'
    ...     ' -> tensor<f64> {\\n'
    ...     '  %p = "tdflow.broadcast_mul"(%w, %x) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>\\n'
    ...     '  %s = "tdflow.reduce_sum"(%p) {axis = [0 : si32]} : (tensor<2xf64>) -> tensor<f64>\\n'
    ...     '  return %s : tensor<f64>\\n}', lr=0.5, nproc=2, wrt=["w"])
    >>> w = np.array([1.0, 2.0]); float(step(w, np.array([3.0, 4.0]))), w.tolist()
    (11.0, [-0.5, 0.0])
    """
    vg = value_and_grad(program, nproc, wrt, **options)
    names = [n for n, _, _ in vg.program.arguments]

    def step(*args: Any) -> Any:
        results, grads = vg(*args)
        for name, g in zip(vg.wrt, grads):
            w = args[names.index(name)]
            w -= np.asarray(lr, dtype=w.dtype) * g
        return results

    return step
