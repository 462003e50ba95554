"""``onnx.backend.base.Backend`` for tdflow: ONNX's own test runner drives it.

``prepare(model, device)`` imports the model (every problem reported then) and returns a rep
whose ``run(inputs)`` lowers the model for the inputs' shapes, compiles it with tdflow's pass
pipeline and runs it. Inputs that must be known to compile (a shape, axes, pads passed as graph
inputs) are specialised on: the program is compiled per distinct value of those inputs, and
each compiled plan is cached.

>>> import numpy as np
>>> from onnx import helper, TensorProto
>>> g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["c"])], "g",
...     [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"],
...     [helper.make_tensor_value_info("c", TensorProto.FLOAT, [2])])
>>> rep = TdflowBackend.prepare(helper.make_model(g), "CPU")
>>> rep.run([np.ones(2, np.float32), np.arange(2, dtype=np.float32)])[0].tolist()
[1.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tdflow.dialect.types import TensorType, dtype_from_numpy

from .convert import NeedsValue, convert
from .extra import require_onnx
from .importer import import_model, onnx_context, value_name

require_onnx()
from onnx.backend.base import Backend, BackendRep  # noqa: E402

if TYPE_CHECKING:
    from tdflow.dialect.ir.core import Module

__all__ = ["TdflowBackend", "TdflowRep", "prepare", "run_model", "run_node", "supports_device"]

_DEVICES = {"CPU": "cpu", "CUDA": "cuda"}


class TdflowRep(BackendRep):
    """A prepared model: ``run(inputs)`` returns the outputs as numpy arrays, in order."""

    def __init__(self, module: Module, device: str = "cpu") -> None:
        self.module = module
        self.device = device
        self.func = module.funcs[0]
        self.arg_names = [a.name for a in self.func.args]
        self.specialized: set[str] = set()
        self._plans: dict[tuple, Any] = {}

    def _key(self, arrays: Sequence[np.ndarray]) -> tuple:
        parts = []
        for name, a in zip(self.arg_names, arrays):
            v = a.tobytes() if name in self.specialized else None
            parts.append((a.shape, a.dtype.str, v))
        return tuple(parts)

    def compiled(self, arrays: Sequence[np.ndarray]) -> Any:
        """The compiled program for these inputs (lowered and compiled on first use)."""
        import tdflow

        key = self._key(arrays)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        types = {n: TensorType(tuple(a.shape), _dtype_of(a, t.dtype))
                 for n, a, t in zip(self.arg_names, arrays, self.func.arg_types)}
        while True:
            values = {n: a for n, a in zip(self.arg_names, arrays) if n in self.specialized}
            try:
                lowered = convert(self.module, onnx_context(), values=values, arg_types=types)
                break
            except NeedsValue as exc:
                new = set(exc.inputs) - self.specialized
                if not new:
                    raise
                self.specialized |= new
                key = self._key(arrays)
                plan = self._plans.get(key)
                if plan is not None:
                    return plan
        plan = tdflow.compile(lowered, device=self.device)
        self._plans[key] = plan
        return plan

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        arrays = self._bind(inputs)
        plan = self.compiled(arrays)
        out = plan(*arrays)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(_to_onnx(np.asarray(o), t) for o, t in zip(outs, self.func.result_types))

    def _bind(self, inputs: Any) -> list[np.ndarray]:
        if isinstance(inputs, Mapping):  # by ONNX name or by IR name
            inputs = {value_name(k): v for k, v in inputs.items()}
            missing = [n for n in self.arg_names if n not in inputs]
            if missing:
                raise ValueError(f"missing inputs: {', '.join(missing)}")
            vals = [inputs[n] for n in self.arg_names]
        else:
            vals = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(vals) != len(self.arg_names):
                raise ValueError(f"the model takes {len(self.arg_names)} inputs "
                                 f"({', '.join(self.arg_names)}), got {len(vals)}")
        return [_from_onnx(np.asarray(v)) for v in vals]


def _is_bf16(a: np.ndarray) -> bool:
    return a.dtype.name == "bfloat16"  # ml_dtypes' type, which onnx uses for BFLOAT16


def _from_onnx(a: np.ndarray) -> np.ndarray:
    """An input array as tdflow's CPU backend holds it: bf16 widened to float32."""
    if _is_bf16(a):
        a = a.astype(np.float32)
    return a if a.flags.c_contiguous else a.copy()  # ascontiguousarray makes 0-d arrays 1-d


def _dtype_of(a: np.ndarray, declared: str) -> str:
    return "bf16" if declared == "bf16" and a.dtype == np.float32 else dtype_from_numpy(a.dtype)


def _to_onnx(a: np.ndarray, t: Any) -> np.ndarray:
    """A result as ONNX gives it: a bf16 result rounded to ml_dtypes' bfloat16."""
    if isinstance(t, TensorType) and t.dtype == "bf16":
        import ml_dtypes

        return a.astype(ml_dtypes.bfloat16)
    return a


class TdflowBackend(Backend):
    """ONNX's backend interface, on tdflow's CPU (numpy) and CUDA devices."""

    @classmethod
    def is_compatible(cls, model: Any, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        kind = str(device).split(":", 1)[0].upper()
        if kind == "CUDA":
            from tdflow.runtime.backends.cuda_status import cuda_status

            return cuda_status().available
        return kind in _DEVICES

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> TdflowRep:
        kind = str(device).split(":", 1)[0].upper()
        if kind not in _DEVICES:
            raise ValueError(f"unknown device '{device}'; tdflow runs on CPU and CUDA")
        module = import_model(model)
        return TdflowRep(module, _DEVICES[kind])

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple:
        return cls.prepare(model, device).run(inputs)

    @classmethod
    def run_node(cls, node: Any, inputs: Any, device: str = "CPU", outputs_info: Any = None,
                 **kwargs: Any) -> tuple:
        raise NotImplementedError("tdflow runs whole models: wrap the node in a graph")


prepare = TdflowBackend.prepare
run_model = TdflowBackend.run_model
run_node = TdflowBackend.run_node
supports_device = TdflowBackend.supports_device
