"""The share of attribute normalization in an uncached inference, per op.

``python bench/attr_normalize_bench.py``: for transpose, layer_norm, cumsum and pad (whose
attributes the dialect normalizes: ``TDF_PermAttr``, ``TDF_AxisAttr``, ``TDF_ScanAxisAttr``,
``TDF_DimsAttr``), the CPU time of ``normalize_attrs`` and of a whole ``infer_result_types``
with the dialect's result memo cleared first; columns take turns, best of 7 rounds.
"""

from __future__ import annotations

import time

from tdflow.dialect import standard_dialect
from tdflow.dialect.attr_normalize import normalize_attrs
from tdflow.dialect.types import TensorType as T

CASES = [
    ("tdflow.transpose", [T((2, 3, 4, 5), "f32")], {"perm": [0, 2, -1, 1]}),
    ("tdflow.layer_norm", [T((8, 16, 32), "f32")],
     {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-5}),
    ("tdflow.cumsum", [T((8, 16), "f32")], {"dim": -1}),
    ("tdflow.pad", [T((8, 16), "f32")],
     {"padding_before": [1, 0], "padding_after": [0, 2], "padding": []}),
]


def main(n: int = 2000, rounds: int = 7) -> None:
    d = standard_dialect()
    memo = d._results  # the result memo: cleared so each inference runs the hooks
    for op, ins, attrs in CASES:
        opdef = d.lookup(op)
        shapes = {opdef.operands[0].name: ins[0].shape}
        best = {"normalize": float("inf"), "infer": float("inf")}
        for _ in range(rounds):
            t0 = time.process_time()
            for _ in range(n):
                normalize_attrs(opdef, attrs, shapes)
            best["normalize"] = min(best["normalize"], (time.process_time() - t0) / n)
            t0 = time.process_time()
            for _ in range(n):
                memo.clear()
                d.infer_result_types(op, ins, attrs)
            best["infer"] = min(best["infer"], (time.process_time() - t0) / n)
        print(f"{op:18s} normalize {best['normalize'] * 1e6:5.1f} us   uncached infer "
              f"{best['infer'] * 1e6:5.1f} us   share {best['normalize'] / best['infer']:.0%}")


if __name__ == "__main__":
    main()
