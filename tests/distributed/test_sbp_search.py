"""infer-sbp's choice: look-ahead against greedy (bytes actually sent), and arguments
without attributes."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir.parser import parse_module
from tdflow.lowering.pass_manager import PassManager
from tdflow.lowering.passes.infer_sbp import function_sbp

import tdflow
import tdflow.distributed as dist

# h = x @ w is cheapest as S(0) (x is S(0), w broadcast: nothing moves), but its consumer
# h @ w2 with w2 row-split then needs w2 gathered (16 KiB logical); producing h as S(1) instead costs
# a gather of the small x (4 KiB logical) and makes the second matmul S(1) x S(0) -> P, free.
FAN = """func.func @f(%x: tensor<64x8xf64> {sbp = [#sbp.S<0>]}, %w: tensor<8x512xf64>,
                  %w2: tensor<512x4xf64> {sbp = [#sbp.S<0>]}) -> tensor<64x4xf64> {
  %h = "tdflow.matmul"(%x, %w) : (tensor<64x8xf64>, tensor<8x512xf64>) -> tensor<64x512xf64>
  %y = "tdflow.matmul"(%h, %w2) : (tensor<64x512xf64>, tensor<512x4xf64>) -> tensor<64x4xf64>
  return %y : tensor<64x4xf64>
}"""


def _args(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((64, 8), (8, 512), (512, 4))]


def _sent(search):
    prog = dist.compile(FAN, 2, search=search)
    args = _args()

    def rank(_r):
        comm = dist.current()
        before = comm.bytes_sent
        out = prog(*args)
        return comm.bytes_sent - before, out

    return dist.run_threads(rank, 2)


def _sbp_of_h(search):
    m = parse_module(FAN)
    PassManager.parse(f"infer-sbp{{nproc=2,search={search}}}",
                      dialect=standard_dialect()).run(m)
    first = next(op for op in m["f"].body if op.name == "tdflow.matmul")
    return str(first.attributes["sbp"])


def test_lookahead_sends_fewer_bytes_than_greedy_and_computes_the_same():
    greedy, lookahead = _sent("greedy"), _sent("lookahead")
    expect = tdflow.compile(FAN)(*_args())
    for (_, out) in greedy + lookahead:
        np.testing.assert_allclose(out, expect, rtol=1e-12, atol=1e-12)
    g_bytes, l_bytes = greedy[0][0], lookahead[0][0]
    # greedy: all-gather of w2's half (256x4 f64) + the S(0) result's gather for the caller
    # (32x4); look-ahead: all-gather of x's half (32x8) + the P result's all-reduce (ring:
    # 2 (N-1)/N of 64x4)
    assert g_bytes == 256 * 4 * 8 + 32 * 4 * 8, g_bytes
    assert l_bytes == 32 * 8 * 8 + 64 * 4 * 8, l_bytes
    assert _sbp_of_h("greedy") == "[[#sbp.S<0>]]"
    assert _sbp_of_h("lookahead") == "[[#sbp.S<1>]]"


def test_an_unknown_search_is_an_error():
    with pytest.raises(Exception, match="search must be 'lookahead' or 'greedy'"):
        PassManager.parse("infer-sbp{nproc=2,search=best}",
                          dialect=standard_dialect()).run(parse_module(FAN))


def test_arguments_without_attributes_are_broadcast():
    # a builder (or a pass) may give attributes to the first arguments only
    m = parse_module(FAN)
    f = m["f"]
    f.arg_attrs = [dict(f.arg_attrs[0])]  # x's S(0) only; w and w2 have no entry at all
    f.res_attrs = []
    PassManager.parse("infer-sbp{nproc=2}", dialect=standard_dialect()).run(m)
    args, results = function_sbp(f)
    assert [str(a[0]) for a in args] == ["S(0)", "B", "B"]
    assert len(results) == 1
