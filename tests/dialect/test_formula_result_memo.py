"""``infer.formula_result_types`` memoizes on the operand types and the type-deciding
attributes only: differential against the same calls with the memo off, in both orders, and
errors reported on every call."""

from __future__ import annotations

import itertools

import pytest
from tdflow.dialect import infer, standard_dialect
from tdflow.dialect.hooks.context import HookError
from tdflow.dialect.types import TensorType as T

D = standard_dialect()
TYPES = [T((4, 3), "f32"), T((4, 3), "i32"), T((2,), "f16"), T((None, 3), "f64"), T((3,), "i64")]
SCALAR_ATTRS = [
    {"has_int_operand": True, "has_float_operand": False, "int_operand": 2, "float_operand": 0.0},
    {"has_int_operand": True, "has_float_operand": False, "int_operand": -7, "float_operand": 0.0},
    {"has_int_operand": False, "has_float_operand": True, "int_operand": 0, "float_operand": 0.5},
    {"has_int_operand": False, "has_float_operand": True, "int_operand": 0, "float_operand": 2.0},
]
CASES = (
    [("tdflow.scalar_add", [t], a) for t, a in itertools.product(TYPES, SCALAR_ATTRS)]
    + [("tdflow.scalar_mul", [t], a) for t, a in itertools.product(TYPES, SCALAR_ATTRS)]
    + [("tdflow.leaky_relu", [t], {"alpha": a}) for t in TYPES for a in (0.1, 0.2, -3.0)]
    + [("tdflow.softplus", [t], {"beta": b, "threshold": th}) for t in TYPES
       for b, th in ((1.0, 20.0), (2.0, 0.5))]
    + [("tdflow.broadcast_add", [a, b], {}) for a, b in itertools.product(TYPES, TYPES)]
)


def run_all(cases):
    out = []
    for name, inputs, attrs in cases:
        op = D.lookup(name)
        try:
            out.append(infer.formula_result_types(op, inputs, attrs))
        except HookError as exc:
            out.append(f"error: {exc.message}")
    return out


@pytest.fixture
def fresh_memo(monkeypatch):
    monkeypatch.setattr(infer, "_FORMULA_RESULTS", {})


def test_memo_gives_what_fresh_computation_gives_in_any_order(fresh_memo, monkeypatch):
    memo_fwd = run_all(CASES)
    memo_rev = run_all(CASES[::-1])[::-1]
    monkeypatch.setattr(infer, "bounded_put", lambda cache, key, value: None)  # memo off
    fresh = run_all(CASES)
    assert memo_fwd == fresh
    assert memo_rev == fresh
    assert any(isinstance(r, str) for r in fresh)  # some cases are errors ...
    assert any(not isinstance(r, str) for r in fresh)  # ... most are not


def test_constants_share_one_entry_and_deciding_attributes_do_not(fresh_memo):
    relu = [("tdflow.leaky_relu", [T((4,), "f32")], {"alpha": a / 7}) for a in range(50)]
    run_all(relu)
    assert len(infer._FORMULA_RESULTS) == 1
    run_all([("tdflow.scalar_add", [T((4,), "i32")], a) for a in SCALAR_ATTRS])
    assert len(infer._FORMULA_RESULTS) > 2


def test_errors_are_reported_every_time(fresh_memo):
    op = D.lookup("tdflow.broadcast_add")
    for _ in range(2):
        with pytest.raises(HookError, match="do not broadcast|broadcast"):
            infer.formula_result_types(op, [T((4,), "f32"), T((3,), "f32")], {})
    assert not infer._FORMULA_RESULTS


def test_an_attribute_that_picks_the_result_type_keys_the_memo(tmp_path, fresh_memo):
    """A user formula whose bool attribute picks a branch of another type: the memo must tell
    the two apart (its float constant must not)."""
    from tdflow.dialect.context import load_ops

    td = tmp_path / "u.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def U_Dialect : Dialect { let name = "u"; }\n'
                  'def U_PickOp : TDF_FormulaOp<"pick", [Elementwise]> {\n'
                  '  let opDialect = U_Dialect;\n'
                  '  let input = (ins TDF_Tensor:$x);\n'
                  '  let attrs = (ins DefaultValuedAttr<BoolAttr, "false">:$flag,\n'
                  '                   DefaultValuedAttr<F64Attr, "0.">:$c);\n'
                  '  let output = (outs TDF_Tensor:$y);\n'
                  '  let formula = [{ flag ? x > c : x + c }];\n}\n')
    op = load_ops(td, std=False).lookup("u.pick")
    cases = [("u.pick", [T((4,), "f32")], {"flag": f, "c": c}) for f in (True, False, True)
             for c in (0.5, 1.5)]
    got = []
    for _name, inputs, attrs in cases:
        got.append(infer.formula_result_types(op, inputs, attrs))
    assert [r[0].dtype for r in got] == ["i1", "i1", "f32", "f32", "i1", "i1"]
    assert len(infer._FORMULA_RESULTS) == 2
