"""Formula ops need no inference hooks, in the standard library too: shapes, dtypes and SBP
signatures of every standard formula op come from its formula (``dialect/infer.py``,
``dialect/formula_sbp.py``); what a formula cannot say the record says with traits
(``SameOperandsElementType``, ``SameOperandsShape``), operand constraints or a declared hook.

The SBP signatures are checked numerically: each is simulated on two ranks with numpy (an
evaluator of the formula's expression tree written here, independent of the kernels) and the
ranks' pieces must reassemble the whole result."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.formula.expr import Attr, Binary, Cast, Const, Input, Select, Unary
from tdflow.dialect.formula_sbp import formula_sbp_signatures
from tdflow.dialect.opdef import FORMULA_HOOKS
from tdflow.dialect.sbp import parse_sbp
from tdflow.dialect.types import TensorType as T

D = standard_dialect()
FORMULA_OPS = sorted(op.mnemonic for op in D if op.formula is not None)
# A hand-written inference hook a standard formula op keeps, and what it says that the formula
# cannot: none (where's operand rules are a check hook, not inference).
KEPT: dict[tuple[str, str], str] = {}


def test_every_elementwise_op_with_a_formula_is_counted():
    assert len(FORMULA_OPS) >= 70
    assert all(D.lookup(f"tdflow.{m}").has_trait("Elementwise") for m in FORMULA_OPS)


@pytest.mark.parametrize("mnemonic", FORMULA_OPS)
def test_no_standard_formula_op_has_hand_written_inference_hooks(mnemonic):
    op = D.lookup(f"tdflow.{mnemonic}")
    hooks = D.hooks_of(op.name)
    kept = {kind for kind in FORMULA_HOOKS if kind in hooks}
    assert kept == {k for (name, k) in KEPT if name == op.name}, kept
    assert op.formula_hooks == FORMULA_HOOKS and all(op.provides(k) for k in FORMULA_HOOKS)
    assert {k for k in FORMULA_HOOKS if op.declares(k)} == kept  # no flag restates the formula


def test_a_declared_but_missing_hook_is_still_reported(tmp_path):
    """A user op that declares a hook (formula or not) without registering it is a contract
    violation, as before: the formula exemption is for ops that declare nothing."""
    from tdflow.dialect.context import load_ops

    td = tmp_path / "u.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def U_Dialect : Dialect { let name = "u"; }\n'
                  'class U_Op<string m, list<Trait> t = []> : TDF_FormulaOp<m, t> {\n'
                  '  let opDialect = U_Dialect;\n}\n'
                  'def U_TwiceOp : U_Op<"twice", [Elementwise]> {\n'
                  '  let input = (ins TDF_Tensor:$x);\n  let output = (outs TDF_Tensor:$y);\n'
                  '  let formula = [{ x * 2 }];\n  let has_data_type_infer_fn = 1;\n}\n')
    ctx = load_ops(td, std=False)
    problems = [(op.name, kind) for op, _flag, kind, _msg in ctx.contract_problems()]
    assert ("u.twice", "infer_data_type") in problems


def test_traits_say_what_the_formula_cannot():
    with pytest.raises(InferError, match="'y' has element type i32 but 'x' has f32"):
        D.infer_result_types("tdflow.broadcast_add", [T((2,), "f32"), T((2,), "i32")])
    with pytest.raises(InferError, match=r"'dy' has shape \[3\] but 'y' has \[2, 3\]"):
        D.infer_result_types("tdflow.relu_grad", [T((2, 3), "f32"), T((3,), "f32")])
    with pytest.raises(InferError, match="'mask' must be an i1"):
        D.infer_result_types("tdflow.dropout_grad", [T((2,), "f32"), T((2,), "f32")])
    with pytest.raises(InferError, match="exactly one of has_int_operand"):
        D.infer_result_types("tdflow.scalar_mul", [T((2,), "f32")], {})
    assert D.infer_result_types("tdflow.where", [T((4, 1), "i1"), T((3,), "f16"), T((1,), "f16")]
                                ) == [T((4, 3), "f16")]
    with pytest.raises(InferError, match="'condition' must be a bool"):
        D.infer_result_types("tdflow.where", [T((2,), "f32"), T((2,), "f32"), T((2,), "f32")])
    with pytest.raises(InferError, match="'y' has element type f16 but 'x' has f32"):
        D.infer_result_types("tdflow.where", [T((2,), "i1"), T((2,), "f32"), T((2,), "f16")])


def test_partial_sums_where_the_formula_is_linear():
    def partials(name, types, attrs=None):
        return {tuple(v for _, v in s.inputs) for s in
                formula_sbp_signatures(D.lookup(f"tdflow.{name}"), types, attrs)
                if all(v == "P" for _, v in s.outputs)}

    f = [T((4, 8), "f32"), T((4, 8), "f32")]
    assert partials("broadcast_add", f) == partials("broadcast_sub", f) == {("P", "P")}
    assert partials("broadcast_mul", f) == partials("broadcast_div", f) == {("P", "B")}
    assert partials("dropout_grad", [T((4, 8), "f32"), T((4, 8), "i1")]) == {("P", "B")}
    assert partials("negative", f[:1]) == {("P",)}
    assert partials("scalar_mul", f[:1], {"has_float_operand": True}) == {("P",)}
    for affine in ("scalar_add", "relu", "square", "broadcast_maximum", "broadcast_pow"):
        op = D.lookup(f"tdflow.{affine}")
        assert partials(affine, f[:len(op.operands)]) == set(), affine


# ---- the numeric check: every derived signature, simulated on two ranks ----------------------
_NP = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
       "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil,
       "sign": np.sign, "rsqrt": lambda x: 1 / np.sqrt(x), "add": np.add, "sub": np.subtract,
       "mul": np.multiply, "div": np.divide, "max": np.maximum, "min": np.minimum,
       "pow": np.power, "gt": np.greater, "lt": np.less, "ge": np.greater_equal,
       "le": np.less_equal, "eq": np.equal, "ne": np.not_equal}


def _eval(e, xs, attrs):
    if isinstance(e, Input):
        return xs[e.index]
    if isinstance(e, Attr):
        return attrs[e.name]
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Cast):
        return _eval(e.x, xs, attrs)
    if isinstance(e, Select):
        return np.where(_eval(e.cond, xs, attrs), _eval(e.a, xs, attrs), _eval(e.b, xs, attrs))
    if isinstance(e, Unary):
        return _NP[e.op](_eval(e.x, xs, attrs))
    assert isinstance(e, Binary)
    return _NP[e.op](_eval(e.a, xs, attrs), _eval(e.b, xs, attrs))


def _pieces(x, sbp, rng):
    """The two ranks' pieces of ``x`` under ``sbp``."""
    if sbp.kind == "S":
        return np.array_split(x, 2, axis=sbp.axis)
    if sbp.kind == "P":  # rank 0 holds a random part, rank 1 the rest
        part = rng.standard_normal(x.shape)
        return [part, x - part]
    return [x, x]


def _supported(e) -> bool:
    from tdflow.dialect.formula.expr import walk

    return all(not isinstance(n, (Unary, Binary)) or n.op in _NP for n in walk(e))


NUMERIC = [m for m in FORMULA_OPS
           if _supported(D.lookup(f"tdflow.{m}").formula.expr)
           and all(o.dtypes is None or "f64" in o.dtypes for o in D.lookup(f"tdflow.{m}").operands)]
SHAPES = {1: [((4, 6),), ((3, 1, 5),)], 2: [((4, 6), (4, 6)), ((4, 6), (6,)), ((4, 1), (1, 6))],
          3: [((4, 6), (4, 6), (6,)), ((4, 1), (6,), (4, 6))]}


@pytest.mark.parametrize("mnemonic", NUMERIC)
def test_each_signature_reassembles_the_result(mnemonic):
    op = D.lookup(f"tdflow.{mnemonic}")
    rng = np.random.default_rng(7)
    attrs = {a.name: a.default for a in op.attributes if a.default is not None}
    if "has_float_operand" in attrs:
        attrs.update(has_float_operand=True, float_operand=1.5)
    attrs = {k: (v if not isinstance(v, bool) else v) for k, v in attrs.items()}
    n = len(op.operands)
    shapes_list = SHAPES[n]
    if op.has_trait("SameOperandsShape"):
        shapes_list = [s for s in shapes_list if len(set(s)) == 1]
    checked = 0
    for shapes in shapes_list:
        xs = [rng.uniform(0.5, 2.0, size=s) for s in shapes]
        if op.operands[0].name == "condition":
            xs[0] = xs[0] > 1.2
        want = np.broadcast_to(_eval(op.formula.expr, xs, attrs), np.broadcast_shapes(*shapes))
        types = [T(s, "f64" if x.dtype != bool else "i1") for s, x in zip(shapes, xs)]
        for sig in formula_sbp_signatures(op, types, attrs):
            ins = [parse_sbp(v) for _, v in sig.inputs]
            (out,) = [parse_sbp(v) for _, v in sig.outputs]
            if any(s.kind == "P" for s in ins) and xs[0].dtype == bool:
                continue
            pieces = [_pieces(x, s, rng) for x, s in zip(xs, ins)]
            outs = _pieces(want, out, rng) if out.kind == "S" else [want, want]
            parts = [np.broadcast_to(_eval(op.formula.expr, [p[r] for p in pieces], attrs),
                                     outs[r].shape) for r in (0, 1)]
            got = (np.concatenate(parts, axis=out.axis) if out.kind == "S"
                   else parts[0] + parts[1] if out.kind == "P" else parts[0])
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{sig}")
            checked += 1
    assert checked >= len(shapes_list)


@pytest.mark.parametrize("mnemonic", FORMULA_OPS)
def test_memoized_result_types_equal_a_fresh_computation(mnemonic):
    """The result-type memo ignores float attribute values (a per-op alpha): for every formula
    op, dtype and a spread of float values, the memo's answer is what binding computes."""
    from tdflow.dialect.formula import dtypes as fd
    from tdflow.dialect.formula.types import default_out_dtype

    op = D.lookup(f"tdflow.{mnemonic}")
    checked = op.formula
    floats = [n for n, k in checked.attr_kinds.items() if k in ("f32", "f64")]
    for dts in (["f32"], ["f16"], ["i32"], ["f64"], ["i1"]):
        in_dtypes = dts * len(op.operands)
        if mnemonic == "where":
            in_dtypes = ["i1"] + dts * 2
        for value in (0.0, 1.0, -2.5, 0.3, float("inf")):
            attrs = {n: value for n in floats}
            try:
                got = fd.result_dtypes(checked, in_dtypes, attrs)
            except Exception:  # noqa: BLE001 - a dtype the formula rejects: nothing to compare
                continue
            values = checked.filled(attrs)
            for name, kind in checked.attr_kinds.items():
                values.setdefault(name, fd._PLACEHOLDER[kind])
            want = tuple(default_out_dtype(checked.bind(values, i), in_dtypes)
                         for i in range(len(checked.exprs)))
            assert got == want, (in_dtypes, attrs)
