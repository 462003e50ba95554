"""The boxing ops: their hooks (shape from ``out_shape``, dtype from ``x``, one signature),
their errors, and their gradients. A gradient is the adjoint of the per-rank linear map the
collective computes (all_gather's is reduce_scatter, ...; a broadcast input's gradient is
right summed over the ranks, as its copies move together): on 2 and 3 thread ranks, the
per-rank gradients of ``F = sum over ranks of sum(y_r * w_r)`` must predict how ``F`` moves
along random directions (``F`` is linear, so exactly, up to rounding)."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.infer import InferError
from tdflow.dialect.sbp import B, P, S, physical_shape
from tdflow.dialect.types import TensorType

import tdflow
import tdflow.distributed as dist

CTX = standard_context()
LOGICAL = (5, 4)

# op -> (attrs, x's SBP, y's SBP)
BOXING = {
    "boxing_all_reduce": ({}, P, B),
    "boxing_reduce_scatter": ({"axis": 0}, P, S(0)),
    "boxing_all_gather": ({"axis": 1}, S(1), B),
    "boxing_all_to_all": ({"in_axis": 0, "out_axis": 1}, S(0), S(1)),
    "boxing_slice": ({"axis": 1}, B, S(1)),
    "boxing_to_partial": ({}, B, P),
}


@pytest.mark.parametrize("op", sorted(BOXING))
def test_hooks_give_out_shape_the_dtype_of_x_and_the_conversion(op):
    attrs, src, dst = BOXING[op]
    x = TensorType(physical_shape(LOGICAL, (src,), (2,), 1), "f32")
    out = physical_shape(LOGICAL, (dst,), (2,), 1)
    full = {**attrs, "out_shape": list(out)}
    assert CTX.infer_result_types(f"tdflow.{op}", [x], full) == [TensorType(out, "f32")]
    (sig,) = CTX.sbp_signatures(f"tdflow.{op}", [x], full)
    assert sig.as_dict() == {"inputs": {"x_0": str(src)}, "outputs": {"y_0": str(dst)}}


@pytest.mark.parametrize("attrs, message", [
    ({"axis": 0, "out_shape": [5]}, "out_shape [5] has rank 1; 'x' [5, 4] has rank 2"),
    ({"axis": 2, "out_shape": [5, 4]},
     "axis 2 is out of range for 'x' of shape [5, 4]"),
    ({"axis": 0, "out_shape": [5, -1]}, "out_shape [5, -1] has a negative dim"),
    ({"axis": 0, "out_shape": [5, 4], "mesh_axis": -1}, "mesh_axis must be >= 0"),
])
def test_bad_boxing_attributes_name_the_attribute(attrs, message):
    with pytest.raises(InferError, match=message.replace("[", r"\[").replace("]", r"\]")):
        CTX.infer_result_types("tdflow.boxing_all_gather", [TensorType(LOGICAL, "f64")], attrs)


def _t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf64>"


def _program(op: str, nproc: int, rank: int) -> str:
    attrs, src, dst = BOXING[op]
    xs, ys = (physical_shape(LOGICAL, (s,), (nproc,), rank) for s in (src, dst))
    body = ", ".join([f"{k} = {v} : si64" for k, v in attrs.items()]
                     + [f"out_shape = [{ys[0]}, {ys[1]}]"])
    return (f"func.func @f(%x: {_t(xs)}, %w: {_t(ys)}) -> tensor<f64> {{\n"
            f'  %y = "tdflow.{op}"(%x) {{{body}}} : ({_t(xs)}) -> {_t(ys)}\n'
            f'  %p = "tdflow.broadcast_mul"(%y, %w) : ({_t(ys)}, {_t(ys)}) -> {_t(ys)}\n'
            f'  %s = "tdflow.reduce_sum"(%p) {{axis = [0 : si32, 1 : si32], keepdims = false}} : ({_t(ys)}) -> tensor<f64>\n'
            f"  return %s : tensor<f64>\n}}")


@pytest.mark.parametrize("nproc", [2, 3])
@pytest.mark.parametrize("op", sorted(BOXING))
def test_gradients_are_the_adjoints_of_the_collectives(op, nproc):
    rng = np.random.default_rng(7)
    attrs, src, dst = BOXING[op]
    xs = [rng.normal(size=physical_shape(LOGICAL, (src,), (nproc,), r)) for r in range(nproc)]
    ws = [rng.normal(size=physical_shape(LOGICAL, (dst,), (nproc,), r)) for r in range(nproc)]
    if src.kind == "B":  # a broadcast input is the same on every rank
        xs = [xs[0]] * nproc

    def rank_run(r, x_of):
        vg = tdflow.value_and_grad(_program(op, nproc, r), wrt=["x"], mode="direct")
        loss, (dx,) = vg(x_of(r), ws[r])
        return float(np.asarray(loss)), np.asarray(dx)

    base = dist.run_threads(lambda r: rank_run(r, lambda k: xs[k]), nproc)
    f0 = sum(b[0] for b in base)
    for _ in range(2):
        vs = [rng.normal(size=x.shape) for x in xs]
        if src.kind == "B":
            vs = [vs[0]] * nproc
        moved = dist.run_threads(lambda r, vs=vs: rank_run(r, lambda k: xs[k] + vs[k]), nproc)
        predicted = sum(float(np.sum(b[1] * v)) for b, v in zip(base, vs))
        assert sum(m[0] for m in moved) - f0 == pytest.approx(predicted, rel=1e-9, abs=1e-9)
