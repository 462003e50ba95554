"""``physicalize{rank=R,nproc=N}``: rewrite a program ``infer-sbp`` annotated into rank R's.

Every value's type becomes rank R's physical shape of its logical shape under the value's
nd_sbp (OneFlow's split rule, uneven splits included); attributes that spell a logical shape
(``expand_shape``, ``reshape``'s ``shape``, ``conv2d``'s ``filters``; ``lowering.sbp.
physical_attrs``) and every boxing op's ``out_shape`` become the rank's. The normal pipeline
(``infer-shapes``, ``fuse-elementwise``, ``select-kernels``, ``plan-memory``) then runs on one
rank's program.

Before (``S(0)`` on 2 ranks, rank 1)::

    %0 = "tdflow.relu"(%x) {sbp = [[#sbp.S<0>]]} : (tensor<5x3xf64>) -> tensor<5x3xf64>

after::

    %0 = "tdflow.relu"(%x) {sbp = [[#sbp.S<0>]]} : (tensor<2x3xf64>) -> tensor<2x3xf64>
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.attr_convert import to_attr
from tdflow.dialect.ir.core import RETURN
from tdflow.dialect.op_verify import operand_groups
from tdflow.dialect.sbp import B, NdSbp, SbpError, physical_shape
from tdflow.dialect.types import TensorType

from ..ir_access import diagnostic, op_attributes, op_def
from ..pass_manager import Pass, PassContext, PassFailure
from ..sbp import has_shape_attrs, physical_attrs
from ..sbp_ir import SBP_ATTR, hierarchy_of, nd_sbp_of

if TYPE_CHECKING:
    from tdflow.dialect.ir.core import FuncOp, Module, Operation

    from ..ir_access import Ops

__all__ = ["RANK_ATTR", "PhysicalizePass"]


class PhysicalizePass(Pass):
    name = "physicalize"
    summary = "rewrite every type and shape attribute to one rank's physical shapes"
    options = {"rank": 0, "nproc": 1}

    def run(self, module: Module, context: PassContext) -> None:
        rank, nproc = self.option("rank"), self.option("nproc")
        errors: list[Any] = []
        if not 0 <= rank < nproc:
            raise PassFailure(self.name, [diagnostic(f"rank {rank} is outside 0..{nproc - 1}")])
        for func in module:
            try:
                _physicalize(func, context.dialect, rank, nproc)
            except SbpError as exc:
                errors.append(diagnostic(f"@{func.name}: {exc}", func.loc))
        if errors:
            raise PassFailure(self.name, errors)


def _retype(value: Any, nd: NdSbp, hier: tuple[int, ...], rank: int) -> None:
    t = value.type
    if isinstance(t, TensorType) and t.shape is not None and all(
            isinstance(d, int) and d >= 0 for d in t.shape):
        value.type = TensorType(physical_shape(tuple(t.shape), nd, hier, rank), t.dtype)


#: The function attribute naming the rank a program was physicalized for (twice would shrink
#: the shapes twice).
RANK_ATTR = "physical_rank"


def _physicalize(func: FuncOp, dialect: Ops | None, rank: int, nproc: int) -> None:
    if RANK_ATTR in func.attributes:
        raise SbpError(f"already physicalized for rank {func.attributes[RANK_ATTR]}")
    hier = hierarchy_of(func, nproc)
    func.attributes[RANK_ATTR] = to_attr("si64", rank)
    if func.arg_attrs is None or any(SBP_ATTR not in (a or {}) for a in func.arg_attrs):
        raise SbpError("its arguments carry no SBP: run infer-sbp before physicalize")
    split: set[Any] = set()  # values some rank holds only a piece of
    for v, attrs in zip(func.args, func.arg_attrs):
        nd = nd_sbp_of(attrs[SBP_ATTR])
        _retype(v, nd, hier, rank)
        if any(s.kind == "S" for s in nd):
            split.add(v)
    for op in func.body:
        if op.name == RETURN:
            continue
        recorded = op.attributes.get(SBP_ATTR)
        nds = ([nd_sbp_of(a) for a in recorded.value] if recorded is not None
               else [(B,) * len(hier)] * len(op.results))
        for r, nd in zip(op.results, nds):
            _retype(r, nd, hier, rank)
            if any(s.kind == "S" for s in nd):
                split.add(r)
        touches_split = any(v in split for v in (*op.operands, *op.results))
        if op.name.startswith("tdflow.boxing_") or (has_shape_attrs(op.name) and touches_split):
            # a logical-shape attribute cannot be rewritten without the shapes
            if not all(isinstance(v.type, TensorType) and v.type.is_static
                       for v in (*op.operands, *op.results)):
                raise SbpError(f"{op.loc}: '{op.name}' needs static shapes to be "
                               f"physicalized; run infer-shapes before infer-sbp")
        if op.name.startswith("tdflow.boxing_"):
            op.attributes["out_shape"] = to_attr("shape", list(op.results[0].type.shape))
        elif has_shape_attrs(op.name) and touches_split:
            _rewrite_attrs(op, dialect)
    ret = func.body.terminator
    if ret is not None and ret.name == RETURN:
        func.result_types = [v.type for v in ret.operands]


def _rewrite_attrs(op: Operation, dialect: Ops | None) -> None:
    """The op's logical-shape attributes become the rank's (only the ones that changed)."""
    opdef = op_def(dialect, op.name)
    groups = operand_groups(opdef, op) if opdef is not None else None
    if groups is None:
        return
    shapes = {name: [tuple(v.type.shape) for v in vals] for name, vals in groups.items()}
    outs = [tuple(r.type.shape) for r in op.results]
    before = op_attributes(dialect, op)
    after = physical_attrs(op.name, {k: _py(v) for k, v in before.items()}, shapes, outs)
    kinds = {a.name: a.kind for a in opdef.attributes}
    for name, value in after.items():
        if name in kinds and value != _py(before.get(name)):
            op.attributes[name] = to_attr(kinds[name], value)


def _py(attr: Any) -> Any:
    from tdflow.dialect.ir.attrs import to_python

    return None if attr is None else to_python(attr)
