"""The compiled call's fast path (``Executor.call_plain``): positional numpy arrays of exactly
the arguments' types are checked and run in one frame; anything else goes to the general
binder, whose errors must read the same whether or not a good call came first, and whose
results must equal the fast path's bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tdflow.runtime.arguments import ArgumentError

import tdflow

ROOT = Path(__file__).resolve().parents[2]

PROG = """func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "tdflow.broadcast_mul"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "tdflow.bias_add"(%0, %b) {axis = 1 : si32} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = "tdflow.relu"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2, %a : tensor<2x3xf32>, tensor<2x3xf32>
}"""

ADD = """func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.broadcast_add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, 3e38], np.float32)


def _error(call):
    with pytest.raises(ArgumentError) as info:
        call()
    return str(info.value)


x4 = np.arange(4, dtype=np.float32)
BAD_CALLS = {
    "dtype": lambda f: f(x4, x4.astype(np.float64)),
    "shape": lambda f: f(x4, np.zeros(5, np.float32)),
    "rank": lambda f: f(x4, np.zeros((1, 4), np.float32)),
    "count": lambda f: f(x4),
    "too many": lambda f: f(x4, x4, x4),
    "None": lambda f: f(x4, None),
    "masked": lambda f: f(x4, np.ma.masked_array(x4)),
    "int": lambda f: f(x4, np.arange(4)),
}


@pytest.mark.parametrize("bad", list(BAD_CALLS))
def test_a_wrong_argument_after_a_good_call_gets_the_same_error(bad):
    fresh = tdflow.compile(ADD)
    want = _error(lambda: BAD_CALLS[bad](fresh))
    used = tdflow.compile(ADD)
    for _ in range(3):  # good calls first: nothing of theirs may let a bad one through
        assert used(x4, x4).tolist() == [0.0, 2.0, 4.0, 6.0]
    assert _error(lambda: BAD_CALLS[bad](used)) == want
    assert used(x4, x4).tolist() == [0.0, 2.0, 4.0, 6.0]  # and good calls still work after


def test_an_array_reshaped_in_place_after_a_good_call_is_refused():
    f = tdflow.compile(ADD)
    y = np.ones(4, np.float32)
    f(x4, y)
    y.shape = (2, 2)  # the same object, now another type: checked again, not remembered
    with pytest.raises(ArgumentError, match="%y"):
        f(x4, y)


def test_fast_path_equals_the_general_binder_bit_for_bit():
    f = tdflow.compile(PROG)
    rng = np.random.default_rng(0)
    a = rng.choice(SPECIALS, (2, 3)).astype(np.float32)
    b = rng.choice(SPECIALS, 3).astype(np.float32)
    fast = f(a, b)
    assert f.executor.call_plain((a, b)) is not None  # the fast path does take this call
    general = f(a=a, b=b)  # keywords: the generic binder and run()
    want = np.maximum(a * a + b, np.float32(0))
    for got in (fast, general):
        assert isinstance(got, tuple) and len(got) == 2
        assert got[0].tobytes() == general[0].tobytes()
        np.testing.assert_array_equal(got[0], want)
        assert got[1].tobytes() == a.tobytes()
        assert got[1] is not a  # an argument returned as a result is a copy


def test_results_are_fresh_arrays_per_call():
    f = tdflow.compile(ADD)
    first = f(x4, x4)
    second = f(x4 + 1, x4)
    assert first is not second
    assert first.tolist() == [0.0, 2.0, 4.0, 6.0] and second.tolist() == [1.0, 3.0, 5.0, 7.0]


def test_strided_arguments_match_numpy_byte_swapped_ones_are_refused():
    f = tdflow.compile(ADD)
    base = np.arange(8, dtype=np.float32)
    strided = base[::2]  # same type, not contiguous: the fast path takes it, as before
    assert f(strided, x4).tolist() == (strided + x4).tolist()
    swapped = x4.astype(">f4")  # another byte order: the general binder refuses it, as before
    assert f.executor.call_plain((swapped, x4)) is None
    with pytest.raises(ArgumentError, match="%x .*got >f4 array"):
        f(swapped, x4)


def test_mlp_forward_fast_path_equals_keywords_and_numpy():
    f = tdflow.compile(ROOT / "examples" / "mlp.mlir")
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(s, dtype=np.float32) for _, s, _ in f.arguments]
    names = f.argument_names
    fast = f(*args)
    assert fast.tobytes() == f(**dict(zip(names, args))).tobytes()
    assert fast.tobytes() == f.run_plain(args).tobytes()


def test_a_profile_still_records_each_launch():
    from tdflow.runtime import tracing

    f = tdflow.compile(PROG)
    a, b = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    with tracing.installed(tracing.Recorder()) as rec:
        got = f(a, b)
    assert got[0].tolist() == [[2.0] * 3] * 2
    assert len([e for e in rec.events if e[1] == "launch"]) == len(f.plan.launches)


def test_a_failing_launch_names_its_op_and_releases_the_plan():
    from tdflow.runtime.executor import KernelFailure

    f = tdflow.compile(ADD)
    steps = f.executor._plain_steps
    good = list(steps)

    def broken(attrs, ins, outs):
        raise FloatingPointError("boom")

    steps[:] = [(broken, *s[1:]) for s in good]  # in place: the call holds this list
    with pytest.raises(KernelFailure, match="'tdflow.broadcast_add' .*boom"):
        f(x4, x4)
    assert not f.executor._lock.locked()  # released (else the next call would hang)
    steps[:] = good
    assert f(x4, x4).tolist() == [0.0, 2.0, 4.0, 6.0]


def test_inspect_reads_the_arguments_by_name():
    import inspect

    f = tdflow.compile(ROOT / "examples" / "mlp.mlir")
    assert list(inspect.signature(f).parameters) == list(f.argument_names)
    assert callable(f)
    from tdflow.runtime.compiled import CompiledProgram

    assert "build" in inspect.signature(CompiledProgram).parameters  # the class reads as before
