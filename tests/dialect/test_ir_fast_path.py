"""The parser's fast path (``body_parser._FAST_OP``, ``Block.append_new``, interned types) builds
what the general parser builds: differential on the benchmark's varied program and on lines the
fast path must decline, plus ``append_new`` against ``Operation`` + ``append``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from tdflow.dialect.ir import body_parser
from tdflow.dialect.ir.core import UNKNOWN_LOC, Block, Operation
from tdflow.dialect.ir.equality import module_diff
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.types import TensorType

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from ir_bench import generate_varied  # noqa: E402

_NEVER = re.compile(r"(?!)")


def _both(text: str, monkeypatch):
    fast = parse_module(text, "p.mlir")
    with monkeypatch.context() as m:
        m.setattr(body_parser, "_FAST_OP", _NEVER)  # every op takes the general path
        slow = parse_module(text, "p.mlir")
    return fast, slow


def _shape(module) -> list:
    """Everything module_diff leaves out: locations, value names, use counts, order."""
    out = []
    for f in module.funcs:
        for op in f.body:
            out.append((str(op.loc), [r.name for r in op.results],
                        [sorted((str(u.loc), n) for u, n in r.users.items()) for r in op.results],
                        op.parent is f.body, op.prev_op.loc if op.prev_op else None))
    return out


def test_varied_program_parses_the_same_both_ways(monkeypatch):
    text = generate_varied(3000, 6)
    calls = []
    real = body_parser.BodyParser.fast_ops

    def counting(self, pos, block):
        n = len(block)
        out = real(self, pos, block)
        calls.extend([1] * (len(block) - n))
        return out

    monkeypatch.setattr(body_parser.BodyParser, "fast_ops", counting)
    fast, slow = _both(text, monkeypatch)
    assert len(calls) > 2900  # the fast path took (nearly) every op
    assert module_diff(fast, slow) is None
    assert _shape(fast) == _shape(slow)
    assert len(fast.funcs[0].body) == len(slow.funcs[0].body) > 400


LINES = [
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0:2 = "t.a"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)',
    '%0 = "t.a"(%x)  {alpha = 0.5 : f32}  : (tensor<4xf32>) -> tensor<4xf32>   // c',
    '%0 = "t.a"(%x) <{p = array<i64: 1>}> {q} : (tensor<4xf32>) -> tensor<4xf32>',
    '"t.a"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> ()',
    '%0 = "t.a"(%x#0) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x , %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32> loc("f.mlir":9:2)',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>' + " " * 40 + "x",
    '%0 = "t.a"(%x' + " " * 40 + ', %x) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) {s = "}"} : (tensor<4xf32>) -> tensor<4xf32>',
    '%abc.d-e = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xi32>',
    '%0 = "t.a"(%x, %x) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  // note\n\n\t%1 = "t.a"(%0) : '
    '(tensor<4xf32>) -> tensor<4xf32> // more\n  %2 = "t.a"(%1) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>\r\n  %1 = "t.a"(%0) : (tensor<4xf32>) -> '
    'tensor<4xf32>\r\n',
    '%0 = "t.a"(%1) : (tensor<4xf32>) -> tensor<4xf32>\n  %1 = "t.a"(%x) : (tensor<4xf32>) -> '
    'tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  %0 = "t.a"(%0) : (tensor<4xf32>) -> '
    'tensor<4xf32>',
    # an op the general parser reads (over three lines) between fast ones: the fast path's
    # line count walks on from the line of the op before it
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  %1 = "t.a"(%0)\n {k = [1,\n 2]} : '
    '(tensor<4xf32>) -> tensor<4xf32>\n\n  %2 = "t.a"(%1) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n%1 = "t.a"(%0) : (tensor<4xf32>) -> '
    'tensor<4xf32>\n\n%2 = "t.a"(%1) : (tensor<4xf32>) -> tensor<4xf32>',  # at column 1
    '%0 = "t.a"(%x, %x#0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x,%x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%0) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%y) : (tensor<4xf32>) -> tensor<4xf32>',
    '%0 = "t.a"(%x) : (tensor<4xi32>) -> tensor<4xf32>',
]


@pytest.mark.parametrize("line", LINES)
def test_each_line_gives_what_the_general_parser_gives(line, monkeypatch):
    text = f"func.func @f(%x: tensor<4xf32>) {{\n  {line}\n  return\n}}\n"

    def outcome():
        try:
            m = parse_module(text, "p.mlir")
        except Exception as exc:  # noqa: BLE001 - the diagnostic text is what is compared
            return type(exc).__name__, str(exc)
        return [(op.name, str(op.loc), [str(r.type) for r in op.results], dict(op.attributes))
                for op in m.funcs[0].body], [str(d) for d in m.parse_diagnostics]

    fast = outcome()
    with monkeypatch.context() as m:
        m.setattr(body_parser, "_FAST_OP", _NEVER)
        assert outcome() == fast


def test_uses_share_the_defining_type_object():
    t = "tensor<4xf32>"
    m = parse_module(f'func.func @f(%x: {t}) -> {t} {{\n'
                     f'  %0 = "t.a"(%x) : ({t}) -> {t}\n'
                     f'  %1 = "t.b"(%0) {{k = 1}} : ({t}) -> {t}\n'
                     f'  %2 = "t.c"(%1, %0) : ({t}, {t}) -> {t}\n'
                     f'  return %2 : {t}\n}}\n')
    a, b, c, _ = m.funcs[0].body.ops
    assert b.results[0].type is a.results[0].type is c.results[0].type


def test_append_new_builds_what_operation_and_append_build():
    t = TensorType((2,), "f32")
    for n_results in (0, 1, 3):
        b1, b2 = Block([t, t]), Block([t, t])
        ops = []
        for blk in (b1, b2):
            x, y = blk.args
            first = blk.append(Operation("t.first", [x], [t]))
            operands = (first.results[0], y, first.results[0])
            if blk is b1:
                op = blk.append(Operation("t.op", operands, [t] * n_results, {"k": 1},
                                          UNKNOWN_LOC))
            else:
                op = blk.append_new("t.op", operands, [t] * n_results, {"k": 1}, UNKNOWN_LOC)
            ops.append((first, op))
        (f1, o1), (f2, o2) = ops
        assert len(b1) == len(b2) == 2 and b2.first is f2 and b2.last is o2
        assert f2.next_op is o2 and o2.prev_op is f2 and o2.next_op is None
        assert o2.parent is b2 and o2.func is None
        assert [(r.type, r.index, r.name, r.owner is o2) for r in o2.results] == \
            [(r.type, r.index, r.name, True) for r in o1.results]
        assert f2.results[0].users == {o2: 2} and b2.args[1].users == {o2: 1}
        assert f1.results[0].users == {o1: 2}
        assert o2.attributes == o1.attributes and o2.loc is o1.loc


@pytest.mark.parametrize("text", ["", "\n", "a", "a\n", "\n\nab\nc", "ab\r\ncd\n\n", "x\n" * 50])
def test_locations_count_lines_and_columns(text):
    from tdflow.dialect.ir.lexer import Lexer

    lexer = Lexer(text, "f.mlir")
    for pos in range(len(text) + 1):
        line = text.count("\n", 0, pos) + 1
        col = pos - (text.rfind("\n", 0, pos) + 1) + 1
        loc = lexer.loc(pos)
        assert (loc.line, loc.col) == (line, col)
