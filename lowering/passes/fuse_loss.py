"""The sparse cross-entropy and its gradient in one launch (a rewrite of ``fuse-elementwise``).

A training step's loss ``sparse_softmax_cross_entropy(prediction, label) -> (prob, out)`` is
followed, in the backward pass, by ``sparse_softmax_cross_entropy_grad(label, dy, prob)``.
When ``prob`` is used by that gradient only (its ``softmax_grad`` term for ``dprob`` was
dropped with a zero ``dprob``) and ``dy`` exists before the loss (a constant seed, as
``sgd_step`` and ``value_and_grad`` fold it, or an argument), the two become one
``sparse_softmax_cross_entropy_with_grad(prediction, label, dy) -> (out, prediction_diff)``
where the loss was: its kernels compute the softmax in the gradient's buffer and finish the
gradient there, the bits of the two launches (``prob`` never materialised, the labels read and
checked once).

Why a pass and not a rule of ``canonical.td``: a DRR pattern replaces the results of its root
op only, and here two ops' results are replaced (the gradient's and the loss's ``out``, which
has users of its own); the fused op is also lowering-only (no gradient of its own, no
functional API), like ``matmul_bias``.

>>> from tdflow.dialect.ir.parser import parse_module
>>> m = parse_module('''func.func @f(%x: tensor<2x3xf32>, %l: tensor<2xi64>, %dy: tensor<2xf32>)
...     -> (tensor<2xf32>, tensor<2x3xf32>) {
...   %p, %o = "tdflow.sparse_softmax_cross_entropy"(%x, %l) {depth = 3 : si64} : (tensor<2x3xf32>, tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2xf32>)
...   %g = "tdflow.sparse_softmax_cross_entropy_grad"(%l, %dy, %p) {depth = 3 : si64} : (tensor<2xi64>, tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
...   return %o, %g : tensor<2xf32>, tensor<2x3xf32>
... }''')
>>> func = next(iter(m))
>>> fuse_loss_grad(func, Rewriter()), [op.name for op in func.body.ops][0]
(1, 'tdflow.sparse_softmax_cross_entropy_with_grad')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tdflow.dialect.ir import Operation, Rewriter
from tdflow.dialect.ir.attrs import to_python
from tdflow.dialect.types import TensorType

if TYPE_CHECKING:
    from tdflow.dialect.ir.core import FuncOp, Value

__all__ = ["SCE", "SCE_GRAD", "SCE_WITH_GRAD", "fuse_loss_grad"]

CONSTANT = "tdflow.constant"
SCE = "tdflow.sparse_softmax_cross_entropy"
SCE_GRAD = "tdflow.sparse_softmax_cross_entropy_grad"
SCE_WITH_GRAD = "tdflow.sparse_softmax_cross_entropy_with_grad"


def _depth(op: Operation, classes: int) -> int:
    """The op's effective ``depth`` (0 or absent: the class dim)."""
    depth = to_python(op.attributes["depth"]) if "depth" in op.attributes else 0
    return int(depth or 0) or classes


def _ready_before(v: Value, anchor: Operation, pos: dict[Operation, float], rw: Rewriter) -> bool:
    """``v`` is a block argument or the result of an op placed before ``anchor``, or of a
    ``tdflow.constant`` (which reads nothing), then moved before ``anchor``: the seed
    autodiff emits after the forward pass."""
    if v.op is None or (v.op in pos and pos[v.op] < pos[anchor]):
        return True
    if v.op.name != CONSTANT or v.op.operands or v.op.parent is not anchor.parent:
        return False
    rw.move_before(anchor, v.op)
    pos[v.op] = pos[anchor] - 0.5
    return True


def fuse_loss_grad(func: FuncOp, rw: Rewriter) -> int:
    """Replace each loss + gradient pair described in the module docstring by one
    ``sparse_softmax_cross_entropy_with_grad``; returns how many were replaced."""
    ops = list(func.body.ops)
    pos: dict[Operation, float] = {o: i for i, o in enumerate(ops)}
    changed = 0
    for grad in ops:
        if grad.name != SCE_GRAD or grad.parent is None or len(grad.operands) != 3:
            continue
        label, dy, prob = grad.operands
        sce = prob.op
        if (sce is None or sce.name != SCE or sce.parent is not grad.parent
                or len(sce.results) != 2 or sce.results[0] is not prob
                or sce.operands[1] is not label or set(prob.users) != {grad}
                or not _ready_before(dy, sce, pos, rw)):
            continue
        t = prob.type
        if not (isinstance(t, TensorType) and t.is_static and t.shape):
            continue
        classes = t.shape[-1]
        if _depth(sce, classes) != classes or _depth(grad, classes) != classes:
            continue
        attrs = {k: v for k, v in sce.attributes.items() if k == "depth"}
        fused = Operation(SCE_WITH_GRAD, [sce.operands[0], label, dy],
                          [sce.results[1].type, grad.results[0].type], attrs, sce.loc)
        rw.insert_before(sce, fused)
        rw.replace_op(grad, [fused.results[1]])
        rw.replace_op(sce, [fused.results[1], fused.results[0]])  # prob has no user left
        pos[fused] = pos[sce]
        changed += 1
    return changed
