"""``--print-records`` (llvm-tblgen's default output) on the MLIR dialects issue 2 names.

The JSON sweep cannot see classes (``--dump-json`` only has defs); the printed records show every
class with its template arguments and unresolved field values, so they are compared too, block
by block, anonymous records renamed by content (jsoncompare.diff_print_records).
"""

from __future__ import annotations

import json

import pytest
from jsoncompare import diff_print_records
from oracle import mlir_include_dir, parser_available, run_llvm

pytestmark = pytest.mark.oracle

FILES = [
    "mlir/Dialect/Arith/IR/ArithOps.td",
    "mlir/Dialect/Math/IR/MathOps.td",
    "mlir/Dialect/Tosa/IR/TosaOps.td",
    "mlir/Dialect/Func/IR/FuncOps.td",
    "mlir/Dialect/Tensor/IR/TensorOps.td",
    "mlir/Dialect/Linalg/IR/LinalgStructuredOps.td",
    "mlir/Dialect/GPU/IR/GPUOps.td",
    "mlir/Dialect/LLVMIR/NVVMOps.td",
    "mlir/Dialect/LLVMIR/LLVMOps.td",
    "mlir/Dialect/SPIRV/IR/SPIRVOps.td",
]


@pytest.mark.parametrize("rel", FILES)
def test_print_records_matches_llvm_tblgen(rel, llvm_tblgen, mlir_include):
    if not parser_available():
        pytest.skip("tdparser's parse_file/to_json are not built yet")
    from tdflow.tdparser import parse_file, to_json
    from tdflow.tdparser.json_export import print_records

    path = mlir_include / rel
    incs = [str(mlir_include), str(path.parent)]
    text = run_llvm(llvm_tblgen, path, incs, action="--print-records")
    doc = run_llvm(llvm_tblgen, path, incs)
    assert text.ok and doc.ok, text.stderr
    rk = parse_file(path, include_dirs=incs, use_cache=False)
    diffs = diff_print_records(print_records(rk), text.stdout, to_json(rk), json.loads(doc.stdout))
    assert not diffs, f"{rel}:\n  " + "\n  ".join(diffs)


def test_files_exist():
    inc = mlir_include_dir()
    if inc is None:
        pytest.skip("MLIR .td files (Debian libmlir-19-dev) not installed")
    assert [f for f in FILES if not (inc / f).is_file()] == []
