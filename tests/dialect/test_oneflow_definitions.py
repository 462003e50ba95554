"""Every standard op is defined exactly as OneFlow's OneFlowUserOps.td declares it: the same
mnemonic, operands and results (names, order, arity), attributes (names, kinds, defaults),
``has_*_fn`` flags and ``NoGrad``; the few deliberate differences are listed here with why.
Read from the shared corpus (skipped with the reason when it is absent)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tdflow.dialect.context import standard_context

import tdflow

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "oneflow"

# Ops tdflow adds that OneFlow does not have.
TDFLOW_ONLY = {"fused_elementwise": "created by the fuse-elementwise pass (LoweringOnly)"}
# (op, aspect) -> why tdflow differs from OneFlow's record.
DIFFERENCES = {
    ("cast", "attrs"): "dtype is a type attribute (f16, i64) in tdflow, OneFlow's DataType enum",
    ("constant", "attrs"): "dtype as a type; complex_value, is_complex_value and nd_sbp are "
                           "omitted (no complex dtype, one device), as its description says",
    ("conv_data_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("conv_filter_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("max_pool_2d_grad", "NoGrad"): "second-order gradients are not defined: NoGrad says so",
    ("sparse_softmax_cross_entropy_grad", "NoGrad"): "second-order gradients are not defined",
}


@pytest.fixture(scope="module")
def oneflow_ops():
    if not (CORPUS / "top.td").exists():
        pytest.skip("the shared corpus (../shared/corpus/oneflow) is absent")
    llvm = shutil.which("llvm-config-19")
    inc = Path("/usr/lib/llvm-19/include")
    if llvm is not None:
        inc = Path(subprocess.run([llvm, "--includedir"], capture_output=True,
                                  text=True).stdout.strip())
    if not (inc / "mlir" / "IR" / "OpBase.td").exists():
        pytest.skip("MLIR's .td includes (libmlir-19-dev) are not installed")
    groups = sorted(set(re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS",
                                   (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text())))
    ctx = tdflow.load_ops(CORPUS / "top.td", include_dirs=[inc, CORPUS], std=False,
                          defines=[g for g in groups if "_BASE_" not in g])
    return {op.mnemonic: op for op in ctx.ops.values()}


def _aspects(op) -> dict[str, object]:
    return {
        "operands": [(d.name, d.arity) for d in op.operands],
        "results": [(d.name, d.arity) for d in op.results],
        "attrs": sorted((a.name, a.kind, a.default_text) for a in op.attributes),
        "flags": sorted(op.hooks),
        "NoGrad": op.has_trait("NoGrad"),
    }


STANDARD = sorted(op.mnemonic for op in standard_context().ops.values())


@pytest.mark.parametrize("mnemonic", STANDARD)
def test_standard_op_is_defined_as_oneflow_does(oneflow_ops, mnemonic):
    if mnemonic in TDFLOW_ONLY:
        assert mnemonic not in oneflow_ops
        return
    assert mnemonic in oneflow_ops, f"OneFlow has no op '{mnemonic}'"
    ours = _aspects(standard_context().lookup(f"tdflow.{mnemonic}"))
    theirs = _aspects(oneflow_ops[mnemonic])
    for aspect, value in ours.items():
        if (mnemonic, aspect) in DIFFERENCES:
            assert value != theirs[aspect], f"{mnemonic}: {aspect} now agrees; drop the entry"
            continue
        assert value == theirs[aspect], f"{mnemonic}: {aspect} differs from OneFlow's"
