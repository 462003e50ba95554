"""Pipeline strings, options, errors, IR printing between passes and timing."""

from __future__ import annotations

import io

import pytest
from tdflow.dialect import standard_dialect
from tdflow.dialect.ir import parse_module
from tdflow.lowering.pass_manager import (
    PassManager,
    PipelineError,
    default_pipeline,
    parse_pipeline,
)
from tdflow.lowering.passes import PASSES

PROGRAM = """
func.func @f(%x: tensor<4xf32>) -> tensor<*xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<*xf32>
  %1 = "tdflow.relu"(%0) : (tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}
"""


def test_parse_standard_pipeline_round_trips():
    pm = PassManager.parse(default_pipeline("cpu"))
    assert [p.name for p in pm.passes] == ["infer-shapes", "canonicalize", "fuse-elementwise",
                                           "select-kernels", "plan-memory"]
    assert pm.pipeline == default_pipeline("cpu")
    assert pm.passes[3].option("device") == "cpu"


def test_pass_classes_follow_naming_conventions():
    for name, (module, cls) in PASSES.items():
        (p,) = parse_pipeline(name)
        assert p.name == name and type(p).__name__ == cls
        assert cls == "".join(w.capitalize() for w in name.split("-")) + "Pass"
        assert module.endswith(name.replace("-", "_"))
        assert p.summary


def test_options_are_typed():
    (p,) = parse_pipeline("canonicalize{max-iterations=3, fold=false}")
    assert p.option("max-iterations") == 3 and p.option("fold") is False
    assert str(p) == "canonicalize{max-iterations=3,fold=false}"


@pytest.mark.parametrize("text, fragment", [
    ("infer-shape", "unknown pass 'infer-shape'"),
    ("canonicalize{bogus=1}", "has no option 'bogus'; valid options: cse, fold, max-iterations"),
    ("canonicalize{fold=maybe}", "must be bool"),
    ("canonicalize{max-iterations=x}", "must be int"),
    ("canonicalize{fold}", "must be KEY=VALUE"),
    ("canonicalize{fold=true", "unbalanced"),
    ("infer-shapes,,canonicalize", "empty pass name"),
])
def test_bad_pipelines_are_clear(text, fragment):
    with pytest.raises(PipelineError) as err:
        parse_pipeline(text)
    assert fragment in str(err.value)
    if "unknown pass" in fragment:
        assert "valid passes: apply-patterns, autodiff, canonicalize, fuse-elementwise, infer-sbp, infer-shapes" in str(err.value)
    assert err.value.render().startswith("error: ")


def run(pipeline: str, **kw):
    buf = io.StringIO()
    pm = PassManager.parse(pipeline, dialect=standard_dialect(), stream=buf, **kw)
    result = pm.run(parse_module(PROGRAM, "p.mlir"))
    return result, buf.getvalue()


def test_print_ir_after_all_and_after_one():
    _, text = run("infer-shapes,canonicalize", print_ir_after_all=True)
    assert text.count("// -----// IR Dump After") == 2
    first, second = text.split("IR Dump After CanonicalizePass (canonicalize)")
    assert "InferShapesPass (infer-shapes)" in first
    assert first.count('"tdflow.relu"') == 2 and "tensor<*xf32>" not in first
    assert second.count('"tdflow.relu"') == 1
    _, text = run("infer-shapes,canonicalize", print_ir_after=["canonicalize"])
    assert text.count("IR Dump After") == 1 and "CanonicalizePass" in text


def test_print_ir_after_unknown_pass_is_an_error():
    with pytest.raises(PipelineError, match="--print-ir-after: unknown pass 'canon'"):
        run("canonicalize", print_ir_after=["canon"])


def test_timing_reports_every_pass():
    result, text = run("infer-shapes,canonicalize", timing=True)
    assert [t.name for t in result.timings] == ["infer-shapes", "canonicalize"]
    assert "pass timing:" in text and "infer-shapes" in text and "total" in text


def test_select_kernels_dump_lists_choices():
    from tdflow.runtime.kernels.registry import kernel_table

    _, text = run("infer-shapes,select-kernels{device=cpu}", print_ir_after=["select-kernels"],
                  kernel_table=kernel_table("cpu"))
    assert "// @f: 'tdflow.relu' at p.mlir:3:3 -> kernel cpu.relu" in text


def test_failing_pass_dumps_the_ir_it_failed_on():
    from tdflow.lowering.pass_manager import PassFailure

    buf = io.StringIO()
    pm = PassManager.parse("infer-shapes,plan-memory", dialect=standard_dialect(), stream=buf,
                           print_ir_after_all=True)
    with pytest.raises(PassFailure, match="no kernel chosen"):
        pm.run(parse_module(PROGRAM, "p.mlir"))
    text = buf.getvalue()
    assert "IR Dump After InferShapesPass (infer-shapes) //" in text
    assert "IR Dump After PlanMemoryPass (plan-memory) Failed //" in text


def test_lowering_never_imports_the_runtime():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from tdflow.dialect import standard_dialect\n"
        "from tdflow.dialect.ir import parse_module\n"
        "from tdflow.lowering.pass_manager import PassManager\n"
        f"m = parse_module({PROGRAM!r})\n"
        "PassManager.parse('infer-shapes,canonicalize,fuse-elementwise', "
        "dialect=standard_dialect()).run(m)\n"
        "import tdflow.lowering.passes.select_kernels, tdflow.lowering.passes.plan_memory\n"
        "bad = sorted(n for n in sys.modules if n.startswith('tdflow.runtime'))\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
