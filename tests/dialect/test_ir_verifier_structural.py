"""The structural verifier: golden bad programs (expected diagnostics with line and column in
each file's header), the pluggable dialect hook, and rendering with source line and caret."""

from __future__ import annotations

from pathlib import Path

import pytest
from tdflow.dialect.ir import Builder, FuncOp, Operation, parse_module
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.ir.verifier import parse_and_verify, verify_module
from tdflow.dialect.types import TensorType

GOLDEN = Path(__file__).parent / "test_ir_golden"
T = TensorType((4,), "f32")


def diagnose(path: Path, dialect=None) -> list[str]:
    """Every diagnostic for the file, as ``ERROR: line:col: message`` / ``NOTE: ...`` lines."""
    try:
        module = parse_module(path.read_text(), str(path))
        diags = verify_module(module, dialect)
    except DiagnosticError as exc:
        diags = exc.diagnostics
    out = []
    for d in diags:
        assert d.loc.file == str(path)
        out.append(f"{d.severity.upper()}: {d.loc.line}:{d.loc.col}: {d.message}")
        for n in d.notes:
            out.append(f"{n.severity.upper()}: {n.loc.line}:{n.loc.col}: {n.message}")
    return out


def expected(path: Path) -> list[str]:
    return [line[3:] for line in path.read_text().splitlines()
            if line.startswith(("// ERROR:", "// NOTE:"))]


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.mlir")), ids=lambda p: p.stem)
def test_golden_bad_program(path):
    assert expected(path), "a golden file lists its expected diagnostics"
    assert diagnose(path) == expected(path)


def test_golden_corpus_is_big_enough():
    assert len(list(GOLDEN.glob("*.mlir"))) >= 15


def test_render_has_source_line_and_caret():
    path = GOLDEN / "use_before_def.mlir"
    with pytest.raises(DiagnosticError) as ei:
        parse_and_verify(path.read_text(), str(path))
    assert ei.value.render().splitlines() == [
        f"{path}:4:22: error: use of '%1' before its definition (operand #0 of 'tdflow.relu' "
        "does not dominate this use)",
        '  %0 = "tdflow.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>',
        "                     ^",
        f"{path}:5:3: note: '%1' is defined here",
        '  %1 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>',
        "  ^",
    ]


def test_valid_program_has_no_diagnostics():
    m = parse_and_verify("""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }""")
    assert verify_module(m) == []


class FakeDialect:
    """Duck-typed dialect: knows relu and leaky_relu; leaky_relu needs an alpha."""

    ops = {"tdflow.relu", "tdflow.leaky_relu"}

    def __init__(self):
        self.seen = []

    def lookup(self, name):
        return name if name in self.ops else None

    def suggest(self, name):
        return sorted(o for o in self.ops if o.split(".")[-1][:3] == name.split(".")[-1][:3])

    def verify_operation(self, op, emit):
        self.seen.append(op.name)
        if op.name == "tdflow.leaky_relu" and "alpha" not in op.attributes:
            emit("'tdflow.leaky_relu' needs attribute 'alpha'",
                 notes=[("declared in ops.td", op.loc)])
        if len(op.operands) != 1:
            emit(f"expected 1 operand, got {len(op.operands)}", loc=op.operands[-1].loc)


def test_dialect_hook_unknown_ops_and_emit():
    text = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relux"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "tdflow.leaky_relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "tdflow.relu"(%1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "other.op"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}"""
    d = FakeDialect()
    diags = verify_module(parse_module(text, "d.mlir"), d)
    assert [(x.loc.line, x.loc.col, x.message) for x in diags] == [
        (1, 14, "expected 1 operand, got 2"),  # emitted at the location it was given
        (2, 3, "unknown operation 'tdflow.relux'; did you mean 'tdflow.relu'?"),
        (3, 3, "'tdflow.leaky_relu' needs attribute 'alpha'"),
        (5, 3, "unknown operation 'other.op'"),
    ]
    assert diags[2].notes[0].message == "declared in ops.td"
    assert d.seen == ["tdflow.leaky_relu", "tdflow.relu"]  # never called for func.return
    assert verify_module(parse_module(text)) == []  # without a dialect: structure only


def test_python_built_ir_is_checked_too():
    b = Builder()
    with b.func("f", [T], [T]) as f:
        stray = Operation("tdflow.relu", [f.args[0]], [T])  # never inserted
        late = b.create("tdflow.relu", [stray.result], [T])
        b.ret(late.result)
    with b.func("g", [T], [T]):
        b.ret(f.args[0])  # a value of @f
    msgs = [d.message for d in verify_module(b.module)]
    assert msgs == [
        "operand #0 of 'tdflow.relu' is a value defined in outside any function, not in @f",
        "operand #0 of 'func.return' is a value defined in @f, not in @g",
    ]
    assert isinstance(f, FuncOp)
