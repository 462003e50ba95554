"""CLI start-up (issue 23): the parser is built from the light table of commands, so
``tdflow --help`` imports no subcommand's module and ``tdflow verify`` only its own, and neither
imports numpy, the lowering or the runtime."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tdflow.commands.index import COMMANDS

PROGRAM = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

PROBE = """
import sys, tdflow.cli
try:
    status = tdflow.cli.main(sys.argv[1:])
except SystemExit as exc:  # --help
    status = exc.code
print(status)
print(" ".join(sorted(m for m in sys.modules
                     if m.startswith(("tdflow", "numpy", "lark", "pickle", "rich", "concurrent",
                                      "importlib.resources", "dataclasses", "inspect")))))
"""

# Modules of the commands package every command may use: the table, the error boundary and
# output, the op-library options and the program readers.
SHARED = {"tdflow.commands", "tdflow.commands.index", "tdflow.commands.output",
          "tdflow.commands._args", "tdflow.commands.programs"}


def _modules(*argv: str, cwd=None, env=None) -> tuple[int, set[str]]:
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                       timeout=120, cwd=cwd, env=env)
    lines = r.stdout.strip().splitlines()
    assert len(lines) >= 2, r.stdout + r.stderr
    return int(lines[-2]), set(lines[-1].split())


def _heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if m == "numpy" or m.startswith(
        ("tdflow.runtime", "tdflow.lowering", "tdflow.onnx", "tdflow.pictures")))


def test_help_imports_no_subcommand():
    status, mods = _modules("--help")
    assert status == 0
    commands = sorted(m for m in mods if m.startswith("tdflow.commands.")
                      and m not in SHARED)
    assert commands == [], commands
    assert "tdflow.dialect.context" not in mods and not _heavy(mods)


def test_verify_imports_only_its_command_and_no_runtime(tmp_path):
    prog = tmp_path / "small.mlir"
    prog.write_text(PROGRAM)
    status, mods = _modules("verify", str(prog))
    assert status == 0
    commands = sorted(m for m in mods if m.startswith("tdflow.commands.") and m not in SHARED)
    assert commands == ["tdflow.commands.verify"], commands
    assert not _heavy(mods), _heavy(mods)


def test_a_warm_verify_reads_the_standard_ops_from_their_artifact(tmp_path):
    """Issue 23: once the standard library's dialect artifact is cached, verify reads it back:
    no TableGen parser, no Lark, no ODS, formula or pattern reading."""
    prog = tmp_path / "small.mlir"
    prog.write_text(PROGRAM)
    _modules("verify", str(prog))  # fills the cache (the session's private cache dir)
    status, mods = _modules("verify", str(prog))
    assert status == 0
    readers = {"lark", "tdflow.tdparser.parser", "tdflow.tdparser.evaluator",
               "tdflow.dialect.formula.parse", "tdflow.dialect.formula.check",
               "tdflow.dialect.formula.syntax", "tdflow.dialect.patterns.reader",
               "tdflow.dialect.formula.cache",
               # reading entries needs no pickle, a hit no ODS reader or TableGen errors, a
               # plain verify no --verify-diagnostics machinery
               "pickle", "tdflow.dialect.ods", "tdflow.tdparser.errors", "rich",
               "tdflow.dialect.ir.expected_diagnostics"}
    assert not readers & mods, sorted(readers & mods)


def test_verify_imports_the_hooks_of_its_ops_families_only(tmp_path):
    """The standard hooks are imported per family when an op of it is first looked up:
    ``relu`` (math, a formula op) needs no hooks module, ``negative`` the elementwise one."""
    from tdflow.dialect.hooks.standard import FAMILIES

    def families(mods: set[str]) -> list[str]:
        return sorted(m.rsplit(".", 1)[1] for m in mods
                      if m.startswith("tdflow.dialect.hooks.") and m.rsplit(".", 1)[1] in FAMILIES)

    prog = tmp_path / "small.mlir"
    prog.write_text(PROGRAM)
    status, mods = _modules("verify", str(prog))
    assert status == 0 and families(mods) == []
    prog.write_text(PROGRAM.replace('"tdflow.relu"', '"tdflow.negative"'))
    status, mods = _modules("verify", str(prog))
    assert status == 0 and families(mods) == ["elementwise"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_listed_command_registers_and_parses_help(name, capsys):
    from tdflow.cli import build_parser

    with pytest.raises(SystemExit) as exc:
        build_parser(name).parse_args([name, "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: tdflow {name}")


BLAS_PROBE = """
import os, sys, tdflow.cli
sys.argv = ["tdflow", *sys.argv[1:]]
status = tdflow.cli.entry()
import numpy
from tdflow.core.blas_pool import child_environ
from tdflow.runtime.kernels._blas import blas_threads, default_blas_threads, tdflow_blas_threads
print(status, os.environ.get("OPENBLAS_NUM_THREADS"), blas_threads(), tdflow_blas_threads(),
      child_environ().get("OPENBLAS_NUM_THREADS"), default_blas_threads())
"""


def _blas_in_cli(tmp_path, *argv: str, **env: str) -> list[str]:
    """What a ``tdflow verify`` process (or ``tdflow ARGV``) saw: its status,
    ``OPENBLAS_NUM_THREADS``, numpy's OpenBLAS pool at the end, tdflow's kernel count, the
    child processes' variable, the default count (``None`` printed for unknown/unset)."""
    import os
    from pathlib import Path

    prog = tmp_path / "small.mlir"
    prog.write_text(PROGRAM)
    base = {k: v for k, v in os.environ.items() if k not in (
        "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "TDFLOW_BLAS_THREADS")}
    r = subprocess.run([sys.executable, "-c", BLAS_PROBE, *(argv or ("verify", str(prog)))],
                       capture_output=True, text=True, timeout=300, env={**base, **env},
                       cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1].split()


def test_the_cli_starts_numpys_blas_pool_with_one_thread(tmp_path):
    """Issue 23: the CLI process starts OpenBLAS with one thread (no pool threads spinning from
    numpy's import on), tdflow's kernels keeping their count (one per usable CPU but one); the
    processes it starts do not inherit the setting."""
    status, var, pool, kernels, child, default = _blas_in_cli(tmp_path)
    assert status == "0" and var == "1" and kernels == default
    assert pool in ("1", "None")  # "None": not an OpenBLAS we can read
    assert child == "None"


@pytest.mark.parametrize("threads", ["2", "3"])
def test_the_clis_pool_grows_to_tdflows_count_at_the_first_product(tmp_path, threads):
    """Issue 23: ``tdflow run`` of a program with a large product (mlp.mlir: 64x784x256) grows
    the pool to tdflow's count (``TDFLOW_BLAS_THREADS``) when it first multiplies, and keeps
    it; a program without one never starts a pool thread; the results are the same."""
    import os
    from pathlib import Path

    run = ("run", "examples/mlp.mlir")
    status, var, pool, kernels, _, _ = _blas_in_cli(tmp_path, *run, TDFLOW_BLAS_THREADS=threads)
    assert (status, var, kernels) == ("0", "1", threads)
    assert pool in (threads, "None")
    small = ("run", str(tmp_path / "small.mlir"))
    (tmp_path / "small.mlir").write_text(PROGRAM)
    status, var, pool, kernels, _, _ = _blas_in_cli(tmp_path, *small, TDFLOW_BLAS_THREADS=threads)
    assert (status, var, kernels) == ("0", "1", threads) and pool in ("1", "None")
    root = Path(__file__).resolve().parents[1]
    outs = [subprocess.run([sys.executable, "-m", "tdflow", *run], capture_output=True,
                           text=True, timeout=300, cwd=root,
                           env={**os.environ, "TDFLOW_BLAS_THREADS": n}).stdout
            for n in ("1", threads)]
    assert outs[0] == outs[1] and "returned 1 result" in outs[0]


def test_the_cli_leaves_a_users_blas_threads_alone(tmp_path):
    status, var, pool, kernels, child, _ = _blas_in_cli(tmp_path, OPENBLAS_NUM_THREADS="2")
    assert (status, var, kernels, child) == ("0", "2", "None", "2")
    assert pool in ("2", "None")
    status, var, pool, kernels, child, _ = _blas_in_cli(tmp_path, OMP_NUM_THREADS="2")
    assert (status, var, kernels, child) == ("0", "None", "None", "None")
    assert pool in ("2", "None")


def test_tdflow_blas_threads_sizes_the_kernels_count_not_the_start(tmp_path):
    status, var, pool, kernels, child, _ = _blas_in_cli(tmp_path, TDFLOW_BLAS_THREADS="2")
    assert (status, var, kernels, child) == ("0", "1", "2", "None")
    assert pool in ("1", "None")


def test_importing_tdflow_leaves_numpys_pool_to_the_user():
    """Only the ``tdflow`` command sizes the pool: ``import tdflow`` in a user's process does
    not touch the environment."""
    import os

    code = ("import os, tdflow, tdflow.cli, tdflow.runtime; "
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "None"


def test_lower_prints_its_plan_without_rich_or_the_onnx_converter(tmp_path):
    """Issue 23: piped, ``tdflow lower`` prints its plan tables itself (tdflow.commands.table:
    what rich would print), a program of tdflow ops never imports the ONNX converter, a CPU
    lowering neither the CUDA headers' reader nor the all-reduce thread pool.
    (The path is short and the width lower's own 120 columns, not a COLUMNS the test runner
    may set: what does not fit goes to rich.)"""
    import os

    (tmp_path / "small.mlir").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    status, mods = _modules("lower", "small.mlir", cwd=tmp_path, env=env)
    assert status == 0
    heavy = {"rich", "rich.table", "rich.console", "tdflow.onnx.convert",
             # what only a GPU build or a distributed run needs
             "importlib.resources", "concurrent.futures"} & mods
    assert not heavy, heavy
    assert "tdflow.commands.table" in mods


def test_uses_onnx_agrees_with_the_converter():
    from tdflow.dialect.ir import parse_module

    from tdflow.commands.programs import uses_onnx
    from tdflow.onnx.convert import has_onnx_ops

    for name in ("tdflow.relu", "onnx.Relu"):
        m = parse_module(PROGRAM.replace("tdflow.relu", name))
        assert uses_onnx(m) == has_onnx_ops(m) == name.startswith("onnx.")


def test_lower_of_the_standard_ops_imports_neither_numpy_nor_the_runtime(tmp_path):
    """Issue 23: ``tdflow lower`` on the CPU selects kernels from the shipped data table
    (tdflow.lowering.kernel_data), plans without numpy's dtypes, and folds nothing here: no
    numpy, no runtime module. With a constant to fold, the runtime's kernel runs (and gives
    the same folded program as the runtime's own table)."""
    (tmp_path / "small.mlir").write_text(PROGRAM)
    status, mods = _modules("lower", "small.mlir", cwd=tmp_path)
    assert status == 0
    assert "tdflow.lowering.kernel_data" in mods
    heavy = sorted(m for m in mods if m == "numpy" or m.startswith("tdflow.runtime"))
    assert heavy == [], heavy


@pytest.mark.parametrize("command", ["verify", "opt", "lower", "run"])
def test_no_dataclasses_on_the_program_commands_path(tmp_path, command):
    """Issue 23: the value classes of the IR, the op definitions, formulas, patterns and plans
    are tdflow.core.valueclass classes (``dataclasses`` generated and compiled ~6 methods per
    class at import): none of these commands imports ``dataclasses``, and those without numpy
    (which imports it) not ``inspect`` either, once the standard library's artifact is cached."""
    import os

    (tmp_path / "small.mlir").write_text(PROGRAM)
    # (rich, which imports dataclasses, draws the tables only where COLUMNS/FORCE_COLOR ask)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    _modules(command, "small.mlir", cwd=tmp_path, env=env)  # fills the cache (ODS needs more)
    status, mods = _modules(command, "small.mlir", cwd=tmp_path, env=env)
    assert status == 0
    assert "dataclasses" not in mods
    if command != "run":
        assert "inspect" not in mods


def test_run_parses_and_verifies_its_program_once(tmp_path):
    """Issue 23: ``tdflow run`` parses and verifies the program itself (its errors first), then
    compiles that module (``compile_verified``): one parse, one verification."""
    (tmp_path / "small.mlir").write_text(PROGRAM)
    probe = """
import sys, tdflow.cli
from tdflow.dialect import ir
from tdflow.dialect.ir import parser, verifier
counts = {"parse": 0, "verify": 0}
def counted(fn, key):
    def wrapper(*a, **k):  # the lowering's own checks after each pass are not counted
        if not sys._getframe(1).f_globals["__name__"].startswith("tdflow.lowering"):
            counts[key] += 1
        return fn(*a, **k)
    return wrapper
parser.parse_module = counted(parser.parse_module, "parse")
verifier.verify_module = counted(verifier.verify_module, "verify")
ir.parse_module, ir.verify_module = parser.parse_module, verifier.verify_module
status = tdflow.cli.main(sys.argv[1:])
print(status, counts["parse"], counts["verify"])
"""
    r = subprocess.run([sys.executable, "-c", probe, "run", "small.mlir"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert r.stdout.split()[-3:] == ["0", "1", "1"], r.stdout + r.stderr


FOLDED = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "tdflow.constant"() {dtype = f32, floating_value = -2.5 : f64, is_floating_value = true, shape = [4]} : () -> tensor<4xf32>
  %a = "tdflow.abs"(%c) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = "tdflow.broadcast_add"(%x, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_lower_from_the_data_table_prints_what_the_runtimes_table_gives(tmp_path, capsys):
    """The CLI's data-table path against ``runtime.compiled.lower`` (the runtime's table) on
    the same programs: identical IR, plans and folded constants; the unknown-dtype error too."""
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.ir import parse_module, print_module
    from tdflow.lowering.pass_manager import lower_module
    from tdflow.runtime.op_kernels import kernel_table_for

    from tdflow.commands.lower import data_table

    ctx = standard_context()
    table = data_table(ctx, "cpu")
    for text in (PROGRAM, FOLDED):
        # the registry's own table (runtime.compiled.lower reads the shipped one too, now)
        a = lower_module(parse_module(text), ctx, "cpu", None, None,
                         lambda: kernel_table_for(ctx, "cpu"))
        b = lower_module(parse_module(text), ctx, "cpu", None, None, lambda: table)
        assert print_module(a.module) == print_module(b.module)
        assert repr(a.plans) == repr(b.plans)
    assert "floating_value = 2.5" in print_module(b.module)


#: The kernel modules a CPU ``tdflow run`` of examples/mlp.mlir needs: its plan is matmul, a
#: fused bias_add + relu loop, matmul_bias, softmax.
MLP_KERNEL_MODULES = ["tdflow.runtime.kernels.elementwise", "tdflow.runtime.kernels.linalg",
                      "tdflow.runtime.kernels.softmax"]


def test_run_imports_only_the_kernel_modules_of_its_plan():
    """Issue 23: ``tdflow run`` on the CPU selects kernels from the shipped table and imports
    the module of each kernel its plan launches: no other family, no GPU devices' generated
    kernels or CUDA generators, no boxing kernels (tdflow.distributed)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    status, mods = _modules("run", "examples/mlp.mlir", cwd=root)
    assert status == 0
    families = sorted(m for m in mods if m.startswith("tdflow.runtime.kernels.")
                      and not m.rsplit(".", 1)[1].startswith("_") and m != MODULES_REGISTRY)
    assert families == MLP_KERNEL_MODULES, families
    gpu = sorted(m for m in mods if m.startswith(("tdflow.lowering.cuda", "tdflow.distributed",
                                                  "tdflow.runtime.backends.cuda")))
    assert gpu == [], gpu
    # erf's module (decimal constants) for a program without erf, the failing-kernel report's
    # (traceback): imported on first use only
    assert not {"tdflow.lowering.erf_f32", "tdflow.dialect.user_code"} & mods


def test_lower_of_a_file_with_a_long_path_draws_its_tables_without_rich(tmp_path):
    """Issue 23: a location longer than its column of ``lower``'s launches table is cut short
    with an ellipsis by tdflow.commands.table, as rich cuts it, without importing rich (~40 ms;
    the start-up bench's own programs live in a long temporary path)."""
    import os

    deep = tmp_path / ("a-folder-with-a-long-name-" * 3) / "programs"
    deep.mkdir(parents=True)
    (deep / "small.mlir").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    probe = PROBE.replace("print(status)", "print(status, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", probe, "lower", str(deep / "small.mlir")],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.stderr.strip().splitlines()[-1] == "0", r.stderr
    assert "…" in r.stdout  # the location was cut short here
    mods = set(r.stdout.strip().splitlines()[-1].split())
    assert not {m for m in mods if m.startswith("rich")}, mods


MODULES_REGISTRY = "tdflow.runtime.kernels.registry"

FULL_FIRST = """
import sys, tdflow.cli
from tdflow.runtime.kernels.registry import kernel_table
kernel_table("cpu")  # every kernel module, as before the shipped table was read
sys.exit(tdflow.cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("argv", [["examples/mlp.mlir"], ["examples/cnn.mlir", "--values", "9"]])
def test_run_prints_what_it_printed_with_every_kernel_loaded(argv):
    """The same bytes (values, statistics) with the kernels loaded per module as with the full
    registry loaded first."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    lazy = subprocess.run([sys.executable, "-m", "tdflow", "run", *argv], capture_output=True,
                          text=True, timeout=300, cwd=root)
    full = subprocess.run([sys.executable, "-c", FULL_FIRST, "run", *argv],
                          capture_output=True, text=True, timeout=300, cwd=root)
    assert lazy.returncode == full.returncode == 0, lazy.stderr + full.stderr
    assert lazy.stdout == full.stdout and "returned 1 result" in lazy.stdout


GC_PROBE = """
import gc, sys, tdflow, tdflow.cli
before = gc.get_threshold()
sys.argv = ["tdflow", "verify", sys.argv[1]]
status = tdflow.cli.entry()
print(status, before[0], gc.get_threshold()[0], gc.isenabled())
"""


def test_the_cli_collects_its_young_generation_less_often(tmp_path):
    """Issue 23: a ``tdflow`` process raises the collector's young-generation threshold (its
    start-up allocates only long-lived objects); ``import tdflow`` keeps Python's default; the
    collector stays on."""
    import gc

    from tdflow.cli import CLI_GC_THRESHOLD

    prog = tmp_path / "small.mlir"
    prog.write_text(PROGRAM)
    r = subprocess.run([sys.executable, "-c", GC_PROBE, str(prog)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    status, before, after, enabled = r.stdout.strip().splitlines()[-1].split()
    assert (status, before, after, enabled) == ("0", str(gc.get_threshold()[0]),
                                                str(CLI_GC_THRESHOLD), "True")


LAZY_PROBE = """
import sys, tdflow.cli
status = tdflow.cli.main(sys.argv[1:])
from tdflow.dialect.dialect import standard_dialect
from tdflow.dialect.lazy_ops import LazyOps
ops = standard_dialect().ops
print(status, type(ops).__name__, len(ops), ops.made() if isinstance(ops, LazyOps) else -1)
"""


@pytest.mark.parametrize("command", ["verify", "opt", "lower"])
def test_a_warm_command_makes_only_the_standard_ops_its_program_uses(tmp_path, command):
    """Issue 23: the standard library's artifact holds ~150 ops; a warm command makes the
    ``OpDef`` of an op when it is first looked up (``LazyOps``), not all of them at load:
    ``relu`` here, and for ``lower`` the op its elementwise fusion makes."""
    (tmp_path / "small.mlir").write_text(PROGRAM)
    argv = [sys.executable, "-c", LAZY_PROBE, command, "small.mlir"]
    subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)  # warms
    r = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    status, kind, total, made = r.stdout.strip().splitlines()[-1].split()
    assert (status, kind) == ("0", "LazyOps"), r.stdout + r.stderr
    assert int(total) > 100
    assert 1 <= int(made) <= 3, made


WARM_RUN_PROBE = """
import sys, tdflow.cli
status = tdflow.cli.main(sys.argv[1:])
print(status, " ".join(m for m in ("shutil", "tempfile", "concurrent.futures", "logging")
                       if m in sys.modules))
"""


def test_a_warm_run_loads_its_native_loops_without_a_temporary_folder(tmp_path):
    """Issue 23: a warm ``tdflow run`` loads its cached native loops from memory (no
    ``tempfile`` folder to make at start and remove at exit, none left by a killed process)
    and imports neither ``shutil``/``tempfile`` (kernel_build's compiler lookup) nor
    ``concurrent.futures`` (the build pool's, for builds it does not start)."""
    import os
    from pathlib import Path

    if not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create: the private folder is used")
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, TMPDIR=str(tmp_path / "tmp"))
    argv = [sys.executable, "-c", WARM_RUN_PROBE, "run", "examples/mlp.mlir"]
    subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=root, env=env)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=root, env=env)
    last = r.stdout.strip().splitlines()[-1].split()
    assert last == ["0"], r.stdout + r.stderr
    assert list((tmp_path / "tmp").iterdir()) == []
