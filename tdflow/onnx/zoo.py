"""ONNX's light model zoo (``onnx/backend/test/data/light``: ResNet-50, VGG-19, SqueezeNet, ...)
with seeded random weights, so that a run can be compared with another runtime's.

The light graphs keep their architecture but not their weights: each weight is a
``ConstantOfShape`` of one placeholder value (or a graph input the test fills with dummy
data), so every class scores the same. :func:`randomized` replaces them with seeded random
tensors scaled as He initialisation does (fan-in from the shape), with positive variances and
scales for batch norm, and returns the inputs to feed.

>>> names = light_models()
>>> "resnet50" in names and "squeezenet" in names
True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .extra import require_onnx

__all__ = ["light_dir", "light_models", "load_light", "randomized"]


def light_dir() -> str:
    """Where the installed onnx keeps the light zoo."""
    onnx = require_onnx()
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_models() -> list[str]:
    """The light zoo's model names (``resnet50``, ...)."""
    d = light_dir()
    return sorted(f[len("light_"):-len(".onnx")] for f in os.listdir(d)
                  if f.startswith("light_") and f.endswith(".onnx"))


def load_light(name: str) -> Any:
    """The ``ModelProto`` of light model ``name``."""
    onnx = require_onnx()
    return onnx.load(os.path.join(light_dir(), f"light_{name}.onnx"))


def _positive_uses(graph: Any) -> set[str]:
    """Values used as a batch norm's scale or variance (kept positive)."""
    out = set()
    for n in graph.node:
        if n.op_type == "BatchNormalization":
            out.update(n.input[i] for i in (1, 4) if i < len(n.input))
    return out


def _weight(rng: np.random.Generator, shape: tuple[int, ...], positive: bool,
            dtype: Any) -> np.ndarray:
    if positive:
        return rng.uniform(0.5, 1.5, size=shape).astype(dtype)
    if len(shape) >= 2:  # He initialisation over the fan-in
        fan_in = int(np.prod(shape[1:]))
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(dtype)
    return (rng.standard_normal(shape) * 0.1).astype(dtype)


def randomized(model: Any, seed: int = 0) -> tuple[Any, dict[str, np.ndarray]]:
    """``(model, feeds)``: ``model`` with its placeholder weights replaced by seeded random
    initializers, and random values for every graph input (the image a standard normal)."""
    onnx = require_onnx()
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    # IR 3 wants every initializer listed as a graph input; IR 4 (opset 9's) does not
    m.ir_version = max(m.ir_version, 4)
    g = m.graph
    positive = _positive_uses(g)
    inits = {t.name: t for t in g.initializer}
    keep = []
    new_inits = []
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input and n.input[0] in inits:
            shape = tuple(int(d) for d in numpy_helper.to_array(inits[n.input[0]]))
            value = next((a.t for a in n.attribute if a.name == "value"), None)
            dtype = numpy_helper.to_array(value).dtype if value is not None else np.float32
            arr = _weight(rng, shape, n.output[0] in positive, dtype)
            new_inits.append(numpy_helper.from_array(arr, n.output[0]))
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    for t in list(g.initializer):
        if t.name not in used:
            g.initializer.remove(t)
    for vi in list(g.input):
        if vi.name not in used:
            g.input.remove(vi)
    feeds: dict[str, np.ndarray] = {}
    init_names = {t.name for t in g.initializer}
    first = True
    for vi in g.input:
        if vi.name in init_names:
            continue
        tt = vi.type.tensor_type
        shape = tuple(d.dim_value for d in tt.shape.dim)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)
        feeds[vi.name] = (rng.standard_normal(shape).astype(dtype) if first else
                          _weight(rng, shape, vi.name in positive, dtype))
        first = False
    return m, feeds
