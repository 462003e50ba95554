"""Generated optimizer steps and dropout on cudasim equal the numpy backend bit for bit:
sgd_update and adam_update with every optional operand (runtime learning rate, scale, skip,
bias corrections, model_copy, max_v) and regularisation, in f16, f32 and f64; dropout's masks
and outputs for the same seed and call sequence (the shared counter-based rng); then all of
them compile with nvcc."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import (
    GENERATED,
    check,
    full_attrs,
    nvcc_compile_all,
    prebuild,
    rand,
    result_types,
    run,
)
from tdflow.lowering.cuda import CudaCodegenError, TensorSpec, generate
from tdflow.runtime import rng

FLOATS = ("f16", "f32", "f64")
SHAPES = ((37,), (5, 13))


# (op, inputs, attrs, skipped: skip_if is non-zero, so every buffer must stay as it was)
def _sgd_cases(dt: str, shape: tuple[int, ...]) -> list[tuple[str, list, dict, bool]]:
    m, d = rand(shape, dt, seed=1), rand(shape, dt, seed=2)
    copy = np.zeros(shape, np.float16 if dt != "f16" else np.float32)
    lr, sc = np.array([0.3], np.float32), np.array([2.0], np.float64)
    return [
        ("tdflow.sgd_update", [m, d], {"learning_rate_val": 0.1}, False),
        ("tdflow.sgd_update", [m, d], {"learning_rate_val": 0.1, "learning_rate_scale": 0.7,
                                       "l1": 0.01, "l2": 0.02, "weight_decay": 0.1,
                                       "scale": 0.5}, False),
        ("tdflow.sgd_update", [m, d, copy, lr, sc, np.array([0])],
         {"learning_rate_val": 9.0, "l2": 0.25, "scale": 0.5,
          "operandSegmentSizes": [1, 1, 1, 1, 1, 1]}, False),
        ("tdflow.sgd_update", [m, d, None, lr], {"operandSegmentSizes": [1, 1, 0, 1, 0, 0]},
         False),
        ("tdflow.sgd_update", [m, d, None, None, None, np.array([1.0], np.float32)],
         {"learning_rate_val": 0.5, "operandSegmentSizes": [1, 1, 0, 0, 0, 1]}, True),
    ]


def _adam_cases(dt: str, shape: tuple[int, ...]) -> list[tuple[str, list, dict, bool]]:
    m, d = rand(shape, dt, seed=3), rand(shape, dt, seed=4)
    mm, vv, mx = rand(shape, dt, seed=5), rand(shape, dt, lo=0, seed=6), rand(shape, dt, lo=0, seed=7)
    copy = np.zeros(shape, np.float16)
    one = [1] * 11
    base = {"learning_rate_val": 0.001, "bias_correction1_val": 0.1,
            "bias_correction2_val": 0.001, "epsilon": 1e-8}
    return [
        ("tdflow.adam_update", [m, d, None, None, None, None, None, None, mm, vv], base, False),
        ("tdflow.adam_update", [m, d, copy, np.array([0.01]), np.array([0.5], np.float32),
                                np.array([0], np.int32), np.array([0.19]), np.array([0.0199]),
                                mm, vv, mx],
         {"amsgrad": True, "l1": 0.1, "l2": 0.2, "weight_decay": 0.3, "beta1": 0.8,
          "beta2": 0.99, "epsilon": 1e-6, "scale": 3.0, "operandSegmentSizes": one}, False),
        ("tdflow.adam_update", [m, d, None, None, None, None, np.array([0.5]), None, mm, vv],
         {**base, "do_bias_correction": False,
          "operandSegmentSizes": [1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 0]}, False),
        ("tdflow.adam_update", [m, d, None, None, None, np.array([2]), None, None, mm, vv],
         {**base, "operandSegmentSizes": [1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0]}, True),
    ]


STEPS = {dt: [c for s in SHAPES for c in _sgd_cases(dt, s) + _adam_cases(dt, s)] for dt in FLOATS}
DROPOUT = [(dt, shape, rate, with_add) for dt in FLOATS for shape in ((5, 13), (64,))
           for rate in (0.0, 0.3, 0.9) for with_add in (False, True)]


def _dropout_inputs(dt: str, shape: tuple[int, ...], with_add: bool) -> list[np.ndarray]:
    x = rand(shape, dt, seed=8)
    x.reshape(-1)[:3] = [np.nan, np.inf, -0.0]  # dropped NaN stays NaN, as x * 0 does
    return [x, rand(shape, dt, seed=9)] if with_add else [x]


@pytest.fixture(scope="module", autouse=True)
def _compiled_together() -> None:
    prebuild([c[:3] for cases in STEPS.values() for c in cases] + [("tdflow.dropout", _dropout_inputs(dt, s, a), {"rate": r})
                      for dt, s, r, a in DROPOUT]
             + [("tdflow.dropout", [np.ones(4096, np.float32)], {"rate": 0.3, "seed": -1})])


@pytest.mark.parametrize("dt", FLOATS)
def test_steps_match_numpy_exactly(dt: str) -> None:
    for op, inputs, attrs, skipped in STEPS[dt]:
        got = check(op, inputs, attrs, exact=True)
        if skipped:
            for g, a in zip(got, [a for a in inputs if a is not None]):
                np.testing.assert_array_equal(g, a)


def test_step_changes_the_model() -> None:
    m, d = rand((9,), "f32", seed=1), rand((9,), "f32", seed=2)
    got = check("tdflow.sgd_update", [m, d], {"learning_rate_val": 0.5}, exact=True)[0]
    np.testing.assert_array_equal(got, m - d * np.float32(0.5))


def test_ambiguous_optional_operands_are_refused() -> None:
    f = TensorSpec((4,), "f32")
    with pytest.raises(CudaCodegenError, match="operandSegmentSizes"):
        generate("tdflow.sgd_update", [f, f, f], [], {})


def _draw(device: str, dt: str, shape, rate: float, with_add: bool, seed: int = 0):
    inputs = _dropout_inputs(dt, shape, with_add)
    attrs = full_attrs("tdflow.dropout", {"rate": rate, "seed": seed})
    return run(device, "tdflow.dropout", inputs, attrs,
               result_types("tdflow.dropout", inputs, attrs))


@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
@pytest.mark.parametrize("dt,shape,rate,with_add", DROPOUT)
def test_dropout_equals_numpy_for_the_same_seed(dt, shape, rate, with_add) -> None:
    rng.manual_seed(1234)
    want = [_draw("cpu", dt, shape, rate, with_add) for _ in range(2)]
    rng.manual_seed(1234)
    got = [_draw("cudasim", dt, shape, rate, with_add) for _ in range(2)]
    for (wo, wm), (go, gm) in zip(want, got):
        np.testing.assert_array_equal(gm, wm)
        assert go.dtype == wo.dtype
        np.testing.assert_array_equal(go.view(np.uint8), wo.view(np.uint8))  # bit for bit
    if 0 < rate < 1:
        assert not np.array_equal(got[0][1], got[1][1])  # the stream advances call by call


def test_a_seed_is_one_stream_across_backends() -> None:
    # numpy draws counters [0, n) of a fresh seed's stream, cudasim the next [n, 2n)
    seed, n = 0x5EED_0001, 65
    cpu_mask = _draw("cpu", "f32", (5, 13), 0.5, False, seed)[1]
    sim_mask = _draw("cudasim", "f32", (5, 13), 0.5, False, seed)[1]
    np.testing.assert_array_equal(cpu_mask.reshape(-1), rng.uniform((seed, 0), n) >= 0.5)
    np.testing.assert_array_equal(sim_mask.reshape(-1), rng.uniform((seed, n), n) >= 0.5)


def test_dropout_statistics_on_cudasim() -> None:
    x = np.ones(4096, np.float32)
    attrs = full_attrs("tdflow.dropout", {"rate": 0.3, "seed": -1})
    out, mask = run("cudasim", "tdflow.dropout", [x], attrs,
                    result_types("tdflow.dropout", [x], attrs))
    assert mask.dtype == np.bool_ and 0.67 < mask.mean() < 0.73
    np.testing.assert_array_equal(out, mask * np.float32(1 / 0.7))


def test_all_compile_with_nvcc() -> None:
    b = TensorSpec((33, 5), "bf16")
    GENERATED.extend([
        generate("tdflow.adam_update", [b] * 11, [], {"amsgrad": True, "l1": 0.1,
                                                      "operandSegmentSizes": [1] * 11}),
        generate("tdflow.sgd_update", [b] * 3, [], {"weight_decay": 0.1,
                                                    "operandSegmentSizes": [1, 1, 1, 0, 0, 0]}),
        generate("tdflow.dropout", [b, b], [b, TensorSpec((33, 5), "i1")], {"rate": 0.1}),
    ])
    report = nvcc_compile_all()
    assert "Compiling entry function" in report
