"""The hook contract (OneFlow's has_*_fn bits vs registered hooks), the registry, the hook
context, SBP signatures and the other hook kinds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from tdflow.dialect import InferError, load_dialect, standard_dialect
from tdflow.dialect.gen_hooks import skeleton
from tdflow.dialect.hooks import (
    HookError,
    HookRegistry,
    InferContext,
    InputArgModifier,
    SbpSignature,
    check_attr,
    hook,
)
from tdflow.dialect.ir.diagnostics import DiagnosticError
from tdflow.dialect.types import TensorType as T

D = standard_dialect()

MY_TD = '''include "tdflow/Base.td"
def My_Dialect : Dialect { let name = "my"; }
class My_Op<string mnemonic, list<Trait> traits = []> : Op<My_Dialect, mnemonic, traits> {
  dag input = (ins);
  dag output = (outs);
  dag attrs = (ins);
  bit has_check_fn = 0;
  bit has_logical_tensor_desc_infer_fn = 0;
  bit has_data_type_infer_fn = 0;
  bit has_get_sbp_fn = 0;
}
def My_TwiceOp : My_Op<"twice", [NoMemoryEffect]> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "2.">:$factor);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
  let has_check_fn = 1;
}
def My_PlainOp : My_Op<"plain"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
}
'''


@pytest.fixture
def my_dialect(tmp_path):
    p = tmp_path / "my.td"
    p.write_text(MY_TD)
    return load_dialect(p, registry=HookRegistry())


def test_standard_dialect_keeps_the_contract():
    assert D.contract_problems() == []
    D.check_contract()


def test_declared_flag_without_hook(my_dialect):
    problems = my_dialect.contract_problems()
    assert {(op.name, flag, kind) for op, flag, kind, _ in problems} == {
        ("my.twice", "has_check_fn", "check_attr"),
        ("my.twice", "has_logical_tensor_desc_infer_fn", "infer_logical_tensor_desc"),
        ("my.twice", "has_data_type_infer_fn", "infer_data_type")}
    msg = next(m for op, f, k, m in problems if f == "has_check_fn")
    assert "my.twice" in msg and "has_check_fn" in msg and "check_attr" in msg
    with pytest.raises(DiagnosticError) as e:
        my_dialect.check_contract()
    text = e.value.render()
    assert "my.td:12:" in text and "def My_TwiceOp" in text and "3 errors" in text


def test_hook_without_flag(my_dialect):
    @hook("get_sbp", "my.plain", registry=my_dialect.registry)
    def plain_sbp(ctx):
        return []

    problems = [(op.name, f, k, m) for op, f, k, m in my_dialect.contract_problems()
                if op.name == "my.plain"]
    assert len(problems) == 1
    name, flag, kind, msg = problems[0]
    assert (flag, kind) == ("has_get_sbp_fn", "get_sbp")
    assert "plain_sbp" in msg and "let has_get_sbp_fn = 1;" in msg


def test_gen_hooks_skeleton_fulfils_the_contract(my_dialect, tmp_path):
    text, n = skeleton(my_dialect, "my.td")
    assert n == 3 and '@check_attr("my.twice")' in text
    path = tmp_path / "my_hooks.py"
    path.write_text(text)
    # The skeleton registers into the process-wide registry; load a dialect that uses it.
    spec = importlib.util.spec_from_file_location("my_hooks_skeleton", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["my_hooks_skeleton"] = module
    spec.loader.exec_module(module)
    d = load_dialect(Path(tmp_path / "my.td"))
    assert d.contract_problems() == []
    assert d.infer_result_types("my.twice", [T((3,), "f32")]) == [T((3,), "f32")]
    again, n2 = skeleton(d, "my.td")
    assert n2 == 0 and "nothing to write" in again


def test_registry_rejects_unknown_kinds_and_duplicates():
    reg = HookRegistry()
    with pytest.raises(ValueError, match="did you mean 'check_attr'"):
        reg.register("tdflow.x", "check_attrs", lambda ctx: None)

    def a(ctx):
        return None

    def b(ctx):
        return None

    reg.register("x", "check_attr", a)
    assert reg.get("tdflow.x", "check_attr") is a
    with pytest.raises(ValueError, match="already has a check_attr hook"):
        reg.register("tdflow.x", "check_attr", b)
    reg.register("tdflow.x", "check_attr", b, replace=True)
    assert reg.for_op("tdflow.x") == {"check_attr": b}
    with pytest.raises(TypeError):
        check_attr()


def test_hook_errors_become_infer_errors(my_dialect):
    reg = my_dialect.registry

    @hook("check_attr", "my.twice", registry=reg)
    def check(ctx: InferContext):
        if ctx.attr("factor") <= 0:
            ctx.fail("factor must be positive", attr="factor")

    @hook("infer_logical_tensor_desc", "my.twice", registry=reg)
    def shape(ctx: InferContext):
        ctx.set_output_shape("y", ctx.input_shape("x"))

    @hook("infer_data_type", "my.twice", registry=reg)
    def dtype(ctx: InferContext):
        ctx.set_output_dtype("y", ctx.input_dtype("x"))

    assert my_dialect.contract_problems() == []
    assert my_dialect.infer_result_types("my.twice", [T((2,), "f16")]) == [T((2,), "f16")]
    with pytest.raises(InferError, match="factor must be positive") as e:
        my_dialect.infer_result_types("my.twice", [T((2,), "f16")], {"factor": -1.0})
    assert e.value.attr == "factor"


def test_missing_hook_is_reported_when_inferring(my_dialect):
    with pytest.raises(InferError, match="no infer_logical_tensor_desc hook"):
        my_dialect.infer_result_types("my.twice", [T((2,), "f32")])


def test_context_api():
    op = D.lookup("tdflow.cat")
    ctx = InferContext(op, {"in": [T((2, 3), "f32"), T((4, 3), "f32")]}, {"axis": 0})
    assert ctx.input_size("in") == 2 and ctx.input_shape("in", 1) == (4, 3)
    assert ctx.has_input("in", 1) and not ctx.has_input("in", 2)
    assert ctx.input_names() == [("in", 0), ("in", 1)]
    with pytest.raises(HookError, match="no input in\\[5\\]"):
        ctx.input("in", 5)
    with pytest.raises(HookError, match="did not set the shape"):
        ctx.output_types()
    ctx.set_output(name="out", ty=T((6, 3), "f32"))
    assert ctx.output_types() == [T((6, 3), "f32")]


def test_sbp_signatures_as_data():
    sigs = D.sbp_signatures("tdflow.matmul", [T((8, 16), "f32"), T((16, 4), "f32")])
    assert all(isinstance(s, SbpSignature) for s in sigs)
    as_dicts = [s.as_dict() for s in sigs]
    assert {"inputs": {"a_0": "S(0)", "b_0": "B"}, "outputs": {"out_0": "S(0)"}} in as_dicts
    assert {"inputs": {"a_0": "B", "b_0": "S(1)"}, "outputs": {"out_0": "S(1)"}} in as_dicts
    assert {"inputs": {"a_0": "S(1)", "b_0": "S(0)"}, "outputs": {"out_0": "P"}} in as_dicts
    red = [s.as_dict() for s in D.sbp_signatures("tdflow.reduce_sum", [T((4, 8), "f32")],
                                                 {"axis": [1]})]
    assert {"inputs": {"input_tensor_0": "S(1)"}, "outputs": {"output_tensor_0": "P"}} in red
    assert {"inputs": {"input_tensor_0": "S(0)"}, "outputs": {"output_tensor_0": "S(0)"}} in red
    for op in D:  # every op has a get_sbp rule: a Python hook, or its formula's
        assert op.provides("get_sbp")
        assert op.declares("get_sbp") != bool(op.formula_hooks), op.name


def test_other_hook_kinds():
    flops = D.run_hook("tdflow.matmul", "compute_complexity", [T((8, 16), "f32"), T((16, 4), "f32")])
    assert flops == 2 * 8 * 16 * 4
    assert D.run_hook("tdflow.cast", "infer_device", [T((2,), "f32")],
                      {"dtype": "f16", "pin_memory": True}) == "cpu"
    assert D.run_hook("tdflow.cast", "infer_device", [T((2,), "f32")], {"dtype": "f16"}) is None
    assert D.run_hook("tdflow.constant", "infer_nd_sbp", [], {"dtype": "f32", "shape": [2]}) == {
        "out_0": ("B",)}
    assert D.run_hook("tdflow.relu", "compute_complexity", [T((2,), "f32")]) is None
    nd = D.run_hook("tdflow.reshape", "enumerate_nd_sbp_signatures", [T((4, 8), "f32")],
                    {"shape": [4, 2, 4]})
    assert [s.as_dict() for s in nd] == [{"inputs": {"in_0": "S(0)"}, "outputs": {"out_0": "S(0)"}}]


def test_modify_input_arg_and_mutable_operands():
    mods = D.input_arg_modifiers("tdflow.sgd_update")
    assert mods["model"] == InputArgModifier(is_mutable=True, requires_grad=False)
    assert D.input_arg_modifiers("tdflow.sparse_softmax_cross_entropy")["label"].requires_grad is False
    assert D.input_arg_modifiers("tdflow.relu") == {}
    assert D.mutable_operands("tdflow.sgd_update") == (0, 2)
    assert D.mutable_operands("tdflow.relu") == ()
    b = D.Builder()
    t = T((4,), "f32")
    with b.func("step", [t, t, t], [], arg_names=["w", "copy", "g"]) as f:
        w, copy, g = f.args
        op = b.sgd_update(w, g, copy, learning_rate_val=0.1)
        b.ret()
    assert op.operands == (w, g, copy)
    assert D.mutable_operands(op) == (0, 2)


def _example_instance(op):
    """Operand types and attributes of the op's description example, via the IR parser."""
    from tdflow.dialect.ir.parser import parse_module

    example = op.description.split("```mlir", 1)[1].split("```", 1)[0].strip()
    lhs, _, rhs = example.rpartition(" : ")
    ins = [t.strip() for t in rhs.partition(" -> ")[0].strip("()").split(", ") if t.strip()]
    names = lhs[lhs.index('"(') + 2:lhs.index(")")].split(", ")
    args = ", ".join(f"{n}: {t}" for n, t in zip([n for n in names if n], ins))
    module = parse_module(f"func.func @f({args}) {{\n  {example}\n  return\n}}\n")
    inst = module.funcs[0].body.first
    return [v.type for v in inst.operands], inst.attributes


def test_every_declared_hook_runs_on_the_examples():
    for op in D:
        types, attrs = _example_instance(op)
        for kind in op.hook_kinds:
            out = D.run_hook(op.name, kind, types, attrs)
            if kind == "get_sbp" or kind == "enumerate_nd_sbp_signatures":
                assert isinstance(out, list) and all(isinstance(s, SbpSignature) for s in out)
                blobs = {b for s in out for b, _ in s.inputs + s.outputs}
                assert all(v in ("B", "P") or v.startswith("S(") for s in out
                           for _, v in s.inputs + s.outputs), (op.name, out)
                assert blobs <= {f"{n}_{i}" for n in op.operand_names + op.result_names
                                 for i in range(4)}, (op.name, blobs)
            elif kind == "compute_complexity":
                assert isinstance(out, float) and out > 0, (op.name, out)
            elif kind == "modify_input_arg":
                assert set(out) <= set(op.operand_names)
            elif kind in ("infer_logical_tensor_desc", "infer_physical_tensor_desc",
                          "infer_data_type", "check_attr"):
                assert out is None


@pytest.mark.parametrize("order", ["import first", "load_ops first", "twice"])
def test_a_hooks_module_is_an_ordinary_module(order):
    """Issue 24: ``import my_hooks`` and ``load_ops(hooks=["my_hooks.py"])`` in either order,
    any number of times, register each hook and kernel once (one definition: one source file
    and qualified name), and the op then runs. A fresh interpreter, so nothing is registered
    before."""
    import subprocess
    import sys
    from pathlib import Path

    lib = Path(__file__).resolve().parent.parent / "data" / "userlib"
    steps = {"import first": ["import my_hooks", "load"],
             "load_ops first": ["load", "import my_hooks"],
             "twice": ["load", "import my_hooks", "load", "import importlib; "
                       "importlib.reload(my_hooks)"]}[order]
    lines = [f"import sys; sys.path.insert(0, {str(lib)!r})",
             "import numpy as np, tdflow",
             "from tdflow.dialect.context import load_ops"]
    for step in steps:
        lines.append(f"ctx = load_ops({str(lib / 'my_ops.td')!r}, hooks=[{str(lib / 'my_hooks.py')!r}])"
                     if step == "load" else step)
    lines += ["from tdflow.dialect.hooks.registry import HOOKS",
              "from tdflow.runtime.kernels.registry import kernel_table",
              "print(sorted(k for (op, k) in HOOKS._hooks if op == 'mylib.scale_shift'))",
              "print(len(kernel_table('cpu').candidates('mylib.scale_shift')))"]
    proc = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    hooks, kernels = proc.stdout.strip().splitlines()[-2:]
    assert hooks == "['infer_data_type', 'infer_logical_tensor_desc']" and kernels == "1"


BUGGY_TD = '''include "tdflow/Base.td"
def Bh_Dialect : Dialect { let name = "bh"; }
def Bh_ScaleOp : TDF_Op<"scale", [NoMemoryEffect]> {
  let opDialect = Bh_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI32Attr, "0">:$axis);
  let has_logical_tensor_desc_infer_fn = 1;
}
'''

BUGGY_HOOKS = '''from tdflow.dialect.hooks import infer_logical_tensor_desc


def _axis(ctx):
    return {"axis": ctx.attr("axis")}["axsi"]


@infer_logical_tensor_desc("bh.scale")
def scale_infer(ctx):
    ctx.set_output_shape("y", ctx.input_shape("x"))
    _axis(ctx)
'''


def test_a_bug_inside_a_hook_is_located_in_the_hooks_file(tmp_path):
    """Issue 24: a KeyError inside an infer hook names the op (with its place in the program)
    and the hook (its function and the line that failed in the hooks file, and where it was
    raised), in verify and in eager mode alike; no traceback."""
    import subprocess
    import sys

    (tmp_path / "bh.td").write_text(BUGGY_TD)
    (tmp_path / "bh_hooks.py").write_text(BUGGY_HOOKS)
    (tmp_path / "p.mlir").write_text(
        'func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n'
        '  %y = "bh.scale"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n'
        '  return %y : tensor<2x3xf32>\n}\n')
    hooks = str(tmp_path / "bh_hooks.py")
    proc = subprocess.run([sys.executable, "-m", "tdflow", "verify", "--ops", "bh.td", "--hooks",
                           "bh_hooks.py", "p.mlir"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    err = proc.stderr
    assert proc.returncode == 1 and "Traceback" not in err, err
    assert "p.mlir:2:" in err and "'bh.scale'" in err, err
    assert f"its hook scale_infer ({hooks}:11) failed with KeyError: 'axsi'" in err, err
    assert f"(raised in _axis at {hooks}:5)" in err, err
    script = ("import numpy as np, tdflow\n"
              f"lib = tdflow.load_ops({str(tmp_path / 'bh.td')!r}, hooks=[{hooks!r}])\n"
              "try:\n"
              "    lib.functional.scale(tdflow.tensor(np.ones((2, 3), np.float32)))\n"
              "except Exception as e:\n"
              "    print(type(e).__name__, e)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out and "'bh.scale'" in out, out
    assert f"its hook scale_infer ({hooks}:11) failed with KeyError: 'axsi'" in out, out
