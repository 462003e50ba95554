"""CPU kernels derived from an op's ``formula`` (its ``.td`` record): every formula op of the
standard library (elementwise arithmetic, math functions, activations and their gradients) and a
user's formula-only op.

Each kernel renders its formula with :func:`~tdflow.lowering.elementwise_numpy.render_numpy` on first
use for a given (input dtypes, attribute values) and caches the program; later calls cost one
dict lookup plus the ufunc calls. Output 0 may be input 0's buffer (``inplace={0: 0}``).

>>> import numpy as np
>>> from tdflow.runtime.kernels.registry import select_kernel
>>> k = select_kernel("tdflow.leaky_relu", "cpu", ("f32",), {"alpha": 0.5})
>>> k({"alpha": 0.5}, [np.array([-2.0, 3.0], np.float32)])[0].tolist()
[-1.0, 3.0]
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.formula.types import default_out_dtype
from tdflow.dialect.types import dtype_from_numpy
from tdflow.lowering.elementwise_numpy import NumpyProgram, render_numpy
from tdflow.lowering.elementwise_ops import (
    ELEMENTWISE_OPS,
    ElementwiseDef,
    elementwise_def,
)
from tdflow.runtime.kernels._kernel_set import KernelSet
from tdflow.runtime.kernels.registry import (
    Kernel,
    KernelFn,
    add_kernel,
    default_kernel_name,
    input_dtype_in,
    on_demand,
    register_generated,
    same_dtype,
)

if TYPE_CHECKING:

    from tdflow.dialect.opdef import OpDef


def _mlir(dt: np.dtype) -> str:
    return dtype_from_numpy(dt)


def build_program(d: ElementwiseDef, in_dtypes: Sequence[str], attrs: Mapping[str, Any],
                  out_dtype: str | None = None, result: int = 0) -> NumpyProgram:
    """The numpy program of result ``result`` of ``d`` for these input dtypes and attribute
    values (into ``out_dtype``, by default the type the formula computes)."""
    expr = d.bind(attrs, result)
    return render_numpy(expr, in_dtypes, out_dtype or default_out_dtype(expr, in_dtypes))


def make_elementwise_kernel(d: ElementwiseDef) -> KernelFn:
    """A kernel function for ``d`` that caches programs by dtypes and attribute values; one
    program per result (an op with several results computes each from the same inputs)."""
    cache: dict[Any, Any] = {}
    has_attrs = bool(d.attrs)

    def programs(attrs: Mapping[str, Any], in_dts: Sequence[np.dtype],
                 out_dts: Sequence[np.dtype | None]) -> list[Any]:
        key: Any = in_dts[0] if len(in_dts) == 1 else tuple(in_dts)
        key = (key, tuple(out_dts))
        if has_attrs:
            key = (key, d.attr_key(attrs))
        runs = cache.get(key)
        if runs is None:
            dts = [_mlir(dt) for dt in in_dts]
            runs = cache[key] = [build_program(d, dts, attrs, None if o is None else _mlir(o),
                                               i).run for i, o in enumerate(out_dts)]
        return runs

    def fn(attrs: Mapping[str, Any], inputs: Sequence[np.ndarray],
           outs: Sequence[np.ndarray | None]) -> list[np.ndarray]:
        runs = programs(attrs, [a.dtype for a in inputs],
                        [None if o is None else o.dtype for o in outs])
        return [run(inputs, o) for run, o in zip(runs, outs)]

    def bind(attrs: Mapping[str, Any], ins: Sequence[Any], outs: Sequence[Any],
             dead: frozenset[int] = frozenset()) -> Any:
        """One launch of a compiled plan (the executor's ``bind``): the programs for its
        types looked up once; the same programs run."""
        runs = programs(attrs, [dt for _, dt in ins], [dt for _, dt in outs])
        if len(runs) != 1:
            return None
        run = runs[0]

        def one(_attrs: Any, inputs: Sequence[np.ndarray], outs: Sequence[Any]) -> list[Any]:
            return [run(inputs, outs[0])]

        return one

    fn.__doc__ = f"{d.name}: {d.summary or d.expr!r}"
    fn.bind = bind  # type: ignore[attr-defined]
    return fn


def formula_kernel(d: ElementwiseDef, priority: int) -> Kernel:
    """The CPU :class:`Kernel` derived from ``d`` (every dtype its formula admits).

    >>> from tdflow.dialect import standard_dialect
    >>> formula_kernel(elementwise_def(standard_dialect().lookup("tdflow.relu")), 0).name
    'cpu.relu'
    """
    preds = [same_dtype(*d.same_dtype_inputs)] if d.same_dtype_inputs else []
    preds += [input_dtype_in(i, dts) for i, dts in sorted(d.input_dtypes.items())]
    match = None
    for p in preds:
        match = p if match is None else match & p
    n = len(d.exprs)
    fn = make_elementwise_kernel(d)
    # Several results are computed one after another from the inputs: none may overwrite one.
    return Kernel(name=default_kernel_name(d.name, "cpu"), op=d.name, device="cpu", fn=fn,
                  num_outputs=n, dtypes=frozenset(d.dtypes), match=match,
                  priority=priority, inplace={0: 0} if n == 1 else {}, elementwise=d,
                  doc=(fn.__doc__ or "").strip().split("\n")[0])


def add_formula_kernels(opdef: OpDef, kernels: KernelSet,
                        generators: Mapping[str, Any] | None = None) -> bool:
    """Give an op with a ``formula`` its CPU kernel in ``kernels``, derived from the formula,
    unless it has one there (its own or an inherited one), and its generated CUDA C on the GPU
    devices; True when it has a CPU kernel afterwards. Idempotent.

    This is how a user's formula-only op runs with no Python: a context's kernel set gets them
    (:func:`tdflow.runtime.op_kernels.kernel_set_for`).
    """
    d = elementwise_def(opdef)
    if d is None:
        return False
    if not any(k.device == "cpu" for k in kernels.kernels_of(opdef.name)):
        # Below a hand-written kernel of the op (priority 0), which wins if one is added.
        kernels.add(formula_kernel(d, -1))
    register_generated(opdef.name, opdef, kernels, generators)  # its CUDA C on the GPU devices
    return True


_registered: set[str] = set()  # the standard formula ops whose kernel is in the registry
_register_lock = threading.Lock()  # plans may load on several threads


def register_builtin(name: str | None = None) -> None:
    """Register the standard library's formula kernels not registered yet: the one named
    ``name`` (``"cpu.relu"``), or all of them (``None``), in the library's order.

    Importing this module registers them all, unless the registry imports it for one kernel
    of a plan (:func:`~tdflow.runtime.kernels.registry.on_demand`): a ``tdflow run`` of a
    program with ``relu`` then makes ``relu``'s kernel, not the 71 formula ops' (each
    ``OpDef`` made from the library, ~7 ms), and the full load registers the rest.

    >>> register_builtin("cpu.relu")
    >>> "tdflow.relu" in _registered
    True
    """
    with _register_lock:
        if name is None:
            defs = list(ELEMENTWISE_OPS.values())
        else:
            op = "tdflow." + name.removeprefix("cpu.") if name.startswith("cpu.") else None
            d = ELEMENTWISE_OPS.get(op) if op is not None else None
            defs = [d] if d is not None and default_kernel_name(d.name, "cpu") == name else []
        for d in defs:
            if d.name not in _registered:
                add_kernel(formula_kernel(d, 0))
                _registered.add(d.name)


if not on_demand():  # the full load's import, or a user's: every standard formula kernel
    register_builtin()
