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
