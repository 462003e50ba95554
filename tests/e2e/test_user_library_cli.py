"""A user's op library on the command line: ``--ops``/``--hooks``/``-I``/``-D``/``--no-std`` (and
the deprecated ``--td``) on verify, opt, lower, run, ops, doc and gen-hooks.

The library is ``tests/data/userlib``: ``my_ops.td`` declares its own dialect ``mylib`` and op
base class, ``my_hooks.py`` registers the hooks and a numpy kernel of ``mylib.scale_shift``,
and ``mixed.mlir`` uses it between ``tdflow.matmul`` and ``tdflow.relu``. Most commands run
in-process (``tdflow.cli.main``); the ones whose point is a fresh process (hooks not imported
yet) run as ``python -m tdflow``. The OneFlow tests load ``../shared/corpus/oneflow`` and skip
with the reason when it (or LLVM 19's include dir) is absent.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import cli

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "tests" / "data" / "userlib"
OPS, HOOKS = LIB / "my_ops.td", LIB / "my_hooks.py"
MIXED, ONEFLOW_MIXED = LIB / "mixed.mlir", LIB / "oneflow_mixed.mlir"
USER = ("--ops", OPS, "--hooks", HOOKS)
CORPUS = ROOT.parent / "shared" / "corpus" / "oneflow"




def tdflow(*args, cwd=None) -> subprocess.CompletedProcess:
    """``python -m tdflow ARGS`` in a fresh process (nothing imported, no hooks registered)."""
    proc = subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=dict(os.environ))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """What mixed.mlir computes: relu((x @ w) * 2 + 1)."""
    return np.maximum((x @ w) * 2.0 + 1.0, 0.0)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("userlib_in")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = (rng.standard_normal((3, 2)) - 0.5).astype(np.float32)
    np.save(d / "x.npy", x)
    np.save(d / "w.npy", w)
    return d, x, w


# -- the user library next to the standard ops -----------------------------------------------

def test_verify_opt_lower_a_mixed_program(capsys):
    status, out, err = cli(capsys, "verify", *USER, MIXED)
    assert status == 0, err
    assert f"{MIXED}: verified (4 operations)" in out
    status, out, err = cli(capsys, "opt", *USER, MIXED)
    assert status == 0, err
    assert '"mylib.scale_shift"(%0) {scale = 2.000000e+00 : f32' in out
    assert '"tdflow.matmul"' in out and '"tdflow.relu"' in out
    status, out, err = cli(capsys, "lower", *USER, MIXED)
    assert status == 0, err
    assert "IR after lowering" in out and "plan @f on cpu" in out
    assert "mylib.scale_shift" in out
    # One library named twice (two spellings), or the standard ops.td named: nothing twice.
    status, _, err = cli(capsys, "verify", *USER, "--ops", LIB / "." / OPS.name,
                         "--ops", ROOT / "ops.td", MIXED)
    assert status == 0, err


def test_run_a_mixed_program_matches_numpy(capsys, tmp_path, inputs):
    d, x, w = inputs
    out_file = tmp_path / "out.npz"
    status, out, err = cli(capsys, "run", *USER, MIXED, "--input", f"x={d / 'x.npy'}",
                           "--input", f"w={d / 'w.npy'}", "--output", out_file)
    assert status == 0, err
    assert "wrote 1 result(s)" in out
    np.testing.assert_allclose(np.load(out_file)["result0"], reference(x, w), rtol=1e-6)


def test_without_ops_the_user_op_is_unknown(capsys):
    status, _, err = cli(capsys, "verify", MIXED)
    assert status == 1
    assert "error: unknown operation 'mylib.scale_shift'" in err
    status, _, err = cli(capsys, "run", MIXED)
    assert status == 1 and "unknown operation 'mylib.scale_shift'" in err


def test_no_std_leaves_the_standard_ops_out(capsys):
    status, _, err = cli(capsys, "verify", "--no-std", *USER, MIXED)
    assert status == 1
    assert "unknown operation 'tdflow.matmul'" in err
    assert "unknown operation 'tdflow.relu'" in err
    assert "mylib.scale_shift" not in err


@pytest.mark.parametrize("command", ["verify", "ops", "doc", "gen-hooks", "run", "lower", "opt"])
def test_usage_mistakes_exit_2(capsys, command):
    program = [] if command in ("ops", "doc", "gen-hooks", "verify") else [MIXED]
    status, _, err = cli(capsys, command, "--no-std", *program)
    assert status == 2 and "--no-std" in err and "--ops FILE.td" in err
    status, _, err = cli(capsys, command, "-D", "X", *program)
    assert status == 2 and "-D applies to the --ops files" in err


def test_missing_library_files_exit_1(capsys, tmp_path):
    status, _, err = cli(capsys, "run", "--ops", tmp_path / "no.td", MIXED)
    assert status == 1 and f"{tmp_path / 'no.td'}: error: cannot open op definitions" in err
    status, _, err = cli(capsys, "lower", "--ops", OPS, "--hooks", tmp_path / "no.py", MIXED)
    assert status == 1 and f"{tmp_path / 'no.py'}: error: cannot open hook file" in err


def test_td_is_a_deprecated_alias_of_ops():
    proc = tdflow("verify", "--td", OPS, "--hooks", HOOKS, MIXED)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        "note: --td is deprecated; use --ops (which adds to the standard ops; --no-std leaves "
        "them out)"]
    assert "verified (4 operations)" in proc.stdout


def test_contract_of_the_user_library_only():
    """Without programs verify checks the user's library (1 op), not the standard ops; without
    the hook file its two declared hooks are missing, and gen-hooks writes them."""
    proc = tdflow("verify", "--ops", OPS, "--strict-hooks", "--verbose")
    assert proc.returncode == 1 and "2 errors" in proc.stderr
    assert "op 'mylib.scale_shift' declares has_data_type_infer_fn = 1" in proc.stderr
    assert "tdflow." not in proc.stderr
    proc = tdflow("gen-hooks", OPS)
    assert proc.returncode == 0, proc.stderr
    assert '@infer_logical_tensor_desc("mylib.scale_shift")' in proc.stdout
    assert '@infer_data_type("mylib.scale_shift")' in proc.stdout
    proc = tdflow("verify", *USER)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{OPS}: 1 ops; every declared hook is registered and every hook is "
                           f"declared\n  gradients: 1 ops have one (1 from grad fields), 0 "
                           f"differentiable ops have none\n")


def test_ops_doc_gen_hooks_show_the_user_library(capsys):
    status, out, err = cli(capsys, "ops", OPS, "--hooks", HOOKS)
    assert status == 0, err
    assert "mylib.scale_shift" in out and "tdflow.matmul" not in out
    assert out.rstrip().endswith("1 op in 1 dialect (mylib)")
    status, out, err = cli(capsys, "ops", "--ops", OPS, "--json")
    assert status == 0, err
    import json

    [op] = json.loads(out)
    assert op["name"] == "mylib.scale_shift" and op["served_by"] is None
    status, out, err = cli(capsys, "doc", OPS)
    assert status == 0, err
    assert out.startswith("# `mylib` dialect") and "### `mylib.scale_shift`" in out
    assert "tdflow.matmul" not in out
    status, out, err = cli(capsys, "gen-hooks", OPS, "--hooks", HOOKS)
    assert status == 0, err
    assert "Every declared hook is registered: nothing to write." in out


def test_hook_files_are_imported_once(tmp_path):
    """The same unchanged file twice is one import; two files of one name are two modules."""
    from tdflow.dialect.hook_files import hook_module_name, import_hook_files

    a, b = tmp_path / "a" / "h.py", tmp_path / "b" / "h.py"
    for f in (a, b):
        f.parent.mkdir()
        f.write_text("import builtins\nbuiltins._tdflow_test_count = "
                     "getattr(builtins, '_tdflow_test_count', 0) + 1\n")
    import builtins

    try:
        import_hook_files([str(a), str(a)])
        import_hook_files([str(a)])
        assert builtins._tdflow_test_count == 1
        import_hook_files([str(b)])
        assert builtins._tdflow_test_count == 2
        assert hook_module_name(str(a)) != hook_module_name(str(b))
        assert {hook_module_name(str(a)), hook_module_name(str(b))} <= set(sys.modules)
        a.write_text(a.read_text() + "# edited\n")
        import_hook_files([str(a)])  # changed: it runs again
        assert builtins._tdflow_test_count == 3
    finally:
        del builtins._tdflow_test_count
        for f in (a, b):
            sys.modules.pop(hook_module_name(str(f)), None)


# -- OneFlow's ops, the user library and the standard ops in one program ---------------------

@pytest.fixture(scope="module")
def oneflow_args() -> list[str]:
    """``--ops top.td -I ... -D ...`` for the OneFlow corpus (see ../shared/corpus/README.md)."""
    if not (CORPUS / "top.td").is_file():
        pytest.skip(f"the OneFlow corpus is absent ({CORPUS}); OneFlow tests skipped")
    llvm_config = shutil.which("llvm-config-19")
    if llvm_config is None:
        pytest.skip("llvm-config-19 not installed (Debian llvm-19): no MLIR include dir for "
                    "the OneFlow corpus")
    include = subprocess.run([llvm_config, "--includedir"], capture_output=True, text=True,
                             check=True).stdout.strip()
    if not (Path(include) / "mlir" / "IR" / "OpBase.td").is_file():
        pytest.skip(f"MLIR's .td files are not under {include} (Debian libmlir-19-dev)")
    text = (CORPUS / "OneFlow" / "OneFlowUserOps.td").read_text()
    groups = sorted(g for g in set(re.findall(r"GET_ONEFLOW_\w+_OP_DEFINITIONS", text))
                    if "_BASE_" not in g)
    args = ["--ops", str(CORPUS / "top.td"), "-I", include, "-I", str(CORPUS)]
    for g in groups:
        args += ["-D", g]
    return args


def test_oneflow_user_and_standard_ops_verify_and_run(capsys, oneflow_args, inputs, tmp_path):
    d, x, w = inputs
    status, out, err = cli(capsys, "verify", *oneflow_args, *USER, ONEFLOW_MIXED)
    assert status == 0, err
    assert "verified (5 operations)" in out
    out_file = tmp_path / "of.npz"
    status, out, err = cli(capsys, "run", *oneflow_args, *USER, ONEFLOW_MIXED,
                           "--input", f"x={d / 'x.npy'}", "--input", f"w={d / 'w.npy'}",
                           "--output", out_file)
    assert status == 0, err
    expected = 1.0 / (1.0 + np.exp(-reference(x, w)))
    np.testing.assert_allclose(np.load(out_file)["result0"], expected, rtol=1e-6)


def test_oneflow_ops_reports_served_ops(capsys, oneflow_args, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    status, out, err = cli(capsys, "ops", *oneflow_args, *USER)
    assert status == 0, err
    summary = out.rstrip().splitlines()[-1]
    match = re.fullmatch(r"(\d+) ops in 2 dialects \(oneflow, mylib\); (\d+) served by "
                         r"standard ops", summary)
    assert match, summary
    assert int(match[1]) > 700 and int(match[2]) > 40
    relu = next(line for line in out.splitlines() if "│ oneflow.relu " in line)
    assert "tdflow.relu" in relu  # the "served by" column
    status, out, err = cli(capsys, "ops", *oneflow_args, "--json")
    assert status == 0, err
    import json

    served = {o["name"]: o["served_by"] for o in json.loads(out)}
    assert served["oneflow.relu"] == "tdflow.relu" and served["oneflow.prelu"] is None


def test_verify_reports_a_bad_signature_field_located(tmp_path, capsys):
    bad = tmp_path / "sig.td"
    bad.write_text('include "tdflow/Base.td"\n'
                   'def Sg_Dialect : Dialect { let name = "sg"; }\n'
                   'def Sg_AffineOp : Op<Sg_Dialect, "affine", [NoMemoryEffect, Elementwise]> {\n'
                   '  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "1.">:$scale);\n'
                   '  let results = (outs TDF_Tensor:$y);\n'
                   '  let formula = [{ x * scale }];\n'
                   '  let signature = [{\n'
                   '    Tensor (Tensor x, Flaot scale=1.0)\n'
                   '  }];\n'
                   '}\n')
    status, _, err = cli(capsys, "verify", "--ops", bad)
    assert status == 1
    assert err.startswith(f"{bad}:8:5: error: op 'sg.affine': signature: unknown parameter "
                          f"type 'Flaot'")


def test_verify_of_a_library_without_signatures_does_not_import_the_runtime(tmp_path):
    # Issue 23: `tdflow verify` imported the functional API (numpy, the runtime) to check
    # signatures even when no op had one; start-up doubled.
    import subprocess
    import sys

    td = tmp_path / "three.td"
    td.write_text('include "tdflow/Base.td"\n'
                  'def Th_Dialect : Dialect { let name = "th"; }\n'
                  'def Th_AOp : TDF_Op<"th_a", [NoMemoryEffect, Elementwise]> {\n'
                  '  let input = (ins TDF_Tensor:$x); let output = (outs TDF_Tensor:$y);\n'
                  '  let formula = [{ x + 1.0 }]; }\n')
    code = ("import sys, tdflow.cli\n"
            f"status = tdflow.cli.main(['verify', {str(td)!r}])\n"
            "print(status, 'numpy' in sys.modules, 'tdflow.runtime.functional' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.split()[-3:] == ["0", "False", "False"], r.stdout + r.stderr
