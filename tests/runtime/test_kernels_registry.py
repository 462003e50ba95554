"""Kernel registry: selection by device/dtype/predicate, priorities, and the no-match error."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.runtime.kernels.registry import (
    Kernel,
    KernelNotFoundError,
    KernelTable,
    attr_in,
    kernel_table,
    same_dtype,
    select_kernel,
)


def _k(name, **kw):
    return Kernel(name=name, op="tdflow.toy", device=kw.pop("device", "cpu"),
                  fn=lambda attrs, inputs, outs: [name], **kw)


def test_select_by_dtype_predicate_and_priority():
    table = KernelTable({"tdflow.toy": [
        _k("cpu.toy.f", dtypes=frozenset({"f32", "f64"})),
        _k("cpu.toy.fast", dtypes=frozenset({"f32"}), match=attr_in("mode", ["fast"]), priority=5),
        _k("gpu.toy", device="cuda"),
    ]}, "cpu")
    assert table.select("tdflow.toy", ("f32",), {}).name == "cpu.toy.f"
    assert table.select("tdflow.toy", ("f32",), {"mode": "fast"}).name == "cpu.toy.fast"
    assert table.select("tdflow.toy", ("f64",), {"mode": "fast"}).name == "cpu.toy.f"
    assert table.select("tdflow.toy", ("f32",), {}, device="cuda").name == "gpu.toy"
    assert [k.name for k in table.candidates("tdflow.toy")] == ["cpu.toy.f", "cpu.toy.fast"]


def test_no_match_lists_every_candidate_with_constraints():
    table = KernelTable({"tdflow.toy": [
        _k("cpu.toy.f", dtypes=frozenset({"f32", "f64"}), match=same_dtype(1)),
        _k("gpu.toy", device="cuda", inplace={0: 0}),
    ]}, "cpu")
    with pytest.raises(KernelNotFoundError) as e:
        table.select("tdflow.toy", ("i8", "i8"), {})
    msg = str(e.value)
    assert "no kernel for tdflow.toy on device 'cpu' with input dtypes (i8, i8)" in msg
    assert "cpu.toy.f (device=cpu, dtypes=f32|f64, match=inputs [1] have input 0's dtype)" in msg
    assert "gpu.toy (device=cuda, dtypes=any, inplace=out0<-in0)" in msg
    assert isinstance(e.value, LookupError)
    with pytest.raises(KernelNotFoundError, match="no kernel registered for tdflow.nope"):
        table.select("tdflow.nope", ("f32",), {})


def test_builtin_table_error_lists_candidates():
    with pytest.raises(KernelNotFoundError) as e:
        select_kernel("tdflow.sigmoid", "cpu", ("i32",), {})
    assert "cpu.sigmoid (device=cpu, dtypes=f16|bf16|f32|f64" in str(e.value)
    with pytest.raises(KernelNotFoundError):
        select_kernel("tdflow.broadcast_add", "cpu", ("f32", "f64"), {})


def test_kernel_table_lookup_by_name_and_call_conventions():
    table = kernel_table("cpu")
    k = table.get("cpu.relu")
    assert k.op == "tdflow.relu" and k.inplace == {0: 0} and k.elementwise is not None
    x = np.array([-1.0, 2.0], np.float32)
    (y,) = k({}, [x])  # outs default: allocate
    assert y.tolist() == [0.0, 2.0]
    buf = np.empty(2, np.float32)
    (z,) = k({}, [x], [buf])  # preallocated
    assert z is buf and buf.tolist() == [0.0, 2.0]
    (w,) = k({}, [x], [x])  # in place
    assert w is x and x.tolist() == [0.0, 2.0]
    with pytest.raises(KeyError):
        table.get("cpu.nope")
    assert "tdflow.relu" in table and "tdflow.matmul" in table.ops()
