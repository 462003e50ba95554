"""Programs over the integer types i16, ui8, ui16, ui32, ui64: they verify against the standard
library, print and parse back equal (dense constants up to ui64's largest value included), and
``mlir-opt-19 --allow-unregistered-dialect`` accepts what tdflow prints."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import verify_module
from tdflow.dialect.ir.parser import parse_module
from tdflow.dialect.ir.printer import print_module

MLIR_OPT = shutil.which("mlir-opt-19") or shutil.which("mlir-opt")

PROGRAM = """\
func.func @f(%a: tensor<3xui8>, %b: tensor<3xui8>, %c: tensor<3xi16>, %d: tensor<3xui64>) -> (tensor<3xui8>, tensor<3xi1>, tensor<3xui32>, tensor<3xi16>, tensor<3xui64>) {
  %k = "tdflow.dense_constant"() {value = dense<[18446744073709551615, 0, 7]> : tensor<3xui64>} : () -> tensor<3xui64>
  %h = "tdflow.dense_constant"() {value = dense<[-32768, 32767, 1]> : tensor<3xi16>} : () -> tensor<3xi16>
  %0 = "tdflow.broadcast_add"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %1 = "tdflow.broadcast_less"(%a, %b) : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xi1>
  %2 = "tdflow.cast"(%0) {dtype = ui32} : (tensor<3xui8>) -> tensor<3xui32>
  %3 = "tdflow.broadcast_maximum"(%c, %h) : (tensor<3xi16>, tensor<3xi16>) -> tensor<3xi16>
  %4 = "tdflow.broadcast_sub"(%d, %k) : (tensor<3xui64>, tensor<3xui64>) -> tensor<3xui64>
  return %0, %1, %2, %3, %4 : tensor<3xui8>, tensor<3xi1>, tensor<3xui32>, tensor<3xi16>, tensor<3xui64>
}
"""


def test_verifies_and_round_trips():
    m = parse_module(PROGRAM, "p.mlir")
    assert verify_module(m, standard_dialect()) == []
    text = print_module(m)
    for piece in ("tensor<3xui8>", "tensor<3xi16>", "dtype = ui32",
                  "dense<[18446744073709551615, 0, 7]> : tensor<3xui64>"):
        assert piece in text
    assert parse_module(text, "q.mlir") == m


def test_a_wrong_result_type_is_reported():
    bad = PROGRAM.replace("-> tensor<3xui32>\n", "-> tensor<3xi32>\n", 1)
    diags = verify_module(parse_module(bad, "p.mlir"), standard_dialect())
    assert any("ui32" in str(d) for d in diags), diags


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt-19 is not installed")
@pytest.mark.parametrize("flags", [[], ["--mlir-print-op-generic"]])
def test_mlir_opt_accepts_what_tdflow_prints(flags):
    text = print_module(parse_module(PROGRAM, "p.mlir"))
    out = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *flags], input=text,
                         capture_output=True, text=True, check=True).stdout
    assert parse_module(out, "r.mlir") == parse_module(text, "q.mlir")
