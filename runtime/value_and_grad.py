"""``tdflow.value_and_grad``: a program and its gradient, compiled together (JAX's name).

The program's entry function ``@f`` is differentiated by the ``autodiff`` pass's
:func:`~tdflow.lowering.passes.autodiff.differentiate` into ``@f_grad`` (``@f``'s results,
then the gradients of the arguments in ``wrt``), which is lowered by the usual pipeline, so
CSE, fusion and memory planning work on forward and backward together. Calling the result
runs one plan: the output-gradient seeds are ones (the gradient of the sum of each result; of
the loss itself for a one-element loss), constants of the program, so what a loss's seed chain
computes from them (a mean's ``1/n`` broadcast over the rows) is folded at compile time.

>>> import numpy as np, tdflow
>>> prog = '''func.func @f(%x: tensor<3xf32>) -> tensor<f32> {
...   %0 = "tdflow.broadcast_mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
...   %1 = "tdflow.reduce_sum"(%0) {axis = [0 : si32]} : (tensor<3xf32>) -> tensor<f32>
...   return %1 : tensor<f32>
... }'''
>>> f = tdflow.value_and_grad(prog)
>>> loss, (dx,) = f(np.array([1.0, 2.0, 3.0], np.float32))
>>> float(loss), dx.tolist()
(14.0, [2.0, 4.0, 6.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import os

    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp, Module

__all__ = ["SgdStep", "ValueAndGrad", "prepare_grad", "sgd_step", "value_and_grad"]


class _Compiled:
    """A compiled gradient program; its output-gradient seeds (ones) are constants of the
    program (``prepare_grad(..., ones_seeds=True)``), so a call passes the arguments alone."""

    def __init__(self, program: Any, n_results: int, wrt: tuple[str, ...]) -> None:
        self.program = program
        self.n_results = n_results
        self.wrt = wrt

    def _run(self, args: tuple, kwargs: dict) -> Any:
        if not kwargs:  # the training loop's call: numpy arrays, positional
            out = self.program.run_plain(args)
            if out is not None:
                return out
        return self.program(*args, **kwargs)


class ValueAndGrad(_Compiled):
    """``f(*args) -> (results, grads)``: results as the program returns them (one value, or a
    tuple), grads a tuple in ``wrt`` order. ``program`` is the compiled ``@f_grad``."""

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[Any, tuple]:
        out = self._run(args, kwargs)
        out = out if isinstance(out, tuple) else (out,)
        results, grads = out[:self.n_results], tuple(out[self.n_results:])
        return (results[0] if len(results) == 1 else tuple(results)), grads

    def __repr__(self) -> str:
        return f"<value_and_grad of {self.program!r} wrt {', '.join(self.wrt)}>"


def _wrt_names(wrt: Any) -> list[str] | None:
    """``wrt`` checked: ``None`` (every float argument), one name, or a non-empty sequence of
    distinct argument names (``%`` optional); a ``TypeError``/``ValueError`` naming the
    problem otherwise (never an iteration over a string's characters).

    >>> _wrt_names("w"), _wrt_names(["%w", "b"]), _wrt_names(None)
    (['w'], ['w', 'b'], None)
    >>> _wrt_names([0])
    Traceback (most recent call last):
    ...
    TypeError: wrt: argument names are strings, got int 0
    """
    if wrt is None:
        return None
    if isinstance(wrt, str):
        wrt = [wrt]
    try:
        items = list(wrt)
    except TypeError:
        raise TypeError(f"wrt: a name or a sequence of argument names, got "
                        f"{type(wrt).__name__}") from None
    for w in items:
        if not isinstance(w, str):
            raise TypeError(f"wrt: argument names are strings, got {type(w).__name__} {w!r}")
    names = [w.lstrip("%") for w in items]
    if not names:
        raise ValueError("wrt is empty: name at least one argument (or leave it out for every "
                         "floating-point argument)")
    twice = sorted({w for w in names if names.count(w) > 1})
    if twice:
        raise ValueError(f"wrt names {', '.join(twice)} more than once")
    return names


def prepare_grad(program: Module | str | os.PathLike[str], entry: str | None,
                 wrt: Sequence[str] | None, ops: Dialect | None, ones_seeds: bool = False
                 ) -> tuple[Dialect, Module, FuncOp, tuple[str, ...], FuncOp]:
    """``(context, module, entry function, wrt names, gradient function)``: ``program``
    verified, and a module holding the entry's gradient function (``@f_grad``) alone, with the
    program's resources; what :func:`value_and_grad` and the distributed one compile. With
    ``ones_seeds`` the seeds are constant ones in the function, not arguments (see
    :func:`~tdflow.lowering.passes.autodiff.differentiate`).

    >>> ctx, module, f, wrt, g = prepare_grad(
    ...     "func.func @f(%x: tensor<3xf32>) -> tensor<f32> {\\n"
    ...     "  %0 = \\"tdflow.reduce_sum\\"(%x) {axis = [0]} : (tensor<3xf32>) -> tensor<f32>\\n"
    ...     "  return %0 : tensor<f32>\\n}", None, None, None)
    >>> f.name, wrt, g.name
    ('f', ('x',), 'f_grad')
    """
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.dialect.types import FLOAT_DTYPES
    from tdflow.lowering.passes.autodiff import differentiate

    from .compiled import context_of, load_module

    wrt = _wrt_names(wrt)
    ctx = context_of(ops)
    module = load_module(program)
    if not len(module):
        raise ValueError("the program has no function to differentiate")
    errors = [d for d in verify_module(module, ctx) if d.severity == "error"]
    if errors:
        raise DiagnosticError(errors)
    func = module[entry] if entry else module.funcs[0]
    names = [a.name or f"arg{i}" for i, a in enumerate(func.args)]
    wrt_names = tuple(wrt) if wrt else tuple(
        n for n, a in zip(names, func.args) if getattr(a.type, "dtype", None) in FLOAT_DTYPES)
    grad_func = differentiate(ctx, func, list(wrt_names) if wrt else None,
                              ones_seeds=ones_seeds)
    # the module returned holds @f_grad alone: lowering the entry as well would double the work
    module = _alone(module, grad_func)
    return ctx, module, func, wrt_names, grad_func


def value_and_grad(program: Module | str | os.PathLike[str], entry: str | None = None,
                   wrt: Sequence[str] | None = None, ops: Dialect | None = None, device: str = "cpu", **compile_options: Any) -> ValueAndGrad:
    """Compile ``program`` (a ``Module``, MLIR text or a path) and its gradient: the callable
    returns the entry's results and the gradients of the arguments named in ``wrt`` (default:
    every floating-point argument). ``ops`` is the context of op libraries
    (``tdflow.load_ops(...)``); other keywords go to :func:`tdflow.compile`."""
    from .compiled import compile as compile_program

    # the seeds are ones, constants of the plan: folded where they meet other constants
    ctx, module, func, wrt_names, grad_func = prepare_grad(program, entry, wrt, ops,
                                                           ones_seeds=True)
    compiled = compile_program(module, device=device, entry=grad_func.name, ops=ctx,
                               **compile_options)
    return ValueAndGrad(compiled, len(func.result_types), wrt_names)


def _alone(module: Module, func: FuncOp) -> Module:
    """A module of ``func`` only, with ``module``'s resources (the blobs of its constants):
    ``func`` repeats the entry's ops, so lowering the entry too would double the work."""
    from tdflow.dialect.ir.core import Module

    m = Module([func], module.loc)
    m.name, m.attributes = module.name, dict(module.attributes)
    m.resources, m.value_names = module.resources, module.value_names
    return m


class SgdStep(_Compiled):
    """``step(*args) -> results``: one training step; the ``wrt`` arguments (numpy arrays or
    Tensors the caller owns) are updated in place. ``program`` is the compiled ``@f_step``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(args, kwargs)

    def __repr__(self) -> str:
        return f"<sgd_step of {self.program!r} updating {', '.join(self.wrt)}>"


_F32_MAX = 3.4028234663852886e38


def sgd_step(program: Module | str | os.PathLike[str], lr: float, entry: str | None = None,
             wrt: Sequence[str] | None = None, ops: Dialect | None = None, device: str = "cpu",
             **compile_options: Any) -> SgdStep:
    """One compiled training step: the entry's results, their gradients, and ``sgd_update``
    of every argument in ``wrt`` (default: every floating-point argument) in place with
    learning rate ``lr``, as one plan (forward, backward and update optimised together; the
    engine orders each in-place write after every read of the old value).

    >>> import numpy as np, tdflow
    >>> prog = ('func.func @f(%w: tensor<2xf32>) -> tensor<f32> {\\n'
    ...   '  %0 = "tdflow.broadcast_mul"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\\n'
    ...   '  %1 = "tdflow.reduce_sum"(%0) {axis = [0 : si32]} : (tensor<2xf32>) -> tensor<f32>\\n'
    ...   '  return %1 : tensor<f32>\\n}')
    >>> step = tdflow.sgd_step(prog, lr=0.25)
    >>> w = np.array([1.0, -2.0], np.float32)
    >>> float(step(w)), w.tolist()      # the loss before the step; then w -= 0.25 * 2w
    (5.0, [0.5, -1.0])
    """
    import math
    import numbers

    from tdflow.dialect.builder import op_method
    from tdflow.dialect.ir import RETURN
    from tdflow.dialect.ir.builder import Builder

    from .compiled import compile as compile_program

    if isinstance(lr, bool) or not isinstance(lr, numbers.Real):
        raise TypeError(f"sgd_step(): lr must be a number, got {type(lr).__name__} {lr!r}")
    if not math.isfinite(lr):
        raise ValueError(f"sgd_step(): lr must be finite, got {lr}")
    if abs(float(lr)) > _F32_MAX:  # sgd_update's learning_rate is an f32 attribute
        raise ValueError(f"sgd_step(): lr must fit in f32 (|lr| <= {_F32_MAX:.7g}), got {lr}")
    ctx, module, func, wrt_names, g = prepare_grad(program, entry, wrt, ops, ones_seeds=True)
    ret = g.body.terminator
    n = len(func.result_types)
    results, grads = list(ret.operands[:n]), list(ret.operands[n:])
    args = {a.name or f"arg{i}": a for i, a in enumerate(g.args)}
    b = Builder(None)
    b.set_insertion_point_before(ret)
    update = op_method(ctx, ctx.lookup("tdflow.sgd_update"))
    for name, grad in zip(wrt_names, grads):
        update(b, args[name], grad, learning_rate_val=float(lr), loc=ret.loc)
    b.create(RETURN, results, (), None, ret.loc)
    ret.drop_operands()
    g.body._unlink(ret)
    g.result_types = [v.type for v in results]
    module_names = {f.name for f in func.parent}  # the source's functions
    g.name = func.name + "_step" if func.name + "_step" not in module_names else g.name
    compiled = compile_program(module, device=device, entry=g.name, ops=ctx, **compile_options)
    return SgdStep(compiled, n, wrt_names)
