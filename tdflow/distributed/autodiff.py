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
from typing import Any

import numpy as np

from .program import DistributedProgram, compile


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
                   entry: str | None = None, ops: Any = None,
                   device: str = "cpu") -> DistributedValueAndGrad:
    """The program's results and the gradients of ``wrt`` (default: every float argument),
    computed on ``nproc`` ranks (a fuller example is at the top of this module).

    >>> import numpy as np
    >>> vg = value_and_grad('func.func @f(%w: tensor<2xf64>) -> tensor<2xf64> {\\n'
    ...     '  %y = "tdflow.relu"(%w) : (tensor<2xf64>) -> tensor<2xf64>\\n'
    ...     '  return %y : tensor<2xf64>\\n}', nproc=2)
    >>> [a.tolist() for a in (vg(np.array([-1.0, 2.0]))[1][0],)]
    [[0.0, 1.0]]
    """
    from tdflow.dialect.types import DTYPES
    from tdflow.runtime.value_and_grad import prepare_grad as _prepare

    _ctx, module, func, wrt_names, grad_func = _prepare(program, entry, wrt, ops)
    # the gradient function takes the entry's arguments first: they keep their SBP
    if func.arg_attrs:
        attrs = list(grad_func.arg_attrs or [])
        attrs += [{}] * (len(grad_func.args) - len(attrs))  # the seeds: broadcast ones
        attrs[:len(func.arg_attrs)] = [dict(a) if a else {} for a in func.arg_attrs]
        grad_func.arg_attrs = attrs
    if "hierarchy" in func.attributes:
        grad_func.attributes["hierarchy"] = func.attributes["hierarchy"]
    seeds = [np.ones(tuple(t.shape), DTYPES[t.dtype]) for t in func.result_types]
    prog = compile(module, nproc, entry=grad_func.name, ops=ops, device=device)
    return DistributedValueAndGrad(prog, len(func.result_types), wrt_names, seeds)


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
