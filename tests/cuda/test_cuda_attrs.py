"""Attributes reach the CUDA generators normalized once: ``generate`` fills the ``.td`` defaults
(the generators read ``attrs[name]`` and restate none), and one helper per concept of
``lowering/cuda/_attrs.py`` decides what a value means (negative axes, window pairs, data
formats, bias_add's axis), with errors that name the op."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

import numpy as np
import pytest
from cuda_harness import full_attrs, rand, result_types
from tdflow.dialect import standard_dialect
from tdflow.dialect.types import dtype_from_numpy
from tdflow.lowering.cuda import CudaCodegenError, TensorSpec, generate, generated_ops
from tdflow.lowering.cuda import generator_for as _generator_for
from tdflow.lowering.cuda._attrs import channels_last
from tdflow.lowering.cuda.code import with_defaults
from tdflow.runtime.kernels.registry import kernel_table

CUDA_DIR = Path(_generator_for("tdflow.matmul").__code__.co_filename).parent
KERNELS_DIR = Path(kernel_table("cpu").candidates("tdflow.matmul")[0].fn.__code__.co_filename).parent


def _spec(a: np.ndarray) -> TensorSpec:
    return TensorSpec(a.shape, dtype_from_numpy(a.dtype))


def _code(op: str, inputs: list[np.ndarray], attrs: dict):
    types = result_types(op, inputs, full_attrs(op, attrs))
    return generate(op, [_spec(a) for a in inputs],
                    [TensorSpec(t.shape, t.dtype) for t in types], attrs)


# (op, inputs, the attributes a direct caller gives: the rest are defaults)
PARTIAL = [
    ("tdflow.tril", [rand((3, 5), "f32")], {"diagonal": 1}),
    ("tdflow.fused_scale_tril", [rand((4, 4), "f16")], {"is_floating_scale_value": True,
                                                        "floating_scale_value": 0.5}),
    ("tdflow.gather", [rand((4, 3), "f32"), np.array([2, 0], np.int64)], {}),
    ("tdflow.cat", [rand((2, 3), "f32"), rand((2, 3), "f32")], {"axis": -1}),
    ("tdflow.embedding_grad", [rand((3, 4), "f32"), rand((6, 4), "f32"),
                               np.array([1, 5, 1], np.int64)], {"padding_idx": 5}),
    ("tdflow.layer_norm", [rand((4, 8), "f32")], {"begin_norm_axis": 1}),
    ("tdflow.sgd_update", [rand((6,), "f32"), rand((6,), "f32")], {"learning_rate_val": 0.1}),
    ("tdflow.pad", [rand((2, 3), "i32")], {"padding_before": [1, 0], "padding_after": [0, 2],
                                           "padding": [1, 0, 0, 2]}),
    ("tdflow.narrow", [rand((5, 4), "f32")], {"dim": -2, "start": 1, "length": 3}),
]


@pytest.mark.parametrize("op,inputs,attrs", PARTIAL, ids=[c[0] for c in PARTIAL])
def test_generate_fills_the_td_defaults_a_caller_leaves_out(op, inputs, attrs) -> None:
    direct = _code(op, inputs, attrs)
    complete = _code(op, inputs, full_attrs(op, attrs))  # as compiled programs call it
    assert (direct.source, direct.launches, direct.scalars) == (
        complete.source, complete.launches, complete.scalars)


def test_with_defaults_holds_the_value_the_ir_holds() -> None:
    got = with_defaults("tdflow.adam_update", {"beta1": 0.5})
    assert got["beta1"] == 0.5 and got["amsgrad"] is False
    assert got["beta2"] == float(np.float32(0.999)) != 0.999  # an f32 attribute, rounded
    assert with_defaults("my.unknown_op", {"x": 1}) == {"x": 1}


def _defaults_by_module() -> dict[str, set[str]]:
    std = standard_dialect()
    out: dict[str, set[str]] = {}
    for op in generated_ops():
        module = _generator_for(op).__module__.rpartition(".")[2]
        out.setdefault(module, set()).update(
            a.name for a in std.lookup(op).attributes if a.default is not None)
    return out


def _restated(path: Path, names: set[str]) -> list[str]:
    """``attrs.get("<name>", ...)`` calls in ``path`` for attributes with a ``.td`` default
    (and ``attrs.get(f"...", default)``, whose name is built from parts)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "attrs" and node.args
                and node.args):
            name = node.args[0]
            if isinstance(name, ast.Constant) and name.value in names:
                out.append(f"{path.parent.name}/{path.name}:{node.lineno} "
                           f"attrs.get({name.value!r})")
            elif isinstance(name, ast.JoinedStr) and len(node.args) > 1:
                # a name built from parts, with a fallback: a default restated in another form
                out.append(f"{path.parent.name}/{path.name}:{node.lineno} attrs.get(f'...', ...)")
    return out


def test_generators_restate_no_td_default() -> None:
    restated = []
    for module, names in _defaults_by_module().items():
        restated += _restated(CUDA_DIR / f"{module}.py", names)
    assert not restated, restated


def _cpu_defaults_by_module() -> dict[str, set[str]]:
    std = standard_dialect()
    table = kernel_table("cpu")
    out: dict[str, set[str]] = {}
    for op in table.ops():
        d = std.lookup(op)
        if d is None:
            continue
        names = {a.name for a in d.attributes if a.default is not None}
        for k in table.candidates(op):
            out.setdefault(k.fn.__module__.rpartition(".")[2], set()).update(names)
    return out


def test_cpu_kernels_restate_no_td_default() -> None:
    # kernels receive complete attributes (the seams call complete_attrs; a direct call of a
    # Kernel completes them): a default written again in a kernel is a second source of truth
    by_module = _cpu_defaults_by_module()
    every = set().union(*by_module.values())
    restated = []
    for path in sorted(KERNELS_DIR.glob("*.py")):
        # a shared (``_``) module serves every family
        names = every if path.stem.startswith("_") else by_module.get(path.stem, set())
        restated += _restated(path, names)
    assert not restated, "\n".join(restated)


def test_attribute_helpers_are_not_written_again_in_the_generators() -> None:
    modules = [m.name for m in pkgutil.iter_modules([str(CUDA_DIR)]) if m.name != "_attrs"]
    again = [f"{m}.{n.name}" for m in modules
             for n in ast.walk(ast.parse((CUDA_DIR / f"{m}.py").read_text()))
             if isinstance(n, ast.FunctionDef)
             and n.name.lstrip("_") in ("pair", "axes", "norm_axis", "norm_dim", "layout")]
    assert not again, again


def test_scan_axes_and_permutations_come_normalized_and_checked_by_the_dialect() -> None:
    # cumsum's dim (TDF_ScanAxisAttr), transpose's perm (TDF_PermAttr), normalization's axis
    # and layer_norm's begin axes (TDF_AxisAttr): negative values give the same kernel
    x = TensorSpec((2, 3, 4), "f32")
    for dim in (-3, -1, 0, 2):
        assert generate("tdflow.cumsum", [x], [x], {"dim": dim}).source == generate(
            "tdflow.cumsum", [x], [x], {"dim": dim % 3}).source
    with pytest.raises(CudaCodegenError, match=r"'tdflow.cumsum': attribute 'dim': dim 3 is out "
                                               r"of range for 'x' of shape \[2, 3, 4\] "
                                               r"\(expected -3 <= dim < 3\)"):
        generate("tdflow.cumsum", [x], [x], {"dim": 3})
    s = TensorSpec((), "f32")  # a scalar has one axis to scan (numpy's cumsum)
    assert generate("tdflow.cumsum", [s], [s], {"dim": -1}).source
    out = TensorSpec((4, 2, 3), "f32")
    assert generate("tdflow.transpose", [x], [out], {"perm": [-1, 0, 1]}).source == generate(
        "tdflow.transpose", [x], [out], {"perm": [2, 0, 1]}).source
    with pytest.raises(CudaCodegenError, match=r"perm \[0, 0, 1\] is not a permutation of 0..2 "
                                               r"for 'input' of shape \[2, 3, 4\]"):
        generate("tdflow.transpose", [x], [out], {"perm": [0, 0, 1]})
    s2 = TensorSpec((2,), "f32")
    ln = {"begin_params_axis": -1, "epsilon": 1e-5}
    assert generate("tdflow.layer_norm", [x], [x, s2, s2], {**ln, "begin_norm_axis": -2}
                    ).source == generate("tdflow.layer_norm", [x], [x, s2, s2],
                                         {**ln, "begin_norm_axis": 1}).source
    with pytest.raises(CudaCodegenError, match="'tdflow.pad': attribute 'padding_after': "
                                               "padding_after \\[0, -1, 0\\] has an entry below 0"):
        generate("tdflow.pad", [x], [x], {"padding_before": [0, 0, 0],
                                          "padding_after": [0, -1, 0], "padding": []})


def test_generate_expands_window_pairs_and_checks_them_as_the_dialect_does() -> None:
    # TDF_PairAttr (one normalization): an int is both dims; entries below the minimum refused
    x, w = TensorSpec((1, 3, 5, 5), "f32"), TensorSpec((2, 3, 3, 3), "f32")
    base = {"data_format": "channels_first", "kernel_size": [3, 3], "dilation_rate": [1, 1],
            "padding_before": [0, 0]}
    out = [TensorSpec((1, 2, 3, 3), "f32")]
    ints = generate("tdflow.conv2d", [x, w], out, {**base, "strides": 1})
    assert ints.source == generate("tdflow.conv2d", [x, w], out, {**base, "strides": [1, 1]}).source
    with pytest.raises(CudaCodegenError, match="attribute 'strides': strides entries must be >= 1"):
        generate("tdflow.conv2d", [x, w], out, {**base, "strides": [0, 1]})


def test_data_format_and_bias_axis() -> None:
    assert [channels_last("op", f) for f in ("NCHW", "channels_first", "NHWC",
                                             "channels_last")] == [False, False, True, True]
    with pytest.raises(CudaCodegenError, match="tdflow.avg_pool_2d: unknown data_format 'NCWH'"):
        channels_last("tdflow.avg_pool_2d", "NCWH")
    # bias_add's axis is normalized by the dialect (TDF_AxisAttr of a); the generator checks b
    a3 = TensorSpec((2, 3, 4), "f32")
    neg = generate("tdflow.bias_add", [a3, TensorSpec((3,), "f32")], [a3], {"axis": -2})
    pos = generate("tdflow.bias_add", [a3, TensorSpec((3,), "f32")], [a3], {"axis": 1})
    assert neg.source == pos.source
    with pytest.raises(CudaCodegenError, match=r"b of shape \(4,\) does not match axis 1"):
        generate("tdflow.bias_add", [a3, TensorSpec((4,), "f32")], [a3], {"axis": 1})


def test_generate_refuses_a_one_entry_window_as_the_dialect_does() -> None:
    # one normalization (the dialect's TDF_PairAttr): an int is both dims, a list says both
    x = rand((1, 2, 6, 6), "f32")
    base = {"padding": [0, 0], "data_format": "channels_first", "dilation": [1, 1]}
    attrs2 = {**base, "kernel_size": [2, 2], "stride": [2, 2]}
    two = _code("tdflow.max_pool_2d", [x], attrs2)
    outs = [TensorSpec(t.shape, t.dtype)
            for t in result_types("tdflow.max_pool_2d", [x], full_attrs("tdflow.max_pool_2d", attrs2))]
    ints = generate("tdflow.max_pool_2d", [_spec(x)], outs, {**base, "kernel_size": 2, "stride": 2})
    assert ints.source == two.source
    with pytest.raises(CudaCodegenError, match="'tdflow.max_pool_2d': attribute 'kernel_size': "
                                               "kernel_size must have 2 entries"):
        generate("tdflow.max_pool_2d", [_spec(x)], outs, {**base, "kernel_size": [2], "stride": [2]})


def test_generator_errors_from_the_helpers_name_the_op() -> None:
    x, w = TensorSpec((1, 3, 5, 5), "f32"), TensorSpec((2, 3, 3, 3), "f32")
    attrs = {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1],
             "dilation_rate": [1, 1], "padding_before": [0, 0]}
    with pytest.raises(CudaCodegenError, match="'tdflow.conv2d': attribute 'strides': strides "
                                               "must have 2 entries"):
        generate("tdflow.conv2d", [x, w], [TensorSpec((1, 2, 3, 3), "f32")], attrs)
    a = TensorSpec((2, 3), "f32")
    with pytest.raises(CudaCodegenError, match="tdflow.bias_add: b of shape"):
        generate("tdflow.bias_add", [a, TensorSpec((2,), "f32")], [a], {"axis": -1})
    with pytest.raises(CudaCodegenError, match="'tdflow.cat': attribute 'axis': axis 2 is out "
                                               "of range"):
        generate("tdflow.cat", [a, a], [TensorSpec((4, 3), "f32")], {"axis": 2})
