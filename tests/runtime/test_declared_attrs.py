"""The attributes declared last (issue 19 item 3): transpose's ``perm`` (``TDF_PermAttr``),
cumsum's/cumprod's ``dim`` (``TDF_ScanAxisAttr``: a scalar has one axis), layer_norm's begin
axes and normalization's ``axis`` (``TDF_AxisAttr``), pad's paddings (``TDF_DimsAttr``).

The dialect normalizes them once and the CPU kernels and CUDA generators read them as given:
negative values give numpy's results on the compiled (cpu, cudasim) and eager paths, and a bad
value is refused with one message naming the op, the attribute, the value, the operand's
shape and the valid range."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import tdflow

F = tdflow.functional
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32)

PROGRAM = """func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x5x4xf32>) {
  %t = "tdflow.transpose"(%x) {perm = [-1 : si32, 0 : si32, 1 : si32]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %c = "tdflow.cumsum"(%x) {dim = -2 : si64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %q = "tdflow.cumprod"(%x) {dim = -3 : si64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %y, %m, %v = "tdflow.layer_norm"(%x) {begin_norm_axis = -1 : si64, begin_params_axis = -1 : si64, epsilon = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %p = "tdflow.pad"(%x) {padding_before = [1, 1, 0], padding_after = [0, 1, 0], padding = []} : (tensor<2x3x4xf32>) -> tensor<3x5x4xf32>
  return %t, %c, %q, %y, %p : tensor<4x2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3x5x4xf32>
}"""


def _layer_norm(a: np.ndarray) -> np.ndarray:
    m = a.mean(-1, keepdims=True)
    return (a - m) / np.sqrt(((a - m) ** 2).mean(-1, keepdims=True) + 1e-5)


REFS = [X.transpose(2, 0, 1), np.cumsum(X, axis=1), np.cumprod(X, axis=0), _layer_norm(X),
        np.pad(X, [(1, 0), (1, 1), (0, 0)])]


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_compiled_programs_read_negative_values_as_numpy_does(device):
    if device == "cudasim" and shutil.which("g++") is None:
        pytest.skip("g++ not found; cudasim needs it")
    outs = tdflow.compile(PROGRAM, device=device)(X)
    for got, want in zip(outs, REFS, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_eager_calls_read_negative_values_as_numpy_does():
    t = tdflow.tensor
    np.testing.assert_array_equal(F.transpose(t(X), [-1, 0, 1]).numpy(), REFS[0])
    np.testing.assert_allclose(F.cumsum(t(X), -2).numpy(), REFS[1], rtol=1e-6)
    np.testing.assert_allclose(F.layer_norm(t(X), -1, -1, 1e-5)[0].numpy(), REFS[3],
                               rtol=1e-4, atol=1e-5)
    # a scalar has one axis to scan, as numpy's cumsum counts it
    assert F.cumsum(t(np.float32(3.0)), -1).numpy() == np.cumsum(np.float32(3.0), axis=-1)[0]


@pytest.mark.parametrize("call, message", [
    (lambda t: F.transpose(t, [0, 0, 1]),
     "'tdflow.transpose': perm [0, 0, 1] is not a permutation of 0..2 for 'input' of shape "
     "[2, 3, 4]"),
    (lambda t: F.cumsum(t, 3),
     "'tdflow.cumsum': dim 3 is out of range for 'x' of shape [2, 3, 4] (expected -3 <= dim < 3)"),
    (lambda t: F.layer_norm(t, 1, -4, 1e-5),
     "'tdflow.layer_norm': begin_params_axis -4 is out of range for 'x' of shape [2, 3, 4] "
     "(expected -3 <= begin_params_axis < 3)"),
    (lambda t: F.pad(t, padding_before=[1, 0], padding_after=[0, 0, 0], padding=[]),
     "'tdflow.pad': padding_before [1, 0] has 2 entries but 'x' of shape [2, 3, 4] has 3 dims "
     "(one entry per dim)"),
    (lambda t: F.pad(t, padding_before=[0, -1, 0], padding_after=[0, 0, 0], padding=[]),
     "'tdflow.pad': padding_before [0, -1, 0] has an entry below 0 (crop with slice)"),
])
def test_bad_values_name_op_attribute_value_shape_and_range(call, message):
    with pytest.raises(tdflow.TdflowError) as err:
        call(tdflow.tensor(X))
    assert str(err.value) == message
