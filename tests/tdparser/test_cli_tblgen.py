"""``tdflow tblgen`` end to end, as a subprocess, compared with llvm-tblgen-19 where available."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jsoncompare import diff_documents
from oracle import run_llvm

from tdflow.commands.tblgen import dump_json_text

DATA = Path(__file__).resolve().parent / "data" / "oneflow_like"

SMALL = """\
// No anonymous records, so llvm-tblgen's output must be matched byte for byte.
def ins;
class Shape<int r = 2, string n = "s"> {
  int rank = r;
  string name = n # "_" # r;
  list<int> dims = !listsplat(0, r);
  bits<4> flags = {0, 1, 1, 0};
  code body = [{ return "x\\ty"; }];
  dag d = (ins ins:$a, ?:$b, 3);
  bit unset = ?;
}
def Shape : Shape<3>;
def Named : Shape<1, "n"> { let dims = [7]; string extra = "a\\"b"; }
#ifdef WITH_MORE
def More : Shape;
#endif
"""


def tdflow_cmd() -> list[str]:
    exe = shutil.which("tdflow")
    return [exe] if exe else [sys.executable, "-m", "tdflow"]


def run_tdflow(*args: str, cwd: Path | None = None, env: dict | None = None):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*tdflow_cmd(), "tblgen", *args], capture_output=True, text=True,
                          cwd=cwd, env=full_env, timeout=300)


@pytest.fixture
def small(tmp_path) -> Path:
    path = tmp_path / "small.td"
    path.write_text(SMALL)
    return path


def test_help_lists_the_options():
    proc = run_tdflow("--help")
    assert proc.returncode == 0
    for opt in ("-I DIR", "-D NAME", "--dump-json", "--print-records", "-o OUT", "--no-cache"):
        assert opt in proc.stdout


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_unreadable_input_is_a_clean_error(tmp_path, what):
    target = tmp_path / "nope.td"
    if what == "directory":
        target.mkdir()
    proc = run_tdflow(str(target))
    assert proc.returncode == 1
    assert f"Could not open input file '{target}'" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_usage_error_exits_2():
    proc = run_tdflow("--dump-json", "--print-records", "x.td")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_json_text_escapes_like_llvm():
    doc = {"b": [1, None, -3], "a": "x\by\f\x01\t\n\r\"\\\x7fé", "!z": {"k": True}}
    assert dump_json_text(doc) == (
        '{"!z":{"k":true},"a":"x\\u0008y\\u000c\\u0001\\t\\n\\r\\"\\\\\x7fé","b":[1,null,-3]}\n')


@pytest.mark.oracle
@pytest.mark.parametrize("rel", ["mlir/Dialect/Arith/IR/ArithOps.td", "mlir/IR/BuiltinOps.td"])
def test_json_text_is_byte_identical_to_llvm(rel, llvm_tblgen, mlir_include):
    """Re-serialising llvm-tblgen's own document gives its exact bytes back."""
    path = mlir_include / rel
    out = run_llvm(llvm_tblgen, path, [mlir_include, path.parent]).stdout
    assert dump_json_text(json.loads(out)) == out


@pytest.mark.oracle
def test_control_characters_in_code_match_llvm(tmp_path, llvm_tblgen):
    path = tmp_path / "ctl.td"
    path.write_bytes(b'def A { code c = [{a\x01b\x0cc\x08d\x7fe\xc3\xa9"\\}]; }\n')
    out = run_llvm(llvm_tblgen, path).stdout
    assert dump_json_text(json.loads(out)) == out


# -- with the parser -----------------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("action", ["--dump-json", "--print-records", None])
def test_output_is_byte_identical_to_llvm(small, action, llvm_tblgen, tmp_path):
    args = [action] if action else []
    theirs = run_llvm(llvm_tblgen, small, action=action or "--print-records")
    assert theirs.ok, theirs.stderr
    ours = run_tdflow(*args, str(small), "--no-cache")
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs.stdout


@pytest.mark.oracle
def test_include_dirs_and_defines_match_llvm(llvm_tblgen):
    defs = ["GET_ONEFLOW_NN_OP_DEFINITIONS", "GET_ONEFLOW_ACTIVATION_OP_DEFINITIONS"]
    main = DATA / "OneFlowLikeUserOps.td"
    theirs = run_llvm(llvm_tblgen, main, [DATA], defs)
    # both spellings of the flags: "-I DIR" and "-IDIR"
    ours = run_tdflow("--dump-json", "-I", str(DATA), f"-D{defs[0]}", "-D", defs[1], str(main))
    assert ours.returncode == 0, ours.stderr
    assert diff_documents(json.loads(ours.stdout), json.loads(theirs.stdout)) == []


def test_defines_select_sections(small):
    without = json.loads(run_tdflow("--dump-json", str(small)).stdout)
    with_more = json.loads(run_tdflow("--dump-json", "-DWITH_MORE", str(small)).stdout)
    assert "More" not in without and "More" in with_more
    assert with_more["More"]["name"] == "s_2"


def test_stdin():
    proc = subprocess.run([*tdflow_cmd(), "tblgen", "--dump-json", "-"], input=SMALL,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["Shape"]["name"] == "s_3"
    bad = subprocess.run([*tdflow_cmd(), "tblgen", "-"], input="def X : Nope;\n",
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1 and "<stdin>:1:" in bad.stderr and "Traceback" not in bad.stderr


def test_output_file(small, tmp_path):
    out = tmp_path / "out.json"
    proc = run_tdflow("--dump-json", str(small), "-o", str(out))
    assert proc.returncode == 0 and proc.stdout == ""
    assert out.read_text() == run_tdflow("--dump-json", str(small)).stdout
    assert json.loads(out.read_text())["Named"]["extra"] == 'a"b'


def test_unwritable_output_is_a_clean_error(small, tmp_path):
    proc = run_tdflow(str(small), "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("source", [
    "def A : Undefined;\n",
    "class C<int x>;\ndef A : C<\"s\">;\n",
    "def A { int x = ; }\n",
    'include "does/not/exist.td"\n',
    "#endif\n",
    "def A {\n",
])
def test_errors_are_rendered_diagnostics(tmp_path, source):
    path = tmp_path / "bad.td"
    path.write_text(source)
    proc = run_tdflow(str(path))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"{path}:" in proc.stderr and "error:" in proc.stderr, proc.stderr


def test_no_cache_flag(small, tmp_path):
    cdir = tmp_path / "cache"
    env = {"TDFLOW_CACHE_DIR": str(cdir)}
    env_off = {**env, "TDFLOW_NO_CACHE": ""}
    assert run_tdflow("--no-cache", str(small), env=env_off).returncode == 0
    assert not any(cdir.rglob("*.rk"))
    first = run_tdflow("--dump-json", str(small), env=env_off)
    # The entries are written by a child the command forks after its output is ready.
    deadline = time.monotonic() + 60
    while len(list(cdir.rglob("*.rk"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(cdir.rglob("*.rk"))) == 2
    second = run_tdflow("--dump-json", str(small), env=env_off)  # served from the cache
    assert first.returncode == second.returncode == 0 and first.stdout == second.stdout


def test_the_standard_library_reads_without_include_flags(tmp_path):
    """tdflow's own include dir (``tdflow/Base.td``) is searched last, as every other command
    searches it (issue 24: ``tdflow tblgen ops.td`` could not find it); a user's -I still wins."""
    root = Path(__file__).resolve().parents[2]
    proc = run_tdflow(str(root / "ops.td"), "--dump-json", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert "TDF_ReluOp" in doc and "TDF_Op" in doc["!instanceof"]
    mine = tmp_path / "inc" / "tdflow"
    mine.mkdir(parents=True)
    (mine / "Base.td").write_text("def FromUserInclude;\n")
    (tmp_path / "u.td").write_text('include "tdflow/Base.td"\n')
    proc = run_tdflow(str(tmp_path / "u.td"), "-I", str(tmp_path / "inc"), "--dump-json",
                      "--no-cache")
    assert proc.returncode == 0 and "FromUserInclude" in json.loads(proc.stdout), proc.stderr


def test_a_process_group_kill_after_exit_does_not_lose_the_cache_entry(tmp_path):
    """Issue 23: timing tools and CI runners kill a command's process group once it exits; the
    forked cache writer leaves the group, so the entry still lands."""
    import signal

    big = tmp_path / "big.td"
    big.write_text("class C<int n> { int v = n; string s = \"r\" # n; }\n"
                   "foreach i = 0...19999 in def R#i : C<i>;\n")
    cdir = tmp_path / "cache"
    env = {**os.environ, "TDFLOW_CACHE_DIR": str(cdir)}
    env.pop("TDFLOW_NO_CACHE", None)
    proc = subprocess.Popen([*tdflow_cmd(), "tblgen", "--dump-json", str(big)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # what such a runner does as the command exits
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + 60
    while len(list(cdir.rglob("*.rk"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(cdir.rglob("*.rk"))) == 2
