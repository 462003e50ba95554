"""A default signature lists optional operands after the required ones; the call still fills
each operand by name (an op whose optional operand comes before a required one)."""

from __future__ import annotations

import numpy as np

import tdflow

LIB = '''include "tdflow/Base.td"
def Oo_Dialect : Dialect { let name = "oo"; }
def Oo_AxpyOp : Op<Oo_Dialect, "axpy", [NoMemoryEffect, SameOperandsAndResultType]> {
  let arguments = (ins TDF_Tensor:$x, Optional<TDF_Tensor>:$scale, TDF_Tensor:$y,
                       DefaultValuedAttr<F32Attr, "1.">:$alpha);
  let results = (outs TDF_Tensor:$out);
}
'''

HOOKS = '''
import numpy as np
from tdflow.runtime.kernels.registry import register_kernel

@register_kernel("oo.axpy", "cpu")
def axpy(attrs, inputs, outs):
    x, scale, y = inputs
    s = 1.0 if scale is None else scale
    return [(x * s * attrs["alpha"] + y).astype(x.dtype)]
'''


def test_optional_operand_before_a_required_one(tmp_path):
    (tmp_path / "oo.td").write_text(LIB)
    (tmp_path / "oo_hooks.py").write_text(HOOKS)
    lib = tdflow.load_ops(tmp_path / "oo.td", hooks=[tmp_path / "oo_hooks.py"])
    axpy = lib.functional.oo.axpy
    assert str(axpy.signatures[0]) == ("Tensor (Tensor x, Tensor y, Tensor? scale=None, "
                                       "Float alpha=1.0)")
    x, y = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    out = axpy(tdflow.tensor(x), tdflow.tensor(y), alpha=2.0)  # y is the op's third operand
    assert out.numpy().tolist() == [12.0, 24.0]
    out = axpy(tdflow.tensor(x), tdflow.tensor(y), tdflow.tensor(np.array([3.0, 3.0])))
    assert out.numpy().tolist() == [13.0, 26.0]
