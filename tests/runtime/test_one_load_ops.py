"""One ``load_ops``: a user library loaded once runs its formula ops eagerly, compiled and
through the CLI, with no call that registers their kernels (issue 19, item 6)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest
from tdflow.dialect import context as dialect_context
from tdflow.runtime import library

import tdflow

ROOT = Path(__file__).resolve().parents[2]

# Each test gets its own dialect name: kernels are registered by op name for the process, so
# an op loaded by an earlier test must not make a later one pass.
LIBRARY = '''include "tdflow/Base.td"
def L_Dialect : Dialect {{ let name = "{name}"; }}
def L_SoftOp : Op<L_Dialect, "soft", [NoMemoryEffect, Elementwise, SameOperandsAndResultType]> {{
  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "2.">:$k);
  let results = (outs TDF_Tensor:$y);
  let formula = [{{ x * k + 1 }}];
}}
def L_MixOp : Op<L_Dialect, "mix", [NoMemoryEffect, Elementwise]> {{
  let arguments = (ins TDF_Tensor:$a, TDF_Tensor:$b);
  let results = (outs TDF_Tensor:$y);
  let formula = [{{ a > b ? a - b : b * 0.5 }}];
}}
'''

PROGRAM = '''func.func @f(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %0 = "{name}.soft"(%x) {{k = 3.0 : f32}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "{name}.mix"(%0, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}}
'''


def _reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    s = x * np.float32(3.0) + np.float32(1.0)
    return np.where(s > w, s - w, w * np.float32(0.5)).astype(np.float32)


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return (rng.standard_normal((2, 3)).astype(np.float32),
            rng.standard_normal((2, 3)).astype(np.float32))


def _write(tmp_path: Path, name: str) -> tuple[Path, Path]:
    td = tmp_path / f"{name}.td"
    td.write_text(LIBRARY.format(name=name))
    prog = tmp_path / f"{name}.mlir"
    prog.write_text(PROGRAM.format(name=name))
    return td, prog


def test_there_is_one_load_ops():
    assert tdflow.load_ops is dialect_context.load_ops
    assert library.load_ops is dialect_context.load_ops
    checks = [dialect_context.provided(c) for c in dialect_context.LOAD_CHECKS]
    assert library.check_signature_fields in checks


def test_loaded_once_the_formula_ops_run_eagerly(tmp_path):
    td, _ = _write(tmp_path, "ole")
    lib = tdflow.load_ops(td)
    x, w = _inputs()
    got = lib.functional.mix(lib.functional.soft(tdflow.tensor(x), k=3.0), tdflow.tensor(w))
    np.testing.assert_allclose(got.numpy(), _reference(x, w), rtol=1e-6)


def test_loaded_once_the_formula_ops_compile(tmp_path):
    td, prog = _write(tmp_path, "olc")
    lib = tdflow.load_ops(td)
    x, w = _inputs()
    got = tdflow.compile(prog, ops=lib)(x, w)
    np.testing.assert_allclose(np.asarray(got), _reference(x, w), rtol=1e-6)


def test_a_context_from_the_dialect_has_the_functional_api(tmp_path):
    td, _ = _write(tmp_path, "old")
    ctx = dialect_context.load_ops(td)
    x, w = _inputs()
    got = ctx.functional.old.soft(tdflow.tensor(x), k=3.0)
    np.testing.assert_allclose(got.numpy(), x * np.float32(3.0) + np.float32(1.0), rtol=1e-6)


def test_the_cli_selects_kernels_of_formula_ops(tmp_path, capsys):
    """``tdflow opt`` builds its own kernel table: it failed with "no kernel registered for
    ...soft" before the table registered the context's formula kernels itself."""
    from tdflow.cli import main

    td, prog = _write(tmp_path, "olo")
    status = main(["opt", "--ops", str(td), str(prog),
                   "--pipeline", "infer-shapes,select-kernels"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert '"olo.soft"' in out and "no kernel" not in err


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found; cudasim needs it")
def test_loaded_once_the_formula_ops_run_on_cudasim(tmp_path):
    td, prog = _write(tmp_path, "olg")
    lib = tdflow.load_ops(td)
    x, w = _inputs()
    got = tdflow.compile(prog, ops=lib, device="cudasim")(x, w)
    np.testing.assert_allclose(np.asarray(got), _reference(x, w), rtol=1e-6)


def test_only_the_runtime_s_kernel_seam_registers_formula_kernels():
    """Entry points ask :func:`~tdflow.runtime.op_kernels.kernel_table_for` (or run eager ops);
    none derives formula kernels itself (``add_formula_kernels``), so none can forget to."""
    allowed = {ROOT / "runtime" / "op_kernels.py"}
    callers = []
    for path in [*ROOT.glob("runtime/**/*.py"), *ROOT.glob("tdflow/**/*.py"),
                 *ROOT.glob("lowering/**/*.py"), *ROOT.glob("dialect/**/*.py")]:
        if path in allowed or "kernels" in path.relative_to(ROOT).parts[:2]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name | ast.alias | ast.Attribute):
                name = getattr(node, "id", None) or getattr(node, "name", None) \
                    or getattr(node, "attr", None)
                if name == "add_formula_kernels":
                    callers.append(str(path.relative_to(ROOT)))
    assert not callers, f"register formula kernels through runtime/op_kernels.py: {callers}"
