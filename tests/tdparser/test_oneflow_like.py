"""Real-world TableGen beyond MLIR: a OneFlow-style op file whose groups are selected with -D.

``data/oneflow_like/OneFlowLikeUserOps.td`` is written the way OneFlow's OneFlowUserOps.td is
(``#ifdef GET_ONEFLOW_<GROUP>_OP_DEFINITIONS`` sections, ``OneFlow_BaseOp`` class templates with
defaults, ``!con`` of input/attrs into ``arguments``, ``DefaultValuedAttr``, ``Variadic``,
``Optional``, plus ``multiclass``/``foreach``/``let ... in``) on a small self-contained base.
Every ``-D`` combination below must resolve exactly as llvm-tblgen resolves it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import compare

DATA = Path(__file__).resolve().parent / "data" / "oneflow_like"
MAIN = DATA / "OneFlowLikeUserOps.td"
GROUPS = ("ACTIVATION", "MATH", "NN", "REDUCE", "LOSS", "DATA")


def defines(*groups: str) -> tuple[str, ...]:
    return tuple(f"GET_ONEFLOW_{g}_OP_DEFINITIONS" for g in groups)


# (defines, number of OneFlow_BaseOp defs llvm-tblgen-19 makes of them)
COMBOS = [
    ((), 0),
    (defines("ACTIVATION"), 14),
    (defines("MATH"), 21),
    (defines("NN"), 8),
    (defines("REDUCE"), 4),
    (defines("LOSS"), 3),
    (defines("DATA"), 3),
    (defines("DATA") + ("ONEFLOW_LIKE_WITH_BUFFER_IDENTITY",), 3),
    (defines("ACTIVATION", "NN"), 22),
    (defines(*GROUPS), 53),
]
IDS = ["none" if not d else "+".join(x.split("_")[2] if x.startswith("GET_") else "BUF" for x in d)
       for d, _ in COMBOS]


@pytest.mark.oracle
@pytest.mark.parametrize("defs", [d for d, _ in COMBOS], ids=IDS)
def test_matches_llvm_tblgen(defs, llvm_tblgen):
    diffs = compare(llvm_tblgen, MAIN, [DATA], defs)
    assert not diffs, "\n".join(diffs)


@pytest.fixture(scope="module")
def parse():
    from tdflow.tdparser import parse_file

    return lambda defs: parse_file(MAIN, include_dirs=[DATA], defines=defs, use_cache=False)


@pytest.mark.parametrize(("defs", "count"), COMBOS, ids=IDS)
def test_group_selection(parse, defs, count):
    """Without the oracle: each -D selection yields the op count llvm-tblgen gives."""
    assert len(parse(defs).instances_of("OneFlow_BaseOp")) == count


def test_op_shape(parse):
    from tdflow.tdparser import Dag, DefRef

    rk = parse(defines(*GROUPS))
    leaky = rk["OneFlow_LeakyReluOp"]
    assert leaky["opName"] == "leaky_relu"
    args = leaky["arguments"]
    assert isinstance(args, Dag) and args.operator == DefRef("ins")
    assert args.arg_names == ("x", "op_name", "device_tag", "device_name", "scope_symbol_id",
                              "hierarchy", "alpha", "input_sizes", "output_sizes")
    assert leaky["has_logical_tensor_desc_infer_fn"] == 1 and leaky["has_check_fn"] == 0
    alpha = rk[args.arg_values[6].name]
    assert alpha["defaultValue"] == "0." and alpha["baseAttr"] == DefRef("F32Attr")
    assert rk["OneFlow_ScalarPowOp"]["index_in_group"] == 4
    assert rk["OneFlow_Conv3DOp"]["default_strides"] == [1, 1, 1]
    assert rk["OneFlow_ReduceSumOp"]["signature"] == "(axis, keepdims)"
    assert rk["OneFlow_ReduceSumOp"]["has_check_fn"] == 1
    assert rk["OneFlow_ReduceMeanOp"]["has_check_fn"] == 0
    assert "OneFlow_CeilGradOp" not in rk and "OneFlow_ExpGradOp" in rk
    assert rk["OneFlow_Summary"]["selected"] == "ACTIVATION NN "
