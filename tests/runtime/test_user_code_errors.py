"""A user's kernel that raises is located twice (issue 24, item 4): the op (and its program
location when compiled) and the kernel's own function, file and line, in eager and compiled
mode alike; from the CLI, without a traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tdflow

TD = """include "tdflow/Base.td"
def K_Dialect : Dialect { let name = "kerr"; }
class K_Op<string m, list<Trait> t = []> : TDF_Op<m, t> { let opDialect = K_Dialect; }
def K_BadOp : K_Op<"bad", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "1">:$axis);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
"""

HOOKS = textwrap.dedent('''\
    from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc
    from tdflow.runtime.kernels.registry import register_kernel


    @infer_logical_tensor_desc("kerr.bad")
    def shape(ctx):
        ctx.set_output_shape("y", ctx.input_shape("x"))


    @infer_data_type("kerr.bad")
    def dtype(ctx):
        ctx.set_output_dtype("y", ctx.input_dtype("x"))


    def scale_of(attrs):
        return attrs["axsi"]


    @register_kernel("kerr.bad", device="cpu", dtypes=("f32",))
    def bad_kernel(attrs, inputs, outs):
        return [inputs[0] * scale_of(attrs)]
''')

PROG = """func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "kerr.bad"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("kerr")
    (d / "k.td").write_text(TD)
    (d / "kerr_hooks.py").write_text(HOOKS)
    (d / "p.mlir").write_text(PROG)
    return d


def _where(files):
    hooks = str(files / "kerr_hooks.py")
    return (f"in bad_kernel ({hooks}:21), raised in scale_of at {hooks}:16: "
            f"KeyError: 'axsi'")


def test_compiled_and_eager_name_the_kernel_line(files):
    ctx = tdflow.load_ops(files / "k.td", hooks=[files / "kerr_hooks.py"])
    x = np.ones(3, np.float32)
    with pytest.raises(tdflow.TdflowError) as compiled:
        tdflow.compile(files / "p.mlir", ops=ctx)(x)
    assert "'kerr.bad' at " in str(compiled.value) and "p.mlir:2:3" in str(compiled.value)
    assert _where(files) in str(compiled.value)
    with pytest.raises(tdflow.TdflowError) as eager:
        ctx.functional.kerr.bad(tdflow.tensor(x)).numpy()
    assert "'kerr.bad'" in str(eager.value) and _where(files) in str(eager.value)


def test_the_cli_says_it_without_a_traceback(files):
    r = subprocess.run([sys.executable, "-m", "tdflow", "run", "--ops", str(files / "k.td"),
                        "--hooks", str(files / "kerr_hooks.py"), str(files / "p.mlir")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "p.mlir:2:3: error:" in r.stderr and _where(files) in r.stderr
