"""The CLI's promise on hostile input and hostile options: a diagnostic (exit 1) or a usage error
(exit 2), never a traceback, an internal error or a hang.

Subprocess tests run ``python -m tdflow`` as a user would; the many option/file combinations
run in-process through :func:`tdflow.cli.main` (same code path, no interpreter start-up).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_run import cli
from cpu_clock import cpu_clock

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.mlir")
HEAD = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
TAIL = "  return %x : tensor<4xf32>\n}\n"
LOCATED = re.compile(r"^(?P<file>[^\n]+?):(?P<line>\d+):(?P<col>\d+): error: ", re.M)


def tdflow(*args, stdin: bytes | None = None, timeout: float = 120, env=None):
    # env: os.environ as Python sees it (under pytest the C environment may hold a COLUMNS=80
    # that readline exported).
    return subprocess.run([sys.executable, "-m", "tdflow", *map(str, args)], capture_output=True,
                          input=stdin, timeout=timeout, env=env or dict(os.environ))




# -- a deep-nesting / huge-input corpus through every program subcommand ---------------------

def hostile_corpus() -> dict[str, str | bytes]:
    def op(attr: str) -> str:
        return HEAD + f'  "tdflow.relu"(%x) {{a = {attr}}} : (tensor<4xf32>) -> tensor<4xf32>\n' + TAIL

    return {
        "deep_array": op("[" * 500 + "]" * 500),
        "deep_dict": op("{b = " * 500 + "1" + "}" * 500),
        "deep_function_type": op("(" * 500 + ")" * 500),
        "unclosed_1mb": op("[" * 1_000_000),
        "huge_dim": "func.func @f(%x: tensor<99999999999999999999xf32>) {\n  return\n}\n",
        "huge_literal": op("9" * 200_000),
        "huge_width": op("1 : i99999999"),
        "invalid_utf8": b"func.func @f() {\n  return \xff\n}\n",
        "nul_byte": "func.func @f() {\n \x00 return\n}\n",
        "many_errors": HEAD + '  "tdflow.relu"(%nope) : (tensor<4xf32>) -> tensor<4xf32>\n'
        * 30_000 + TAIL,
    }


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, text in hostile_corpus().items():
        p = d / f"{name}.mlir"
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        paths[name] = p
    return paths


def _bound(*paths: Path) -> float:
    """Seconds allowed: start-up plus a generous rate per megabyte of input."""
    return 15 + 15 * sum(p.stat().st_size for p in paths) / 1e6


def _check_located(proc, path: Path, elapsed: float, bound: float) -> None:
    err = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == 1, err[-2000:]
    assert "Traceback" not in err and "internal error" not in err, err[-2000:]
    hits = [m for m in LOCATED.finditer(err) if m.group("file") == str(path)]
    assert hits, f"no located error for {path}: {err[:500]}"
    assert elapsed < bound, f"{path.name}: {elapsed:.1f}s > {bound:.1f}s"


def test_verify_reports_every_hostile_file_located(corpus):
    paths = list(corpus.values())
    with cpu_clock(children=True) as clock:  # the child's CPU seconds, not wall time
        proc = tdflow("verify", *paths, timeout=_bound(*paths) * 2)
    elapsed = clock.seconds
    err = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == 1 and "Traceback" not in err and "internal error" not in err
    for p in paths:  # one bad file does not hide the others
        assert re.search(rf"^{re.escape(str(p))}:\d+:\d+: error: ", err, re.M), p.name
    assert elapsed < _bound(*paths)
    assert "nesting too deep" in err and "invalid UTF-8 byte 0xff" in err
    assert "NUL (U+0000)" in err and "\x00" not in err


@pytest.mark.parametrize("command", ["opt", "lower", "run"])
@pytest.mark.parametrize("name", ["deep_array", "unclosed_1mb", "invalid_utf8", "huge_dim"])
def test_program_subcommands_report_hostile_input_located(corpus, command, name):
    path = corpus[name]
    with cpu_clock(children=True) as clock:
        proc = tdflow(command, path, timeout=_bound(path) * 2)
    _check_located(proc, path, clock.seconds, _bound(path))


def test_stdin_programs_are_located_too():
    proc = tdflow("verify", "-", stdin=b"func.func @f() {\n  return \xfe\n}\n")
    assert proc.returncode == 1
    assert b"<stdin>:2:10: error: invalid UTF-8 byte 0xfe" in proc.stderr
    proc = tdflow("opt", "-", stdin=b"[" * 10_000)
    assert proc.returncode == 1 and b"<stdin>:1:1: error:" in proc.stderr
    ok = tdflow("verify", "-", stdin=Path(MLP).read_bytes())
    assert ok.returncode == 0 and b"<stdin>: verified (7 operations)" in ok.stdout


# -- files: missing inputs and unwritable outputs, the same in every subcommand --------------

MISSING = "no/such/file"


@pytest.mark.parametrize("args", [
    ("tblgen", f"{MISSING}.td"), ("ops", f"{MISSING}.td"), ("doc", f"{MISSING}.td"),
    ("gen-hooks", f"{MISSING}.td"), ("verify", f"{MISSING}.mlir"),
    ("verify", "--td", f"{MISSING}.td", MLP), ("verify", "--hooks", f"{MISSING}.py"),
    ("opt", f"{MISSING}.mlir"), ("lower", f"{MISSING}.mlir"), ("run", f"{MISSING}.mlir"),
    ("run", MLP, "--input", f"x={MISSING}.npy"),
])
def test_a_missing_input_file_exits_1_naming_it(capsys, args):
    status, _, err = cli(capsys, *args)
    assert status == 1
    assert MISSING in err and ("no such file" in err.lower()), err


def test_a_directory_as_input_exits_1(capsys, tmp_path):
    for args in (("opt", tmp_path), ("verify", tmp_path), ("run", tmp_path), ("ops", tmp_path)):
        status, _, err = cli(capsys, *args)
        assert status == 1 and "directory" in err, (args, err)


def test_unusable_inputs_exit_1(capsys, tmp_path):
    if os.path.exists("/dev/zero"):  # an endless device is read up to a bound, not forever
        status, _, err = cli(capsys, "verify", "/dev/zero")
        assert status == 1 and "/dev/zero: error: cannot read program: more than" in err
    status, _, err = cli(capsys, "ops", "--hooks", os.devnull)
    assert status == 1 and "cannot import hook file: expected a .py file" in err


OUTPUTS = ["/nonexistent/dir/out", "/dev/full", "DIRECTORY"]


@pytest.mark.parametrize("target", OUTPUTS)
@pytest.mark.parametrize("args", [("opt", MLP, "-o"), ("doc", "-o"), ("gen-hooks", "-o"),
                                  ("tblgen", str(ROOT / "ops.td"), "-I",
                                   str(ROOT / "dialect" / "include"), "--no-cache", "-o"),
                                  ("run", MLP, "--output")])
def test_an_unwritable_output_exits_1_naming_it(capsys, tmp_path, args, target):
    if target == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    out = str(tmp_path) if target == "DIRECTORY" else target
    status, _, err = cli(capsys, *args, out)
    assert status == 1, err
    assert f"{out}" in err and "error: cannot write:" in err, err


def test_results_to_dev_null(capsys):
    """A zip needs a seekable file: ``--output /dev/null`` (not seekable) still works (issue 24:
    it was an internal error)."""
    status, out, err = cli(capsys, "run", MLP, "--random-inputs", "0", "--output", os.devnull)
    assert status == 0 and f"to {os.devnull}" in out and "internal error" not in err, err


def test_a_full_stdout_exits_1(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "tdflow", "verify", MLP], stdout=full,
                              stderr=subprocess.PIPE, timeout=120, env=dict(os.environ))
    assert proc.returncode == 1
    assert proc.stderr.decode().strip() == "<stdout>: error: cannot write: no space left on device"


# -- run: options and inputs -----------------------------------------------------------------


@pytest.mark.parametrize("option,value", [("--random-inputs", "-1"), ("--values", "-1"),
                                          ("--repeat", "-5"), ("--repeat", "x"),
                                          ("--entry", "")])
def test_bad_run_options_are_usage_errors(capsys, option, value):
    status, _, err = cli(capsys, "run", MLP, option, value)
    assert status == 2 and option.lstrip("-") in err and "error:" in err


@pytest.fixture()
def program(tmp_path) -> Path:
    p = tmp_path / "prog.mlir"
    p.write_text("func.func @net(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
                 '  %0 = "tdflow.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n'
                 "  return %0 : tensor<2x3xf32>\n}\n")
    return p


def test_run_table_is_titled_with_the_function(capsys, tmp_path, program):
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    status, out, _ = cli(capsys, "run", program, "--input", f"x={tmp_path / 'x.npy'}")
    assert status == 0 and "@net returned 1 result(s)" in out and "@x" not in out


def _npy(tmp_path: Path, name: str, data: bytes | np.ndarray) -> Path:
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        np.save(p, data)
    return p


@pytest.mark.parametrize("kind,message", [
    ("empty", "the file is empty"), ("text", "not a .npy file"),
    ("npz", "an .npz archive"), ("truncated", "truncated .npy file"),
    ("forged header", "its header declares float32 of shape (1000000000000,) (3.64 TiB)"),
    ("bad header", "not a valid .npy array"),
    ("object", "not a valid .npy array"), ("dtype", "never cast implicitly"),
    ("shape", "must be tensor<2x3xf32>"), ("complex", "must be tensor<2x3xf32>"),
    ("unknown name", "has no argument %y"),
])
def test_bad_input_files_are_diagnostics(capsys, tmp_path, program, kind, message):
    name = "x"
    if kind == "empty":
        p = _npy(tmp_path, "a.npy", b"")
    elif kind == "text":
        p = _npy(tmp_path, "a.npy", b"1 2 3\n")
    elif kind == "npz":
        p = tmp_path / "a.npz"
        np.savez(p, x=np.ones((2, 3), np.float32))
    elif kind == "truncated":
        full = _npy(tmp_path, "full.npy", np.ones((200, 3), np.float32)).read_bytes()
        p = _npy(tmp_path, "a.npy", full[:200])
    elif kind in ("forged header", "bad header"):
        import io

        from numpy.lib import format as npy

        b = io.BytesIO()
        npy.write_array_header_1_0(b, {"descr": "<f4", "fortran_order": False,
                                       "shape": (10**12,)})
        data = b.getvalue() + b"\0" * 64
        if kind == "bad header":
            data = data.replace(b"'shape'", b"'shapes'")
        p = _npy(tmp_path, "a.npy", data)
    elif kind == "object":
        p = tmp_path / "a.npy"
        np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif kind == "dtype":
        p = _npy(tmp_path, "a.npy", np.ones((2, 3), np.int64))
    elif kind == "shape":
        p = _npy(tmp_path, "a.npy", np.ones((3, 2), np.float32))
    elif kind == "complex":
        p = _npy(tmp_path, "a.npy", np.ones((2, 3), np.complex64))
    else:
        p, name = _npy(tmp_path, "a.npy", np.ones((2, 3), np.float32)), "y"
    status, _, err = cli(capsys, "run", program, "--input", f"{name}={p}")
    assert status == 1 and message in err, err


SHAPES = {
    "huge argument": ("tensor<100000000000x100000000xf32>", "argument %x: tensor<100000000000x"
                      "100000000xf32> has 1e+19 elements", "too large for random inputs"),
    "rank 65": ("tensor<" + "1x" * 65 + "f32>", "has rank 65", "at most 64 dimensions"),
}


@pytest.mark.parametrize("kind", list(SHAPES))
def test_run_refuses_arrays_numpy_cannot_make(capsys, tmp_path, kind):
    t, first, second = SHAPES[kind]
    p = tmp_path / "big.mlir"
    p.write_text(f"func.func @f(%x: {t}) -> {t} {{\n  return %x : {t}\n}}\n")
    status, _, err = cli(capsys, "run", p)
    assert status == 1 and f"{p}:1:14: error: " in err and first in err and second in err


def test_run_refuses_a_huge_intermediate(capsys, tmp_path):
    p = tmp_path / "inter.mlir"
    col, row, big = "tensor<100000x1xf32>", "tensor<1x10000000xf32>", "tensor<100000x10000000xf32>"
    p.write_text(f"func.func @f(%x: {col}, %y: {row}) -> {big} {{\n"
                 f'  %0 = "tdflow.broadcast_add"(%x, %y) : ({col}, {row}) -> {big}\n'
                 f"  return %0 : {big}\n}}\n")
    status, _, err = cli(capsys, "run", p)
    assert status == 1 and f"{p}:2:3: error: 'tdflow.broadcast_add': {big} has 1e+12" in err
    assert "more than this machine's" in err


@pytest.mark.parametrize("text,message", [
    ("// no function here\n", "defines no function to run"),
    ("func.func @f(%x: f32) -> f32 {\n  return %x : f32\n}\n", "argument %x has type f32"),
])
def test_run_programs_it_cannot_call_are_diagnostics(capsys, tmp_path, text, message):
    p = tmp_path / "p.mlir"
    p.write_text(text)
    status, _, err = cli(capsys, "run", p)
    assert status == 1 and message in err and str(p) in err


def test_run_entry_that_does_not_exist(capsys):
    status, _, err = cli(capsys, "run", MLP, "--entry", "nope")
    assert status == 1 and "no function @nope" in err and "@mlp" in err


# -- tables follow the terminal width ------------------------------------------------------


@pytest.mark.parametrize("args", [("run", MLP), ("lower", MLP), ("ops",)])
@pytest.mark.parametrize("columns", [60, 100])
def test_tables_follow_columns(args, columns):
    env = dict(os.environ, COLUMNS=str(columns))
    proc = tdflow(*args, env=env)
    assert proc.returncode == 0, proc.stderr
    table_lines = [ln for ln in proc.stdout.decode().splitlines() if ln[:1] in "┏┃┡│└┌├╭"]
    assert table_lines and max(len(ln) for ln in table_lines) <= columns
