"""Optional operands on the GPU devices: an eager call passes absent ones as ``None`` (and may
leave trailing ones off), generators see only the present operands, and the backend tells them
which they are (``operandSegmentSizes``)."""

from __future__ import annotations

import numpy as np
from cuda_harness import full_attrs, need_gxx
from tdflow.runtime.kernels.device import with_segments
from tdflow.runtime.kernels.registry import kernel_table


def test_adam_update_with_a_learning_rate_tensor_on_cudasim() -> None:
    need_gxx()
    rng = np.random.default_rng(0)
    w, g, m = (rng.standard_normal(37).astype(np.float32) for _ in range(3))
    v = np.abs(rng.standard_normal(37)).astype(np.float32)
    lr = np.array([0.01], np.float32)
    attrs = full_attrs("tdflow.adam_update", {"beta1": 0.8})
    results = {}
    for device in ("cpu", "cudasim"):
        # model, model_diff, model_copy, learning_rate, scale_by_tensor, skip_if,
        # bias_correction1, bias_correction2, m, v (max_v left off)
        ins = [w.copy(), g, None, lr, None, None, None, None, m.copy(), v.copy()]
        k = kernel_table(device).select("tdflow.adam_update", ["f32", "f32", None, "f32"], attrs)
        k(attrs, ins, [])
        results[device] = (ins[0], ins[8], ins[9])
    for a, b in zip(results["cpu"], results["cudasim"]):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(results["cpu"][0], w)  # the model did move


def test_segments_are_added_only_when_needed() -> None:
    from tdflow.dialect import standard_dialect

    adam = standard_dialect().lookup("tdflow.adam_update")
    assert with_segments({}, [1, 2]) == {}
    got = with_segments({}, [1, 2, None, 3], adam)["operandSegmentSizes"]
    assert got == [1, 1, 0, 1] + [0] * (len(adam.operands) - 4)
    given = {"operandSegmentSizes": [1, 1]}
    assert with_segments(given, [1, None, 2], adam) is given
