"""``compile()`` on the CPU with the standard ops loads only the kernel modules its plan runs
(issue 23, lever 6: ``tdflow run`` of a small program imports 3 kernel families of 15, no GPU
devices' or boxing kernels): selection reads the shipped table, ``get`` imports one module
(``runtime.kernels.registry.builtin_kernel``). Each test runs in a fresh process, where the
registry has loaded nothing yet (in this one, other tests have loaded every kernel)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, *argv: str) -> str:
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


LAZY_THEN_FULL = """
from tdflow.lowering.kernel_data import SHIPPED, DataKernelTable, shipped_cpu_table
from tdflow.runtime.kernels.registry import AMBIENT, builtin_kernel, kernel_table
from tdflow.runtime.kernel_data_gen import fresh_table

data = DataKernelTable(shipped_cpu_table(), None)
cpu = [k for k in shipped_cpu_table()["kernels"] if k["device"] == "cpu"]
got = {}
# every module alone, in the reverse of the full load's order: registration order must not matter
for k in sorted(cpu, key=lambda k: k["module"], reverse=True):
    found = builtin_kernel(k["name"], k["module"])
    assert found is not None and found.name == k["name"], k["name"]
    assert found.describe() == k["describe"], (found.describe(), k["describe"])
    got[k["name"]] = found
kernel_table("cpu")  # the full load after them
assert builtin_kernel("cpu.relu", "tdflow.runtime.kernels.formula") is None  # loaded: the registry answers
assert all(AMBIENT.named(n) is k for n, k in got.items())
# the table a fresh process writes, from this registry: the same order per op, the same GPU
# kernels mirroring the CPU ones' constraints
assert fresh_table() == SHIPPED.read_text(encoding="utf-8")
print("ok", len(got))
"""


def test_each_kernel_module_alone_registers_what_the_table_says():
    out = _python(LAZY_THEN_FULL).split()
    assert out[0] == "ok" and int(out[1]) > 100


RUN = """
import hashlib, json, sys
import numpy as np
import tdflow
from tdflow.dialect.types import DTYPES
from tdflow.runtime.kernels import registry

full = sys.argv[1] == "full"
if full:
    registry.kernel_table("cpu")
out = {}
for path in sys.argv[2:]:
    prog = tdflow.compile(path)
    rng = np.random.default_rng(0)
    args = [(rng.standard_normal(shape) * 0.1 if dt.startswith("f") else
             rng.integers(0, 3, size=shape)).astype(DTYPES[dt])
            for _, shape, dt in prog.arguments]
    res = prog(*args)
    res = res if isinstance(res, tuple) else (res,)
    out[path] = [hashlib.sha256(np.ascontiguousarray(r).tobytes()).hexdigest() + str(r.dtype)
                 + str(r.shape) for r in res]
mods = sorted(m for m in sys.modules if m.startswith(("tdflow.runtime.kernels.",
                                                      "tdflow.lowering.cuda",
                                                      "tdflow.distributed")))
print(json.dumps({"results": out, "modules": mods, "loaded": bool(registry._loaded)}))
"""

ELEMENTWISE = """func.func @f(%x: tensor<3x5xf32>, %y: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>) {
  %0 = "tdflow.gelu"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = "tdflow.broadcast_mul"(%0, %y) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = "tdflow.tanh"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %3 = "tdflow.reduce_sum"(%2) {axis = [1]} : (tensor<3x5xf32>) -> tensor<3xf32>
  return %2, %3 : tensor<3x5xf32>, tensor<3xf32>
}
"""


@pytest.mark.parametrize("programs", [["examples/mlp.mlir", "examples/cnn.mlir"], ["ELEMENTWISE"]])
def test_a_lazily_loaded_plan_computes_what_the_full_table_computes(programs, tmp_path):
    """Bit for bit: the same kernels, the same native loops (the builder's module is loaded
    first, as the full load does)."""
    if programs == ["ELEMENTWISE"]:
        (tmp_path / "e.mlir").write_text(ELEMENTWISE)
        programs = [str(tmp_path / "e.mlir")]
    lazy = json.loads(_python(RUN, "lazy", *programs))
    full = json.loads(_python(RUN, "full", *programs))
    assert lazy["results"] == full["results"]
    assert not lazy["loaded"] and full["loaded"]
    assert not any(m.startswith(("tdflow.lowering.cuda", "tdflow.distributed",
                                 "tdflow.runtime.kernels.device")) for m in lazy["modules"])
    assert len(lazy["modules"]) < len(full["modules"])


FOREIGN = """
import numpy as np
import tdflow
from tdflow.runtime.kernels.registry import register_kernel

@register_kernel("tdflow.relu", dtypes=("f32",), priority=5, name="cpu.doc_relu_plus")
def relu_plus(attrs, inputs, outs):
    return [np.add(np.maximum(inputs[0], 0), 100, out=outs[0])]

prog = tdflow.compile('''func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}''')
print(prog(np.array([-1.0, 2.0], np.float32)).tolist())
"""


def test_a_users_kernel_registered_process_wide_is_selected_as_before():
    """The shipped table does not know a user's kernel: with one registered, compile selects
    from the registry (the user's higher-priority kernel wins)."""
    assert _python(FOREIGN).split("\n")[-2] == "[100.0, 102.0]"


ONE_FORMULA_THEN_FULL = """
from tdflow.dialect.dialect import standard_dialect
from tdflow.lowering.kernel_data import SHIPPED
from tdflow.runtime.kernels.registry import AMBIENT, builtin_kernel, kernel_table
from tdflow.runtime.kernel_data_gen import fresh_table

relu = builtin_kernel("cpu.relu", "tdflow.runtime.kernels.formula")
import tdflow.runtime.kernels.formula as formula  # imported by builtin_kernel already
assert relu is not None and relu.name == "cpu.relu" and relu.op == "tdflow.relu"
assert builtin_kernel("cpu.no_such_formula", "tdflow.runtime.kernels.formula") is None
registered = sorted(k.name for k in AMBIENT.kernels_of("tdflow.exp"))
print(sorted(formula._registered), registered, standard_dialect().ops.made())
kernel_table("cpu")  # the full load registers the other 70, in the library's order
assert AMBIENT.named("cpu.relu") is relu and len(formula._registered) > 60
assert fresh_table() == SHIPPED.read_text(encoding="utf-8")
print("ok")
"""


def test_the_formula_module_imported_for_one_kernel_registers_that_one():
    """Issue 23: a plan asking for ``cpu.relu`` gets the formula module to register relu's
    kernel only (not the 71 formula ops', each ``OpDef`` made from the library), and the full
    load after it registers the rest: the same registry, by the table a fresh process writes,
    as a full load alone."""
    out = _python(ONE_FORMULA_THEN_FULL).splitlines()
    assert out[-1] == "ok"
    ops, made = out[-2].rsplit(" ", 1)[0], int(out[-2].rsplit(" ", 1)[1])
    assert ops == "['tdflow.relu'] []", ops  # relu's kernel only, none of exp's yet
    assert made <= 3, made  # relu (and the no-such lookup's none)
