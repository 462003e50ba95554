"""Rewrites that let ``fuse-elementwise`` merge a layer's epilogue into one launch.

Two rewrites, each giving the same bits as the program it replaces:

* **bias as an elementwise add.** ``bias_add(a, b)`` along the last axis is numpy's
  ``a + b`` with ``b`` broadcast over the rows (the same float add per element), so it fuses
  with the activation after it: ``relu(bias_add(matmul(x, w), b))`` becomes the matmul and one
  fused ``max(add(in0, in1), 0)``. Floating types only (``f32``, ``f64``): their add is the
  kernel's add; other axes keep ``bias_add``.
* **relu masks read relu's output.** The relu gradient ``where(gt(x, 0), dy, 0)`` reads the
  pre-activation ``x``, which then stays alive (and unfused) until the backward pass. For
  every ``x``, ``gt(max(x, 0), 0) == gt(x, 0)``: a NaN stays NaN under ``max`` (numpy's rule)
  and compares false either way, ``-0`` and negatives become ``0``, which is not ``> 0``. So
  an elementwise op whose every use of ``x`` is ``gt(x, 0)`` reads ``relu(x)`` instead, when
  that relu is computed before it; ``x`` then has the relu as its only user and fuses into it.
* **bias in the product's launch.** A last-axis ``bias_add`` left alone after fusion (its
  consumer is not elementwise, a softmax or a loss) whose operand is a ``matmul`` used by
  nothing else becomes one ``matmul_bias``: the product written into the output and the bias
  added there, which is what the two launches did (OneFlow's ``fused_matmul_bias``).

>>> from tdflow.dialect.formula.expr import Input
>>> only_positive_tests(where(Input(0) > 0, Input(1), 0), 0)
True
>>> only_positive_tests(where(Input(0) > 0, Input(0), 0), 0)
False
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.formula.expr import Binary, Const, Expr, Input, where  # noqa: F401
from tdflow.dialect.ir import RETURN, Operation
from tdflow.dialect.ir.attrs import to_python
from tdflow.dialect.types import TensorType

from ..ir_access import op_attributes

if TYPE_CHECKING:
    from tdflow.dialect.ir import Rewriter
    from tdflow.dialect.ir.core import FuncOp

    from ..ir_access import Ops

__all__ = ["BIAS_ADD", "MATMUL", "MATMUL_BIAS", "bias_add_expression", "fuse_matmul_bias",
           "is_relu", "only_positive_tests", "read_relu_outputs"]

BIAS_ADD = "tdflow.bias_add"
MATMUL = "tdflow.matmul"
MATMUL_BIAS = "tdflow.matmul_bias"
_FLOATS = ("f32", "f64")


def bias_add_expression(dialect: Ops | None, op: Operation) -> Expr | None:
    """``add(in0, in1)`` for a floating ``bias_add`` along the last axis, else ``None``.

    >>> bias_add_expression(None, type("Op", (), {"name": "tdflow.relu"})()) is None
    True
    """
    if op.name != BIAS_ADD or len(op.operands) != 2 or len(op.results) != 1:
        return None
    a, b = op.operands[0].type, op.operands[1].type
    out = op.results[0].type
    if not all(isinstance(t, TensorType) and t.is_static for t in (a, b, out)):
        return None
    if a.dtype not in _FLOATS or b.dtype != a.dtype or out != a or not a.shape:
        return None
    axis = int(to_python(op_attributes(dialect, op)["axis"]))
    rank = len(a.shape)
    if axis % rank != rank - 1 or tuple(b.shape) != (a.shape[-1],):
        return None  # another axis: numpy would broadcast b along the wrong dimension
    return Binary("add", Input(0), Input(1))


def is_relu(expr: Expr) -> bool:
    """Whether ``expr`` is ``max(in0, 0)`` (relu's formula, bound).

    >>> from tdflow.dialect.formula.expr import maximum
    >>> is_relu(maximum(Input(0), Const(0.0))), is_relu(maximum(Input(0), Const(1.0)))
    (True, False)
    """
    return (isinstance(expr, Binary) and expr.op == "max" and expr.a == Input(0)
            and isinstance(expr.b, Const) and not isinstance(expr.b.value, bool)
            and expr.b.value == 0)


def only_positive_tests(expr: Expr, k: int) -> bool:
    """Whether input ``k`` occurs in ``expr``, and only as ``gt(in_k, 0)`` (or ``lt(0, in_k)``):
    the tests that give the same answer for ``x`` and ``max(x, 0)``."""
    memo: dict[int, bool] = {}
    found = [False]
    target = Input(k)

    def ok(n: Expr) -> bool:
        key = id(n)
        if key in memo:
            return memo[key]
        if isinstance(n, Binary) and ((n.op == "gt" and n.a == target and _is_zero(n.b))
                                      or (n.op == "lt" and n.b == target and _is_zero(n.a))):
            found[0] = True
            result = True
        elif n == target:
            result = False
        else:
            result = all(ok(c) for c in n.children())
        memo[key] = result
        return result

    return ok(expr) and found[0]


def _is_zero(n: Expr) -> bool:
    return isinstance(n, Const) and not isinstance(n.value, bool) and n.value == 0


def read_relu_outputs(func: FuncOp, rw: Rewriter,
                      expression_of: Any) -> int:
    """Point operands used only through ``gt(x, 0)`` at ``relu(x)`` computed earlier (see the
    module docstring); ``expression_of(op)`` gives an op's ``(expr, names)`` or ``None``.
    Returns the number of operands rewritten."""
    order = {op: i for i, op in enumerate(func.body.ops)}
    relu_of: dict[Any, Operation] = {}  # value -> the earliest relu reading it
    for op in func.body.ops:
        if op.name == RETURN or len(op.operands) != 1 or len(op.results) != 1:
            continue
        x = op.operands[0]
        if op.results[0].type != x.type or x in relu_of:
            continue
        found = expression_of(op)
        if found is not None and is_relu(found[0]):
            relu_of[x] = op
    if not relu_of:
        return 0
    changed = 0
    for op in list(func.body.ops):
        if op.name == RETURN:
            continue
        for k, x in enumerate(op.operands):
            relu = relu_of.get(x)
            if relu is None or relu is op or order[relu] > order[op]:
                continue
            found = expression_of(op)
            if found is None or not only_positive_tests(found[0], k):
                continue
            if relu.results[0] in op.operands:
                continue  # the fused op reads relu(x) already: keep one operand per value
            rw.set_operand(op, k, relu.results[0])
            changed += 1
    return changed


def fuse_matmul_bias(func: FuncOp, dialect: Ops | None, rw: Rewriter) -> int:
    """Replace each ``bias_add(matmul(a, b), bias)`` along the last axis, the product used by
    nothing else, by ``matmul_bias(a, b, bias)`` with the matmul's attributes (see the module
    docstring); returns how many were replaced."""
    changed = 0
    for op in list(func.body.ops):
        if op.name != BIAS_ADD or bias_add_expression(dialect, op) is None:
            continue
        product = op.operands[0].op
        if (product is None or product.name != MATMUL or len(product.operands) != 2
                or set(op.operands[0].users) != {op} or op.operands[1] is op.operands[0]):
            continue
        fused = Operation(MATMUL_BIAS, [*product.operands, op.operands[1]],
                          [op.results[0].type], dict(product.attributes), op.loc)
        rw.insert_before(op, fused)
        rw.replace_op(op, [fused.results[0]])
        rw.erase_op(product)
        changed += 1
    return changed
