"""What ``tdflow lower --nproc N`` prints about SBP: every value's chosen nd_sbp and the boxing
ops ``infer-sbp`` inserted, in program order, with their source locations."""

from __future__ import annotations

from tdflow.dialect.ir.core import RETURN, Module
from tdflow.dialect.ir.printer import value_names

from .passes.infer_sbp import function_sbp
from .sbp_ir import SBP_ATTR, hierarchy_of, nd_sbp_of, nd_text

__all__ = ["sbp_report"]


def sbp_report(module: Module, nproc: int) -> str:
    """A table per function (run ``infer-sbp`` on ``module`` first).

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.ir.parser import parse_module
    >>> from tdflow.lowering.pass_manager import PassManager
    >>> m = parse_module('''func.func @f(%x: tensor<4x3xf64> {sbp = [#sbp.S<0>]}) -> (tensor<4x3xf64> {sbp = [#sbp.B]}) {
    ...   %0 = "tdflow.relu"(%x) : (tensor<4x3xf64>) -> tensor<4x3xf64>
    ...   return %0 : tensor<4x3xf64>
    ... }''', "p.mlir")
    >>> _ = PassManager.parse("infer-sbp{nproc=2}", dialect=standard_dialect()).run(m)
    >>> print(sbp_report(m, 2))
    // SBP of @f on hierarchy [2]
    //   %x       [S(0)]  argument #0
    //   %0       [S(0)]  tdflow.relu at p.mlir:2:3
    //   %1       [B]     boxing tdflow.boxing_all_gather{axis=0,mesh_axis=0} at p.mlir:3:3
    //   results  [B]
    //   boxing ops: 1
    """
    out = []
    for func in module:
        names = value_names(func)
        rows: list[tuple[str, str, str]] = []
        args, results = function_sbp(func)
        for i, (v, nd) in enumerate(zip(func.args, args)):
            rows.append((names[v], nd_text(nd), f"argument #{i}"))
        boxing = 0
        for op in func.body:
            if op.name == RETURN or SBP_ATTR not in op.attributes:
                continue
            what = f"{op.name} at {op.loc}"
            if op.name.startswith("tdflow.boxing_"):
                boxing += 1
                keys = ("axis", "in_axis", "out_axis", "mesh_axis")
                detail = ",".join(f"{k}={op.attributes[k].value}" for k in keys
                                  if k in op.attributes)
                what = f"boxing {op.name}{{{detail}}} at {op.loc}"
            for r, a in zip(op.results, op.attributes[SBP_ATTR].value):
                rows.append((names[r], nd_text(nd_sbp_of(a)), what))
        rows.append(("results", ", ".join(nd_text(nd) for nd in results), ""))
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        out.append(f"// SBP of @{func.name} on hierarchy {list(hierarchy_of(func, nproc))}")
        out += [f"//   {a:<{w0}}  {b:<{w1}}  {c}".rstrip() for a, b, c in rows]
        out.append(f"//   boxing ops: {boxing}")
    return "\n".join(out)
