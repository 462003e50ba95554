"""Scalars do not recompile (issue 24, item 7): scalar attributes are kernel arguments.

A ``scalar_mul``'s operand, a ``scalar_add``'s, ``leaky_relu``'s ``alpha``, a user clip op's
bounds and ``sgd_update``'s learning rate are passed at launch (``KernelCode.scalars``), not baked
into the CUDA C: an eager loop over five values runs the compiler once per kernel, counted by
wrapping the compiler call (:func:`tdflow.runtime.backends.kernel_build._compile`) with the disk
cache off, never by wall clock. Each value's results equal numpy's bit for bit, NaN, +-inf, -0.0
and subnormals included; graph mode shares the kernel between programs that differ only in a
scalar; the launch packing is checked through the fake pycuda driver (the format pycuda's
``prepare`` gets, the values packed with ``struct``), and the generated source compiles with
``nvcc -arch=sm_90`` when nvcc is present.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cuda_harness import need_gxx
from fake_pycuda import FakeDriver
from tdflow.lowering.cuda import TensorSpec, generate, translation_unit
from tdflow.lowering.cuda.common import prelude
from tdflow.runtime.backends import kernel_build
from tdflow.runtime.backends.cuda import CudaBackend
from tdflow.runtime.backends.cuda_status import find_nvcc

import tdflow
import tdflow.functional as F

NAN, INF = float("nan"), float("inf")
#: Values that would each have been a new source: specials, and subnormals of f32 and f64.
SPECIAL = (NAN, INF, -INF, -0.0, 0.0, 1e-40, 5e-324)

CLIP_TD = '''include "tdflow/Base.td"

def Sc_Dialect : Dialect { let name = "sc"; }
def Sc_ClipOp : TDF_Op<"clip", [NoMemoryEffect, Elementwise]> {
  let opDialect = Sc_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "-1.0">:$lo, DefaultValuedAttr<F32Attr, "1.0">:$hi);
  let formula = [{ min(max(x, lo), hi) }];
}
'''


@pytest.fixture
def compiles(monkeypatch):
    """The sources the C++/CUDA compiler is run on during the test (disk cache off, so a
    kernel built by an earlier run still counts)."""
    need_gxx()
    monkeypatch.setenv("TDFLOW_NO_CACHE", "1")
    seen: list[str] = []
    real = kernel_build._compile

    def counting(cmd, source, *args, **kwargs):
        seen.append(source)
        return real(cmd, source, *args, **kwargs)

    monkeypatch.setattr(kernel_build, "_compile", counting)
    return seen


@pytest.fixture(scope="module")
def clip_lib(tmp_path_factory):
    path = tmp_path_factory.mktemp("sc") / "sc.td"
    path.write_text(CLIP_TD)
    return tdflow.load_ops(str(path))


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """Equal as numpy computes them: NaN where numpy has NaN, else the same bits (-0.0 is not
    +0.0)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits))


def _data(shape, dtype=np.float32):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype) * 3
    flat = x.reshape(-1)
    flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]  # special inputs too
    return x


def _sgd(device, x, s):
    model = tdflow.tensor(x.copy(), device=device)
    grad = tdflow.tensor(np.flip(x).copy(), device=device)
    F.sgd_update(model, grad, learning_rate_val=s)
    return model.numpy()


def _sgd_numpy(x, s):
    # the step: lr = f32(lr_val * 1.0), g = diff * f32(1.0), model - g * lr, each in f32
    with np.errstate(all="ignore"):
        return (x - np.flip(x) * np.float32(1.0) * np.float32(s)).astype(np.float32)


def _cases(clip_lib):
    """name -> (eager call on a tensor, numpy reference, columns unique to the case: each
    test's kernels are new to the process, so their compiles are counted)."""
    with_f32 = np.float32  # numpy casts a Python float to the array's type (NEP 50)
    return {
        "scalar_mul": (lambda t, s: t * s, lambda x, s: x * with_f32(s), 17),
        "scalar_add": (lambda t, s: t + s, lambda x, s: x + with_f32(s), 13),
        "leaky_relu": (lambda t, s: F.leaky_relu(t, alpha=s),
                       lambda x, s: np.where(x > 0, x, x * with_f32(s)), 11),
        "clip": (lambda t, s: clip_lib.functional.clip(t, lo=s, hi=abs(s) + 1.0),
                 lambda x, s: np.minimum(np.maximum(x, with_f32(s)), with_f32(abs(s) + 1.0)),
                 29),
        "sgd": (None, None, 19),
    }


def _run(case, clip_lib, s, rows, device="cudasim"):
    call, _, cols = _cases(clip_lib)[case]
    if case == "sgd":
        return _sgd(device, _data((rows, cols)), s)
    out = call(tdflow.tensor(_data((rows, cols)), device=device), s)
    return out.numpy()


def _want(case, clip_lib, s, rows):
    _, ref, cols = _cases(clip_lib)[case]
    if case == "sgd":
        return _sgd_numpy(_data((rows, cols)), s)
    with np.errstate(all="ignore"):
        return ref(_data((rows, cols)), s)


CASES = ("scalar_mul", "scalar_add", "leaky_relu", "clip", "sgd")


@pytest.mark.parametrize("case", CASES)
def test_an_eager_loop_over_five_scalars_compiles_once(case, clip_lib, compiles):
    for s in (0.25, 0.125, 0.7, 0.5, 0.3):
        with np.errstate(all="ignore"):
            got = _run(case, clip_lib, s, 3)
        same_bits(got, _want(case, clip_lib, s, 3))
        same_bits(got, _run(case, clip_lib, s, 3, device="cpu"))
    # one kernel, one compile: before, every value was a new source (g++ here, nvcc on a GPU)
    assert len(compiles) == 1, [src[-600:] for src in compiles]
    for value in ("0.25", "0.125", "0.7", "0.3"):
        assert value not in compiles[0].split("namespace tdf_", 1)[1]


@pytest.mark.parametrize("case", CASES)
def test_special_scalars_equal_numpy(case, clip_lib, compiles):
    # an f64 attribute (the scalar ops' operand) may be beyond f32's range: inf in f32 math
    for s in SPECIAL + ((1e300, -1e300) if case.startswith("scalar_") else ()):
        with np.errstate(all="ignore"):
            got = _run(case, clip_lib, s, 5)
        same_bits(got, _want(case, clip_lib, s, 5))
    # leaky_relu's alpha in (0, 1] makes the formula a max (fold_constants: a value that
    # decides the code's shape), any other alpha a select: two kernels at most
    assert len(compiles) == (2 if case == "leaky_relu" else 1)


@pytest.mark.parametrize("dtype", ["f64", "f16", "i32", "i64"])
def test_other_dtypes_pass_the_scalar_in_their_compute_type(dtype, compiles):
    np_dt = {"f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64}[dtype]
    shape = {"f64": (3, 7), "f16": (3, 9), "i32": (3, 10), "i64": (3, 14)}[dtype]
    x = (np.arange(np.prod(shape)).reshape(shape) - 9).astype(np_dt)
    floats = dtype in ("f64", "f16")
    values = (0.1, 1 / 3, -2.5, 1e-310, NAN) if floats else (3, -7, 1 << 20, 0, -1)
    t = tdflow.tensor(x, device="cudasim")
    for s in values:
        with np.errstate(all="ignore"):
            got = (t * s).numpy()
            # f16 computes in float: the f32 value of the scalar, rounded once to half
            want = ((x.astype(np.float32) * np.float32(s)).astype(np.float16)
                    if dtype == "f16" else x * np_dt(s))
        if floats:
            same_bits(got, want)
        else:
            np.testing.assert_array_equal(got, want)
    assert len(compiles) == 1


def test_the_source_holds_no_value_and_the_digest_is_shared():
    f = TensorSpec((4, 5), "f64")
    a = generate("tdflow.scalar_mul", [f], [f], {"has_float_operand": True,
                                                  "float_operand": 0.1234567891})
    b = generate("tdflow.scalar_mul", [f], [f], {"has_float_operand": True,
                                                  "float_operand": -7.5})
    assert a.source == b.source and a.digest == b.digest
    assert "0.1234567891" not in a.source and "7.5" not in a.source
    # an f64 kernel gets a double: the value exactly, not rounded through float
    assert a.scalars == (("f64", 0.1234567891),) and b.scalars == (("f64", -7.5),)
    assert a.launches[0].args[-1] == "s0" and "const double s0" in a.source
    # the int operand on an f64 tensor is the same kernel: the value in the compute type
    c = generate("tdflow.scalar_mul", [f], [f], {"has_int_operand": True, "int_operand": 3})
    assert c.digest == a.digest and c.scalars == (("f64", 3.0),)
    # where a value decides the code's shape it is another kernel: leaky_relu's alpha in
    # (0, 1] is a max, other alphas a select
    g = TensorSpec((4, 5), "f32")
    lo, lo2, hi = (generate("tdflow.leaky_relu", [g], [g], {"alpha": v}) for v in (0.2, 1.0, 2.0))
    assert lo.digest == lo2.digest != hi.digest
    # an integer divisor stays baked (nvcc divides by a constant with a multiply; docs/cuda.md)
    i = TensorSpec((4, 5), "i32")
    d7, d3 = (generate("tdflow.scalar_div", [i], [i], {"has_int_operand": True,
                                                       "int_operand": v}) for v in (7, 3))
    assert d7.digest != d3.digest and d7.scalars == () and "(a / b)" in d7.source


def test_optimizer_scalars_are_arguments_and_zero_terms_stay_out():
    f = TensorSpec((6,), "f32")
    seg = {"operandSegmentSizes": [1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0]}
    a = generate("tdflow.adam_update", [f] * 4, [], {**seg, "learning_rate_val": 1e-3,
                                                     "beta1": 0.9, "epsilon": 1e-8})
    b = generate("tdflow.adam_update", [f] * 4, [], {**seg, "learning_rate_val": 0.5,
                                                     "beta1": 0.75, "epsilon": 1e-6})
    assert a.digest == b.digest and a.scalars != b.scalars
    assert all(dt == "f64" for dt, _ in a.scalars)  # combined in double, as numpy does
    assert (0.001 in dict(enumerate(v for _, v in a.scalars)).values()
            and 0.1 in [round(v, 12) for _, v in a.scalars])  # 1 - beta1, host-computed
    # weight decay 0 vs non-zero is the code's shape (a skipped term, not 0 * x: 0 * NaN)
    c = generate("tdflow.adam_update", [f] * 4, [], {**seg, "weight_decay": 0.01})
    d = generate("tdflow.adam_update", [f] * 4, [], {**seg, "weight_decay": 0.02})
    assert c.digest != a.digest and c.digest == d.digest


def test_graph_mode_programs_differing_in_a_scalar_share_the_kernel(compiles):
    def program(alpha, s):
        t = "tensor<3x23xf32>"
        return (f'func.func @f(%x: {t}) -> {t} {{\n'
                f'  %0 = "tdflow.leaky_relu"(%x) {{alpha = {alpha} : f32}} : ({t}) -> {t}\n'
                f'  %1 = "tdflow.scalar_mul"(%0) {{has_float_operand = true, '
                f'float_operand = {s} : f64}} : ({t}) -> {t}\n'
                f'  return %1 : {t}\n}}')

    x = _data((3, 23))
    for alpha, s in ((0.1, 2.0), (0.3, -5.0), (0.7, 0.5)):
        sim = tdflow.compile(program(alpha, s), device="cudasim")
        cpu = tdflow.compile(program(alpha, s))
        same_bits(sim(x), cpu(x))
    assert len(compiles) == 1


@pytest.mark.parametrize("dtype,fmt", [("f32", "f"), ("f64", "d"), ("i64", "q"), ("ui8", "B")])
def test_cuda_backend_passes_scalars_by_value(dtype, fmt):
    """The cuda backend through the fake pycuda driver: the kernel is prepared with the
    scalar's struct format and launched with the value; one compile serves every value."""
    need_gxx()
    drv = FakeDriver()
    be = CudaBackend(driver=drv, compile_cubin=drv.compile_cubin)
    np_dt = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "ui8": np.uint8}[dtype]
    x = np.arange(1, 9, dtype=np_dt)
    floats = dtype in ("f32", "f64")
    values = (0.1, -3.75, NAN) if floats else (3, 5, 7)
    for s in values:
        attrs = ({"has_float_operand": True, "float_operand": s} if floats
                 else {"has_int_operand": True, "int_operand": s})
        out = np.empty_like(x)
        be.run_op("tdflow.scalar_mul", attrs, [x], [out])
        with np.errstate(all="ignore"):
            want = x * np_dt(s)
        if floats:
            same_bits(out, want)
        else:
            np.testing.assert_array_equal(out, want)
    assert len(drv.compiled) == 1
    launches = drv.scalars
    assert [sig for _, sig, _ in launches] == ["PP" + fmt] * len(values)
    passed = [v[0] for _, _, v in launches]
    if dtype == "f32":
        assert passed[:2] == [float(np.float32(0.1)), -3.75] and math.isnan(passed[2])
    elif dtype == "f64":
        assert passed[:2] == [0.1, -3.75] and math.isnan(passed[2])
    else:
        assert passed == list(values)


def test_cuda_backend_packs_the_optimizer_step():
    need_gxx()
    drv = FakeDriver()
    be = CudaBackend(driver=drv, compile_cubin=drv.compile_cubin)
    x = _data((6, 19))
    for lr in (0.1, 0.01):
        model, grad = x.copy(), np.flip(x).copy()
        be.run_op("tdflow.sgd_update", {"learning_rate_val": lr}, [model, grad], [])
        same_bits(model, _sgd_numpy(x, lr))
    assert len(drv.compiled) == 1
    assert [sig for _, sig, _ in drv.scalars] == ["PPddd"] * 2
    assert [v for _, _, v in drv.scalars] == [(0.1, 1.0, 1.0), (0.01, 1.0, 1.0)]


def test_generated_kernels_with_scalar_arguments_compile_with_nvcc():
    nvcc = find_nvcc()
    if nvcc is None:
        pytest.skip("nvcc not found: the sm_90 build of the generated source is not checked")
    codes = []
    for dt in ("f16", "bf16", "f32", "f64", "i8", "i32", "i64", "ui8", "ui64"):
        f = TensorSpec((4, 8), dt)
        attrs = ({"has_float_operand": True, "float_operand": 0.5} if dt[0] in "fb"
                 else {"has_int_operand": True, "int_operand": -3})
        codes.append(generate("tdflow.scalar_add", [f], [f], attrs))
        if dt[0] in "fb":
            codes.append(generate("tdflow.leaky_relu", [f], [f], {"alpha": 0.2}))
    f = TensorSpec((33,), "f32")
    codes.append(generate("tdflow.sgd_update", [f, f], [], {"learning_rate_val": 0.1,
                                                              "l1": 0.1, "weight_decay": 0.2}))
    seg = {"operandSegmentSizes": [1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1], "amsgrad": True,
           "weight_decay": 0.1}
    codes.append(generate("tdflow.adam_update", [f] * 5, [], seg))
    assert all(c.scalars for c in codes)
    cubin = kernel_build.compile_cubin(translation_unit(codes, prelude("nvcc")), nvcc=nvcc)
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("device", ["cpu", "cudasim"])
def test_eager_caches_tell_minus_zero_and_nan_apart(device):
    """-0.0 == 0.0 and NaN != NaN: an eager cache keyed on the plain values gave ``t * 0.0``
    the entry (and so the scalar) of an earlier ``t * -0.0``."""
    if device == "cudasim":
        need_gxx()
    x = np.array([1.0, -2.0, 3.0], np.float32)
    t = tdflow.tensor(x, device=device)
    for s in (-0.0, 0.0, NAN, NAN, -0.0):
        with np.errstate(all="ignore"):
            same_bits((t * s).numpy(), x * np.float32(s))
            same_bits(F.leaky_relu(t, alpha=s).numpy(), np.where(x > 0, x, x * np.float32(s)))
