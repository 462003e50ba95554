"""The parser's stamps (``Operation.stamp``) and what trusts them (``as_parsed=True`` of
``verify_module`` and ``print_module``): differential against the same calls without, which
run the dialect's check and the printer on every op. The diagnostics (each op's own, warnings
included) and the text must be the same."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.ir.printer import print_module

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from ir_bench import generate_varied  # noqa: E402

T = "tensor<4x8xf32>"


def _diags(text: str, as_parsed: bool, strict: bool = False) -> list[str]:
    m = parse_module(text, "p.mlir")
    return [f"{d.severity}: {d}" for d in verify_module(m, standard_context(), strict,
                                                           as_parsed=as_parsed)]


def _check(text: str) -> list[str]:
    """Both ways equal (verification, strict too, and printing); the diagnostics."""
    got = _diags(text, True)
    assert got == _diags(text, False)
    assert _diags(text, True, strict=True) == _diags(text, False, strict=True)
    for generic in (False, True):
        assert (print_module(parse_module(text, "p.mlir"), generic=generic, as_parsed=True)
                == print_module(parse_module(text, "p.mlir"), generic=generic))
    return got


def _func(*lines: str, args: str = f"%x: {T}", ret: str = "%x") -> str:
    body = "".join(f"  {s}\n" for s in lines)
    return f"func.func @f({args}) -> {T} {{\n{body}  return {ret} : {T}\n}}\n"


def test_same_text_ops_share_a_stamp_others_do_not():
    m = parse_module(_func(f'%0 = "tdflow.relu"(%x) : ({T}) -> {T}',
                           f'%1 = "tdflow.relu"(%0) : ({T}) -> {T}',
                           f'%2 = "tdflow.tanh"(%1) : ({T}) -> {T}',
                           f'%3 = "tdflow.leaky_relu"(%2) {{alpha = 0.5 : f32}} : ({T}) -> {T}',
                           f'%4 = "tdflow.leaky_relu"(%3) {{alpha = 0.25 : f32}} : ({T}) -> {T}',
                           f'%5 = "tdflow.leaky_relu"(%4) {{alpha = 0.5 : f32}} : ({T}) -> {T}'),
                     "p.mlir")
    s = [op.stamp for op in m.funcs[0].body]
    assert s[0] is not None and s[0] is s[1]
    assert len({id(x) for x in s[1:5]}) == 4  # another name, another attribute text
    assert s[5] is s[3]
    assert s[6] is None  # the custom `return`: the general parser


def test_no_stamp_when_an_operand_is_not_its_written_type():
    text = _func(f'%0 = "tdflow.relu"(%x) : (tensor<4x9xf32>) -> {T}',
                 f'%1 = "tdflow.relu"(%x) : ({T}) -> {T}', ret="%1")
    ops = list(parse_module(text, "p.mlir").funcs[0].body)
    assert ops[0].stamp is None and ops[1].stamp is not None
    assert any("type mismatch" in d for d in _check(text))


def test_forward_and_numbered_uses_take_no_stamp():
    text = _func(f'%0 = "tdflow.relu"(%1) : ({T}) -> {T}',
                 f'%1 = "tdflow.relu"(%x) : ({T}) -> {T}', ret="%0")
    ops = list(parse_module(text, "p.mlir").funcs[0].body)
    assert ops[0].stamp is None
    assert any("before its definition" in d for d in _check(text))
    text = _func(f'%0 = "tdflow.relu"(%x#0) : ({T}) -> {T}', ret="%0")
    assert list(parse_module(text, "p.mlir").funcs[0].body)[0].stamp is None
    _check(text)


def test_every_instance_keeps_its_own_diagnostics():
    # a discardable attribute (a warning, an error with strict) and an invalid op, each
    # repeated with the same text: every op reports, and the valid ones between stay quiet
    bad = f'"tdflow.matmul"(%0, %x) : ({T}, {T}) -> {T}'
    note = f'"tdflow.relu"(%0) {{my_note = 1 : i64}} : ({T}) -> {T}'
    text = _func(f'%0 = "tdflow.relu"(%x) : ({T}) -> {T}', f"%1 = {bad}", f"%2 = {note}",
                 f'%3 = "tdflow.relu"(%x) : ({T}) -> {T}', f"%4 = {bad}", f"%5 = {note}",
                 ret="%3")
    got = _check(text)
    assert sum("my_note" in d for d in got) == 2
    assert sum(d.startswith("error") and "'tdflow.matmul' op" in d for d in got) == 2
    assert [d.split(":")[2] for d in got] == ["3", "4", "6", "7"]  # lines 5 and 2: quiet


def test_stamps_span_functions_and_types():
    t2 = "tensor<2x8xf32>"
    text = (_func(f'%0 = "tdflow.relu"(%x) : ({T}) -> {T}', ret="%0")
            + f"func.func @g(%x: {t2}) -> {t2} {{\n"
            f'  %0 = "tdflow.relu"(%x) : ({t2}) -> {t2}\n'
            f'  %1 = "tdflow.relu"(%x) : ({T}) -> {t2}\n'  # an operand of another type
            f"  return %0 : {t2}\n}}\n"
            + _func(f'%0 = "tdflow.relu"(%x) : ({T}) -> {T}', ret="%0").replace("@f", "@h"))
    assert any("type mismatch" in d for d in _check(text))


@pytest.mark.parametrize("ops,funcs", [(2000, 4), (500, 1)])
def test_varied_program(ops, funcs):
    assert _check(generate_varied(ops, funcs)) == []


def test_locs_print_without_stamps():
    text = _func(f'%0 = "tdflow.relu"(%x) : ({T}) -> {T}', f'%1 = "tdflow.relu"(%0) : ({T}) -> {T}',
                 ret="%1")
    m = parse_module(text, "p.mlir")
    out = print_module(m, locs=True, as_parsed=True)
    assert out == print_module(m, locs=True) and '"p.mlir":3:3' in out


_FILES = sorted(p for d in ("tests", "examples") for p in (ROOT / d).rglob("*.mlir"))


@pytest.mark.parametrize("path", _FILES, ids=[str(p.relative_to(ROOT)) for p in _FILES])
def test_repository_programs(path):
    from tdflow.dialect.ir import DiagnosticError
    from tdflow.dialect.ir.split_input import split_input

    for chunk in split_input(path.read_text(encoding="utf-8", errors="replace"), True):
        try:
            _check(chunk.text)
        except DiagnosticError:  # a chunk the parser rejects: nothing stamped to compare
            continue


# Float templates (BodyParser._new_rest): an op whose rest of the line differs from one read
# before only in its last float constant is read from that one's template. Each variant below,
# after a template op, must parse to what it parses to alone (where no template exists): the
# same attributes (bit for bit, the sign of zero included), the same printed text, the same
# error; and the same diagnostics and text as_parsed or not.
_TEMPLATES = [
    ('"tdflow.leaky_relu"(%x) {alpha = 2.500000e-01 : f32}', "f32"),
    ('"tdflow.scalar_mul"(%x) {has_float_operand = true, float_operand = 5.000000e-01 : f64}',
     "f64"),
    ('"tdflow.leaky_relu"(%x) {alpha = 2.5e-01 : f16}', "f16"),
    ('"tdflow.leaky_relu"(%x) {alpha = 0.25 : bf16}', "bf16"),
    ('"tdflow.leaky_relu"(%x) <{alpha = 0.25 : f32}>', "f32"),  # properties
]
_CONSTANTS = ["1.000000e-01", "-3.750000e+00", "0.0", "-0.0", "1.", "-1.5e7", "0.1",
              "1.0000001", "3.4028236e+38", "9.9e+38", "6.6e+04", "7.0e+04", "1.0e-45",
              "1.0e-50", "4.9e-324", "12345678901234567890.5", "1.5e123", "3.3e+99"]


def _one(line: str) -> str:
    return _func(f"%0 = {line} : ({T}) -> {T}", ret="%0")


def _parsed(text: str):
    from tdflow.dialect.ir import DiagnosticError
    try:
        m = parse_module(text, "p.mlir")
    except DiagnosticError as e:
        return None, e.render()
    return m, None


def _bits(attrs: dict) -> list:
    import struct
    return [(k, type(a).__name__, str(a), struct.pack("<d", a.value) if hasattr(a, "type")
             and isinstance(getattr(a, "value", None), float) else a) for k, a in attrs.items()]


@pytest.mark.parametrize("template,ftype", _TEMPLATES)
def test_float_template_equals_reading_alone(template, ftype):
    first = template.replace("%x", "%y")
    templated = 0
    for c in _CONSTANTS:
        head, _, _ = template.rpartition("= ")
        close = "}>" if "<{" in template else "}"
        line = f"{head}= {c} : {ftype}{close}"
        alone, err_alone = _parsed(_one(line))
        text = _func(f"%y = {first} : ({T}) -> {T}", f"%0 = {line} : ({T}) -> {T}", ret="%0")
        both, err_both = _parsed(text)
        if alone is None:  # the same error, at the same line (the op's, one down)
            assert err_both is not None, (line, err_alone)
            assert err_both.replace("p.mlir:3:", "p.mlir:2:") == err_alone, line
            continue
        assert err_both is None, (line, err_both)
        op_alone = list(alone.funcs[0].body)[0]
        y, op = list(both.funcs[0].body)[:2]
        assert _bits(op.attributes) == _bits(op_alone.attributes), line
        assert op.loc.line == 3 and op.loc.col == op_alone.loc.col
        templated += op.stamp is None  # read from the template (no stamp)
        # the op's printed line after its operands (its names differ: another position)
        printed = [[ln.partition(")")[2] for ln in print_module(m).splitlines()
                    if '"tdflow.' in ln][-1] for m in (both, alone)]
        assert printed[0] == printed[1], line
        _check(text)
    assert templated >= 8  # the template did the reading (not the first op's path again)


def test_float_template_is_used_and_takes_no_stamp():
    lines = [f'%{i} = "tdflow.leaky_relu"(%{i - 1 if i else "x"}) {{alpha = {c} : f32}} : '
             f"({T}) -> {T}" for i, c in enumerate(["0.5", "0.25", "0.5", "-2.0"])]
    lines.append(f'%4 = "tdflow.relu"(%3) {{alpha = 0.125 : f32}} : ({T}) -> {T}')
    text = _func(*lines, ret="%4")
    ops = list(parse_module(text, "p.mlir").funcs[0].body)
    # the first reads the template; the second and fourth are made from it (no stamp, and
    # their rest of the line is not kept); the third repeats the first's text: its stamp
    assert ops[0].stamp is not None and ops[1].stamp is None and ops[3].stamp is None
    assert ops[2].stamp is ops[0].stamp
    assert ops[4].stamp is not None  # another op name: its own read
    assert [op.attributes["alpha"].value for op in ops[:5]] == [0.5, 0.25, 0.5, -2.0, 0.125]
    assert any("alpha" in d for d in _check(text))  # relu's discardable alpha: a warning


def test_float_template_keeps_a_comment_and_what_follows():
    lines = [f'%0 = "tdflow.leaky_relu"(%x) {{alpha = 0.5 : f32}} : ({T}) -> {T} // c',
             f'%1 = "tdflow.leaky_relu"(%0) {{alpha = 0.75 : f32}} : ({T}) -> {T} // c',
             f'%2 = "tdflow.leaky_relu"(%1) {{alpha = 0.875 : f32}} : ({T}) -> {T}']
    text = _func(*lines, ret="%2")
    ops = list(parse_module(text, "p.mlir").funcs[0].body)
    assert [op.attributes["alpha"].value for op in ops[:3]] == [0.5, 0.75, 0.875]
    assert [op.loc.line for op in ops] == [2, 3, 4, 5]
    _check(text)


def test_no_template_from_a_constant_in_a_comment_or_a_type():
    # the last `= constant : type}` of the line is in a comment, or in a type's encoding, and
    # equals the attribute's value: no template (else the next op would take its own
    # comment's constant as its attribute)
    for suffix, enc in (("// alpha = {c} : f32}}", ""), ("", ", {{alpha = {c} : f32}}")):
        t = T[:-1] + enc + ">" if enc else T
        lines = [f'%{i} = "tdflow.leaky_relu"(%{i - 1 if i else "x"}) {{alpha = 0.5 : f32}} : '
                 f"({t}) -> {t} " + suffix.format(c=c) for i, c in enumerate(["0.5", "0.75"])]
        m, err = _parsed(_func(*lines, ret="%1", args=f"%x: {t}"))
        if m is None:  # the encoding: not a type tdflow reads (the same either way)
            assert enc, err
            continue
        assert [op.attributes["alpha"].value for op in list(m.funcs[0].body)[:2]] == [0.5, 0.5]


def test_float_template_stamps_print_their_own_constant():
    # canonical constants ("%.6e" that reads back: the printer's spelling) take the stamp
    # (template, text); the printer puts each op's text in its template's line. Spellings
    # that are not the printer's (f32 "1.0000001e+00" is printed 1.000000e+00), and a line
    # whose constant's text appears twice, take the ordinary paths.
    cs = ["5.000000e-01", "2.500000e-01", "-7.500000e+00", "5.000000e-01", "1.000000e-01",
          "3.402823e+38", "1.000000e-45", "1.0000001e+00", "9.999999e-01", "0.5"]
    lines = []
    for i, c in enumerate(cs):
        prev = f"%{i - 1}" if i else "%x"
        lines += [f'%{i} = "tdflow.leaky_relu"({prev}) {{alpha = {c} : f32}} : ({T}) -> {T}']
    n = len(cs)
    for j, c in enumerate(cs):
        lines += [f'%{n + j} = "tdflow.scalar_mul"(%{n + j - 1}) {{has_float_operand = true, '
                  f"float_operand = {c} : f64}} : ({T}) -> {T}"]
    for j, c in enumerate(cs[:4]):  # the constant's text twice in the line
        k = 2 * n + j
        lines += [f'%{k} = "tdflow.scalar_mul"(%{k - 1}) {{has_float_operand = true, '
                  f"note = {c} : f64, float_operand = {c} : f64}} : ({T}) -> {T}"]
    text = _func(*lines, ret=f"%{2 * n + 3}")
    ops = list(parse_module(text, "p.mlir").funcs[0].body)
    tuples = [type(op.stamp) is tuple for op in ops]
    # the fourth repeats the first's text: the first's (rests cache) stamp
    assert tuples[:n] == [False, True, True, False, True, True, False, False, True, False]
    assert tuples[n:2 * n] == [False, True, True, False, True, True, True, False, True, False]
    assert ops[3].stamp is ops[0].stamp and ops[1].stamp[0] is ops[2].stamp[0]
    assert ops[2].stamp[1] == "-7.500000e+00"
    got = _check(text)  # printed as_parsed the same, generic too; the same diagnostics
    assert sum("note" in d for d in got) == 4  # a warning per op: none taken for another
