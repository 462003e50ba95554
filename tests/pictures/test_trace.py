"""Profiles: Chrome Trace Event JSON from `tdflow run --profile` and `tdflow.profile()`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tdflow.dialect.ir import parse_module
from tdflow.runtime import tracing
from tdflow.runtime.engine import NaiveEngine, ThreadedEngine, set_engine

import tdflow
from tdflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"


def _launch_ops(path: Path) -> list[str]:
    """The op names of every launch of the plan of ``path``'s first function, in order."""
    result = tdflow.runtime.compiled.lower(parse_module(path.read_text(), str(path)), "cpu")
    return [ln.op for ln in result.plan(result.module.funcs[0].name).launches]


def _slices(doc: dict, cat: str) -> list[dict]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["cat"] == cat]


def _check_well_formed(doc: dict) -> None:
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= set(e)
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["args"], dict)
    xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert [e["ts"] for e in xs] == sorted(e["ts"] for e in xs)
    named = {e["tid"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {e["tid"] for e in xs} <= named  # every track has a name


def test_cli_profile_has_one_slice_per_launch(tmp_path, capsys):
    import tdflow.runtime.compiled  # noqa: F401 - for _launch_ops

    out = tmp_path / "trace.json"
    assert main(["run", str(MLP), "--profile", str(out), "--repeat", "2"]) == 0
    assert "wrote a trace of" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    _check_well_formed(doc)
    launches = _slices(doc, "launch")
    expected = _launch_ops(MLP)
    assert [e["name"] for e in launches] == expected * 3  # the first call and 2 repeats
    first = launches[0]["args"]
    assert first["loc"].startswith(f"{MLP}:") and first["kernel"].startswith("cpu.")
    # bytes are what the launch reads and writes, from its shapes and dtypes
    sizes = [int(np.prod([int(d) for d in t[len("tensor<"):-1].split("x")[:-1]]))
             for t in first["inputs"] + first["outputs"]]
    assert first["bytes"] == 4 * sum(sizes)
    compiles = _slices(doc, "compile")
    assert [e["name"] for e in compiles] == ["lower @mlp", "load @mlp"]
    # compiling comes before the first launch and does not overlap it
    assert compiles[-1]["ts"] + compiles[-1]["dur"] <= launches[0]["ts"]


def test_profile_covers_eager_calls_on_engine_threads():
    old = set_engine(ThreadedEngine(workers=2))
    try:
        x = tdflow.tensor(np.ones((64, 64), np.float32))
        with tdflow.profile() as prof:
            y = tdflow.functional.relu(x)
            z = tdflow.functional.relu(y)
            z.numpy()
        doc = prof.trace()
    finally:
        set_engine(old)
    _check_well_formed(doc)
    assert [e["name"] for e in _slices(doc, "launch")] == ["tdflow.relu", "tdflow.relu"]
    assert tracing.active is None  # the hook is removed again


def test_engine_mode_launches_are_on_worker_tracks(tmp_path):
    old = set_engine(ThreadedEngine(workers=2))
    try:
        f = tdflow.compile(MLP, mode="engine")
        args = [np.ones(s, np.float32) for _, s, _ in f.arguments]
        f(*args)
        with tdflow.profile(tmp_path / "t.json"):
            f(*args)
    finally:
        set_engine(old)
    doc = json.loads((tmp_path / "t.json").read_text())
    _check_well_formed(doc)
    launches = _slices(doc, "launch")
    assert sorted(e["name"] for e in launches) == sorted(_launch_ops(MLP))
    assert all("bytes" in e["args"] and "loc" in e["args"] for e in launches)


def test_no_profile_no_recording():
    set_engine(NaiveEngine())
    try:
        rec = tracing.Recorder()
        tdflow.functional.relu(tdflow.tensor(np.ones(3, np.float32))).numpy()
        assert tracing.active is None and rec.events == []
    finally:
        set_engine(None)


# Shapes no other test uses: in a full run, cudasim's in-process memos of generated code and
# loaded modules would otherwise serve examples/mlp.mlir without a build.
UNIQUE = """func.func @uniq(%x: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %0 = "tdflow.exp"(%x) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %1 = "tdflow.tanh"(%0) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  %2 = "tdflow.softmax"(%1) : (tensor<37x29xf32>) -> tensor<37x29xf32>
  return %2 : tensor<37x29xf32>
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="cudasim needs g++, not installed")
def test_cudasim_trace_has_a_gxx_build_slice(tmp_path, monkeypatch):
    monkeypatch.setenv("TDFLOW_CACHE_DIR", str(tmp_path / "cache"))  # force a fresh build
    from tdflow.runtime.backends import kernel_build

    monkeypatch.setattr(kernel_build, "_memory", {})
    prog = tmp_path / "uniq.mlir"
    prog.write_text(UNIQUE)
    out = tmp_path / "trace.json"
    assert main(["run", str(prog), "--device", "cudasim", "--profile", str(out)]) == 0
    doc = json.loads(out.read_text())
    _check_well_formed(doc)
    builds = _slices(doc, "build")
    assert [e["name"] for e in builds] == ["g++ build"]
    load = next(e for e in _slices(doc, "compile") if e["name"] == "load @uniq")
    # the build happens while the plan is loaded: its slice nests inside the load slice
    assert load["ts"] <= builds[0]["ts"]
    assert builds[0]["ts"] + builds[0]["dur"] <= load["ts"] + load["dur"] + 1e-3
    assert len(_slices(doc, "launch")) == len(_launch_ops(prog))
