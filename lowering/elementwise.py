"""Elementwise math written once: a scalar expression IR, rendered to numpy and to CUDA C.

An elementwise op is a scalar formula over its inputs (by position) and its attributes (by name).
The formula is a tree of frozen dataclasses; Python operators build it:

>>> x = Input(0)
>>> leaky = where(x > 0, x, x * Attr("alpha"))
>>> leaky
where(gt(in0, 0), in0, mul(in0, @alpha))
>>> bind(leaky, {"alpha": 0.25})
where(gt(in0, 0), in0, mul(in0, 0.25))

Comparisons build nodes too (``x > 0`` above); structural equality stays ``==`` on nodes, as
usual for dataclasses, so use :func:`eq`/:func:`ne` to build equality tests.

Renderers
    * :func:`render_numpy` (``lowering/elementwise_numpy.py``) walks a tree once into a chain of
      ufunc calls writing into reused scratch buffers and the caller's ``out``; no text is
      generated or evaluated.
    * :func:`render_cuda` (``lowering/elementwise_cuda.py``) returns a C expression string for a
      CUDA kernel body (``__expf``, ``tanhf``, ``erff``, ``fmaxf``... chosen by dtype; ``f16``
      computes in ``float``).

Fusion: :func:`compose` substitutes expressions for inputs, splicing the inner expression's
inputs in at the replaced position, so the fused operand list is
``operands[:i] + inner_operands + operands[i+1:]``; :func:`dedup_inputs` then merges inputs
that are the same SSA value.

>>> add = Input(0) + Input(1)
>>> compose(add, {0: exp(Input(0))})
add(exp(in0), in1)
>>> compose(add, {1: Input(0) * Input(1)})
add(in0, mul(in1, in2))

The node classes, builders and tree utilities live in the dialect
(:mod:`tdflow.dialect.formula.expr`: an op's ``formula`` field is parsed into them) and are
re-exported here unchanged, so ``from tdflow.lowering.elementwise import Input`` keeps working.
Element types (``compute_dtype``, ``promote``, ``infer_dtypes``) live in
:mod:`tdflow.dialect.formula.types` (also ``lowering/elementwise_types.py``), re-exported here.

``ELEMENTWISE_OPS`` (``lowering/elementwise_ops.py``, re-exported here) maps each elementwise op name
(``tdflow.relu``...) to its :class:`~tdflow.lowering.elementwise_ops.ElementwiseDef`.
"""

from __future__ import annotations

from tdflow.dialect.formula.expr import (  # noqa: F401 - re-exported (the IR moved to the dialect)
    ARITH_BINARY_OPS,
    BINARY_OPS,
    CAST_DTYPES,
    COMPARE_OPS,
    FLOAT_UNARY_OPS,
    LOGICAL_BINARY_OPS,
    UNARY_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Scalar,
    Select,
    Unary,
    __all__,
    abs_,
    arity,
    as_expr,
    attrs_used,
    bind,
    cast,
    ceil,
    compose,
    dedup_inputs,
    eq,
    erf,
    exp,
    expr_depth,
    floor,
    fold_constants,
    ge,
    gt,
    inputs_used,
    le,
    log,
    logical_and,
    logical_not,
    logical_or,
    lt,
    maximum,
    minimum,
    mod,
    ne,
    power,
    remap_inputs,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
    transform,
    walk,
    where,
)

_TYPE_NAMES = ("compute_dtype", "infer_dtypes", "operand_dtype", "promote")


def __getattr__(name: str):  # renderers and types live in their own modules (PEP 562 re-export)
    if name in _TYPE_NAMES:
        from tdflow.lowering import elementwise_types

        return getattr(elementwise_types, name)
    if name in ("render_numpy", "NumpyProgram"):
        from tdflow.lowering import elementwise_numpy

        return getattr(elementwise_numpy, name)
    if name in ("ELEMENTWISE_OPS", "ElementwiseDef"):
        from tdflow.lowering import elementwise_ops

        return getattr(elementwise_ops, name)
    if name == "render_cuda":
        from tdflow.lowering import elementwise_cuda

        return elementwise_cuda.render_cuda
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


