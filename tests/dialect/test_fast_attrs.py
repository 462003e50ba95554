"""The scalar attribute-dictionary fast path reads exactly what the general parser reads, and
declines (``None``) everything else, errors included: differential against
``TypeAttrParser.parse_attr_dict``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.fast_attrs import scalar_attr_dict
from tdflow.dialect.ir.type_attr_parser import TypeAttrParser


def general(text: str):
    """What the general parser gives for ``text`` (a ``{...}`` dict), or the error's message."""
    p = TypeAttrParser(text, "a.mlir")
    try:
        p.expect("{")
        out = p.parse_attr_dict()
    except DiagnosticError as exc:
        return f"error: {exc}"
    if p.pos != len(text):
        return "error: trailing text"
    return out


def same(fast: dict, slow) -> bool:
    # the classes and the exact values: FloatAttr compares bit patterns, 1 == True must not pass
    return isinstance(slow, dict) and [(k, type(v), v) for k, v in fast.items()] == [
        (k, type(v), v) for k, v in slow.items()]


CASES = [
    "{}", "{ }", "{alpha = 5.002000e-01 : f32}", "{a = 1, b = -2 : si32, c = 3 : ui8}",
    "{has_float_operand = true, float_operand = 5.000000e-01 : f64}", "{x = 1.}",
    "{x = 1.5e+3 : bf16, y = -0.0 : f16}", "{k = 255 : i8}", "{k = 1 : i1, j = 0 : i1}",
    "{k = 007}", "{flag = false}", "{a.b = 1}", "{_x = 922337203685477580}",
    # declined: the general parser reads them (or reports them)
    "{k = 300 : i8}", "{k = -1 : ui8}", "{a = 1, a = 2}", "{x = 1e5}", "{x = 1 : f32}",
    "{x = 1.5 : i32}", "{x = 0x7F : i8}", "{x = 1.0e999 : f32}", "{u}", "{x = [1, 2]}",
    '{s = "a"}', "{x = 1 : index}", "{x = true : i1}", "{x = }", "{= 1}", "{x = 1,}",
    "{x = 1 2}", "{x = tru}", "{x = 99999999999999999999}", "{x = 1 : i64, y = 1 : i65}",
    "{x = 1 : si0}",
]


@pytest.mark.parametrize("text", CASES)
def test_fast_dict_is_the_general_one_or_declines(text):
    fast = scalar_attr_dict(text)
    if fast is not None:
        assert same(fast, general(text)), (fast, general(text))


def test_the_common_forms_take_the_fast_path():
    for text in CASES[:13]:
        assert scalar_attr_dict(text) is not None, text
    for text in ["{k = 300 : i8}", "{a = 1, a = 2}", "{x = [1, 2]}"]:
        assert scalar_attr_dict(text) is None, text


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_$.]{0,6}", fullmatch=True)
_values = st.one_of(
    st.sampled_from(["true", "false", "unit", "tru", "[1]", '"s"', "0x10"]),
    st.builds(lambda v, t: f"{v!r}" + (f" : {t}" if t else ""),
              st.floats(allow_nan=False, width=32) | st.floats(allow_nan=False),
              st.sampled_from([None, "f16", "bf16", "f32", "f64", "i32"])),
    st.builds(lambda v, t: f"{v}" + (f" : {t}" if t else ""), st.integers(-2**70, 2**70),
              st.sampled_from([None, "i1", "i8", "si8", "ui8", "i32", "si64", "ui64", "i64",
                               "f32", "index"])),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_names, _values), max_size=4), st.sampled_from([", ", ",", " , "]))
def test_random_dicts_agree(entries, sep):
    text = "{" + sep.join(f"{k} = {v}" for k, v in entries) + "}"
    fast = scalar_attr_dict(text)
    if fast is not None:
        assert same(fast, general(text)), text
    elif entries and all(v in ("true", "false") for _k, v in entries) and len(
            {k for k, _v in entries}) == len(entries):
        pytest.fail(f"declined a dict of booleans: {text}")
