"""Eager execution of one op: the path every ``tdflow.functional`` call ends in.

An :class:`OpRunner` runs one op of the dialect on tensors. The first call with a given
(input shapes and dtypes, attributes) asks the dialect's inference hooks for the result types
and the kernel registry for a kernel, and caches both; later calls allocate the results, wrap
them as tensors, and push the kernel to the engine (which runs a ready tiny op inline, so a
small eager op costs a few microseconds).

>>> from tdflow.dialect import standard_dialect                      # doctest: +SKIP
>>> d = standard_dialect()                                            # doctest: +SKIP
>>> relu = OpRunner(d.lookup("tdflow.relu"), (), d)                   # doctest: +SKIP
>>> relu.run((tdflow.tensor([-1.0, 2.0]),), ())                       # doctest: +SKIP
tensor([0., 2.], dtype=f32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .engine import EngineError, Var, get_engine
from .tensor_glue import Tensor, buffer_of, new_result, var_of

__all__ = ["EagerError", "OpRunner"]

_NO_VAR = Var("constant")  # reads of tensors that were never written by the engine


class EagerError(ValueError):
    """An eager call the op's hooks reject (shapes, dtypes, attributes); names the op."""


class OpRunner:
    """Runs one op eagerly; see the module docstring.

    ``attr_names`` fixes the order of the attribute values given to :meth:`run`; attributes
    not listed take their ``.td`` default. ``dialect`` provides ``infer_result_types``.
    """

    def __init__(self, opdef: Any, attr_names: tuple[str, ...], dialect: Any,
                 device: str = "cpu"):
        self.opdef = opdef
        self.dialect = dialect
        self.name: str = opdef.name
        self.device = device
        self.attr_names = attr_names
        self.operands = opdef.operands
        self.n_results = len(opdef.results)
        self._fixed: dict[str, Any] = {
            a.name: a.default for a in opdef.attributes
            if a.name not in attr_names and a.has_default and a.kind != "other"}
        self._cache: dict[tuple, tuple] = {}
        self._uses_blas = opdef.mnemonic in ("matmul", "batch_matmul", "conv2d",
                                             "conv_data_grad", "conv_filter_grad")

    # -- the slow path: infer and select, once per (types, attrs) ---------------------------
    def _prepare(self, key: tuple, arrays: list, attr_vals: tuple) -> tuple:
        from tdflow.dialect.types import TensorType, dtype_from_numpy

        attrs = dict(self._fixed)
        attrs.update(zip(self.attr_names, attr_vals))
        in_types = [None if a is None else TensorType(a.shape, dtype_from_numpy(a.dtype))
                    for a in arrays]
        try:
            out_types = self.dialect.infer_result_types(self.name, in_types, attrs)
        except (ValueError, TypeError) as e:
            raise EagerError(f"{self.name}: {e}") from e
        from tdflow.dialect.types import DTYPES
        from tdflow.runtime.kernels.registry import select_kernel

        dtypes = tuple(t.dtype if t is not None else None for t in in_types)
        kernel = select_kernel(self.name, self.device, dtypes, attrs)
        specs = []
        cost = 0
        for t in out_types:
            if not t.is_static:
                raise EagerError(f"{self.name}: could not infer a static result type "
                                 f"(got {t}) for inputs {', '.join(map(str, in_types))}")
            specs.append((tuple(t.shape), DTYPES[t.dtype]))
            cost += t.numel or 0
        if self._uses_blas:
            cost = max(cost, sum(a.size for a in arrays if a is not None))
        entry = (tuple(specs), kernel.fn, attrs, cost)
        if len(self._cache) > 4096:  # shapes vary without bound: keep memory bounded
            self._cache.clear()
        self._cache[key] = entry
        return entry

    # -- the hot path --------------------------------------------------------------------------
    def run(self, tensors: tuple, attr_vals: tuple) -> Any:
        """Run on ``tensors`` (one per operand: a Tensor, ``None`` or a tuple for variadic)."""
        arrays: list = []
        reads: list = []
        key: list = [attr_vals]
        for t in tensors:
            if t is None:
                arrays.append(None)
                key.append(None)
            elif type(t) is tuple:
                key.append(len(t))
                for e in t:
                    a = buffer_of(e)
                    arrays.append(a)
                    reads.append(var_of(e))
                    key.append(a.shape)
                    key.append(a.dtype)
            else:
                a = buffer_of(t)
                arrays.append(a)
                reads.append(var_of(t))
                key.append(a.shape)
                key.append(a.dtype)
        k = tuple(key)
        entry = self._cache.get(k)
        if entry is None:
            entry = self._prepare(k, arrays, attr_vals)
        specs, fn, attrs, cost = entry
        outs = [np.empty(s, d) for s, d in specs]
        results = [new_result(o) for o in outs]
        writes = tuple(var_of(r) for r in results)

        def work():
            fn(attrs, arrays, outs)

        get_engine().push(work, reads=tuple(v for v in reads if v is not None), writes=writes,
                          name=self.name, cost=cost, uses_blas=self._uses_blas)
        if self.n_results == 1:
            return results[0]
        return tuple(results)

    def run1(self, t: Tensor) -> Tensor:
        """``run`` for an op with one tensor operand, one result and no attributes."""
        a = buffer_of(t)
        k = (a.shape, a.dtype)
        entry = self._cache.get(k)
        if entry is None:
            entry = self._prepare(k, [a], ())
        specs, fn, attrs, cost = entry
        (s, d), = specs
        out = np.empty(s, d)
        r = new_result(out)
        ins = [a]
        outs = [out]
        get_engine().push(lambda: fn(attrs, ins, outs), (var_of(t),), (var_of(r),),
                          name=self.name, cost=cost)
        return r


__all__ += ["EngineError"]
