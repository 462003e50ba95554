"""The cuda backend's bookkeeping without a GPU: a fake ``pycuda.driver`` (fake_pycuda.py) whose
device memory is host memory and whose kernels run through cudasim, with asynchronous work held
on the stream until it is synchronised. Checked: the caching allocator, views, host<->device
copies, argument marshalling (inputs, outputs, scratch, rng), one stream for everything, one
compile per plan, and the errors when CUDA is unusable."""

from __future__ import annotations

import numpy as np
import pytest
from cuda_harness import need_gxx
from fake_pycuda import FakeDriver
from tdflow.lowering.cuda import KernelCode, LaunchSpec, TensorSpec, generate
from tdflow.runtime.backends import BackendUnavailableError, get_backend
from tdflow.runtime.backends import cuda_status as cs
from tdflow.runtime.backends.cuda import CachingAllocator, CudaBackend, CudaError, DeviceArray
from tdflow.runtime.kernels.registry import kernel_table

import tdflow


@pytest.fixture
def fake():
    need_gxx()
    drv = FakeDriver()
    return drv, CudaBackend(driver=drv, compile_cubin=drv.compile_cubin)


@pytest.fixture
def as_cuda(monkeypatch, fake):
    """``get_backend("cuda")`` answers the fake backend for the test, then forgets it."""
    import tdflow.runtime.backends as backends

    real = backends.get_backend
    monkeypatch.setattr(backends, "get_backend",
                        lambda name: fake[1] if name.split(":")[0] == "cuda" else real(name))
    yield fake
    for op in kernel_table("cuda").ops():
        for k in kernel_table("cuda").candidates(op):
            if hasattr(k.fn, "_backend"):
                k.fn._backend = None


def test_allocator_reuses_freed_blocks_by_bucket():
    freed = []

    class Block(int):
        def free(self):
            freed.append(int(self))

    counter = iter(range(1, 100))
    alloc = CachingAllocator(lambda n: Block(next(counter) * 4096))
    a = alloc.malloc(100)
    assert a[0] == 512 and alloc.driver_calls == 1
    alloc.release(a)
    b = alloc.malloc(300)  # the same 512-byte bucket: the cached block
    assert b[1] == a[1] and alloc.driver_calls == 1 and alloc.cached == 0
    c = alloc.malloc(600)  # another bucket: a new driver allocation
    assert alloc.driver_calls == 2 and c[0] == 1024
    alloc.release(b)
    alloc.release(c)
    assert alloc.cached == 1536
    assert alloc.empty_cache() == 1536 and sorted(freed) == [4096, 8192]
    assert alloc.allocated == 0


def test_allocator_empties_its_cache_when_the_driver_is_out_of_memory():
    state = {"fail": 1}

    class Block(int):
        def free(self):
            state["fail"] = 0  # memory came back

    def alloc(n):
        if state["fail"]:
            raise MemoryError("cuMemAlloc failed: out of memory")
        return Block(64)

    a = CachingAllocator(alloc)
    with pytest.raises(CudaError, match="cannot allocate 512 bytes"):
        a.malloc(8)  # nothing cached to give back
    a._free[1024] = [Block(128)]
    a.cached = 1024
    assert a.malloc(8)[0] == 512  # dropped the cache, retried


def test_device_arrays_and_copies_go_through_the_stream(fake):
    drv, be = fake
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    d = be.from_numpy(x)
    assert isinstance(d, DeviceArray) and d.shape == (3, 4) and d.dtype == np.float32
    assert d.nbytes == 48 and d.size == 12
    assert drv.calls("htod")[0][2] is be.stream
    np.testing.assert_array_equal(be.to_numpy(d), x)  # waits, then copies
    v = d.view((2, 2))
    assert v.ptr == d.ptr and v.base is d
    np.testing.assert_array_equal(be.to_numpy(v), [[0, 1], [2, 3]])
    with pytest.raises(CudaError, match="needs 52 bytes"):
        d.view((13,))
    z = be.zeros((5,), "i32")
    np.testing.assert_array_equal(be.to_numpy(z), np.zeros(5, np.int32))
    s = be.from_numpy(np.array(5.0))  # a scalar stays 0-d (ONNX's einsum_scalar on the H200)
    assert s.shape == () and be.to_numpy(s).shape == () and be.to_numpy(s) == 5.0
    t = be.from_numpy(x.T)  # a transposed view is copied in C order
    np.testing.assert_array_equal(be.to_numpy(t), x.T)


def test_freed_device_arrays_return_to_the_allocator(fake):
    drv, be = fake
    a = be.allocate((100,), "f32")
    ptr = a.ptr
    del a
    b = be.allocate((90,), "f32")  # same bucket
    assert b.ptr == ptr and len(drv.calls("mem_alloc")) == 1


def test_close_pops_the_context_after_the_queued_work(fake):
    """pycuda aborts a process whose context stack is not empty at exit: the backend's atexit
    close finishes the stream, frees the cached blocks and pops what this thread pushed."""
    drv, be = fake
    assert drv.log.count(("push",)) == 1 and ("pop",) not in drv.log
    d = be.from_numpy(np.arange(4, dtype=np.float32))
    del d  # back on the allocator's free list
    assert be.allocator.cached and be.stream.queue
    be.close()
    assert not be.stream.queue and be.allocator.cached == 0
    assert drv.log[-1] == ("pop",) and drv.log.count(("free", 512)) == 1
    be.close()  # nothing pushed in this thread any more: nothing to pop
    assert drv.log.count(("pop",)) == 1
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(be.to_numpy(be.from_numpy(x)), x)  # pushes again
    assert drv.log.count(("push",)) == 2


def test_run_op_marshals_pointers_and_waits_before_reading(fake):
    drv, be = fake
    x = np.array([-1.5, 2.0, -3.0, 4.0, 0.5], np.float32)
    dx, dy = be.from_numpy(x), be.allocate((5,), "f32")
    be.run_op("tdflow.relu", {}, [dx], [dy])
    (launch,) = drv.calls("launch")
    assert launch[4] is be.stream and launch[2] == (1, 1, 1)
    assert drv.streams[-1].queue, "the launch is asynchronous until the stream syncs"
    np.testing.assert_array_equal(be.to_numpy(dy), np.maximum(x, 0))
    with pytest.raises(CudaError, match="not a cuda device buffer"):
        be.run(be.code_for("tdflow.relu", {}, [x], [dy]), [x], [dy])
    # host buffers: copied in, run, copied back before run_op returns
    host = np.empty(5, np.float32)
    assert be.run_op("tdflow.relu", {}, [x], [host])[0] is host
    np.testing.assert_array_equal(host, np.maximum(x, 0))


def test_scratch_rng_zeroed_outputs_and_uploads(fake):
    drv, be = fake
    src = """
extern "C" __global__ void k(unsigned long long* tmp0, const unsigned long long* rng,
                             long long* out0, long long* out1) {
  int i = threadIdx.x;
  tmp0[i] = rng[0] * 1000 + rng[1] + i;
  __syncthreads();
  out0[i] += tmp0[3 - i];
  out1[i] *= 2;
}"""
    code = KernelCode("test.k", src, (LaunchSpec("k", 1, 4, ("tmp0", "rng", "out0", "out1")),),
                      scratch=(32,), zero_outputs=(0,),
                      uploads=((1, np.arange(4, dtype=np.int64).tobytes()),),
                      key="test.k", digest="feed01")
    o0 = be.from_numpy(np.full(4, 99, np.int64))
    o1 = be.allocate((4,), "i64")
    be.run(code, [], [o0, o1], rng=(7, 5))
    np.testing.assert_array_equal(be.to_numpy(o0), [7008, 7007, 7006, 7005])
    np.testing.assert_array_equal(be.to_numpy(o1), [0, 2, 4, 6])


def test_a_compiled_program_compiles_once_and_matches_the_cpu(as_cuda):
    drv, be = as_cuda
    text = """func.func @f(%x: tensor<3x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = "tdflow.bias_add"(%x, %b) {axis = 1 : si64} : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %1 = "tdflow.relu"(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = "tdflow.exp"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %2 : tensor<3x5xf32>
}"""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    gpu = tdflow.compile(text, device="cuda")
    assert len(drv.compiled) == 1, "every kernel of the plan in one compiler call"
    want = tdflow.compile(text)(x, b)
    for _ in range(3):
        got = gpu(x, b)
        assert isinstance(got, np.ndarray)
        np.testing.assert_allclose(got, want, rtol=1e-5)
    assert len(drv.compiled) == 1 and len(drv.calls("module_from_buffer")) == 1
    # later calls reuse the cached device memory
    allocs = len(drv.calls("mem_alloc"))
    gpu(x, b)
    assert len(drv.calls("mem_alloc")) == allocs
    assert {e[4] for e in drv.calls("launch")} == {be.stream}


def test_eager_tensors_on_cuda(as_cuda):
    drv, be = as_cuda
    import tdflow.functional as F

    x = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
    t = tdflow.tensor(x, device="cuda")
    assert isinstance(t.buffer, DeviceArray)
    r = F.relu(t)
    assert r.device == "cuda" and isinstance(r.buffer, DeviceArray)
    s = r + t
    np.testing.assert_array_equal(s.numpy(), np.maximum(x, 0) + x)
    back = s.to("cpu")
    assert back.device == "cpu" and isinstance(back.buffer, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), np.maximum(x, 0) + x)


def test_without_pycuda_cuda_is_unavailable_with_the_reason(monkeypatch):
    monkeypatch.setattr(cs.importlib.util, "find_spec", lambda name: None)
    cs.cuda_status.cache_clear()
    get_backend.cache_clear()
    try:
        reason = cs.cuda_status().reason
        assert "pycuda is not installed" in reason and "CUDA_ROOT=" in reason  # the build hint
        with pytest.raises(BackendUnavailableError, match="CUDA unavailable: pycuda"):
            get_backend("cuda")
        with pytest.raises(BackendUnavailableError, match="CUDA unavailable: pycuda"):
            tdflow.compile("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                           "  return %x : tensor<2xf32>\n}", device="cuda")
    finally:
        cs.cuda_status.cache_clear()
        get_backend.cache_clear()


def test_driver_problems_are_reasons():
    class Lib:
        def __init__(self, rc):
            self.cuInit = lambda flags: rc

    assert "not found" in cs.driver_problem(lambda n: (_ for _ in ()).throw(OSError("x")))
    assert "stub" in cs.driver_problem(lambda n: Lib(34))
    assert cs.driver_problem(lambda n: Lib(100)) == "no CUDA device found"
    assert "error 3" in cs.driver_problem(lambda n: Lib(3))
    assert cs.driver_problem(lambda n: Lib(0)) is None


def test_cuda_status_checks_the_driver_after_pycuda(monkeypatch):
    monkeypatch.setattr(cs.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(cs, "driver_problem", lambda: "libcuda.so.1 not found (test)")
    cs.cuda_status.cache_clear()
    try:
        assert cs.cuda_status().reason == "libcuda.so.1 not found (test)"
    finally:
        cs.cuda_status.cache_clear()


def test_generated_code_is_the_nvcc_translation_unit(fake):
    drv, be = fake
    code = generate("tdflow.relu", [TensorSpec((4,), "f32")], [TensorSpec((4,), "f32")], {})
    be.prepare([code, code])
    be.prepare([code])
    assert len(drv.compiled) == 1 and f"namespace tdf_{code.digest}" in drv.compiled[0]
    assert drv.calls("get_function") == [("get_function", code.launches[0].kernel)]


def test_the_gpu_check_runs_family_cases_through_the_backend(as_cuda):
    """test_cuda_gpu's check, on the fake driver: a case of each of a dozen ops, compiled in
    one go, through the harness's device-agnostic run (host buffers copied in and out)."""
    from cuda_harness import full_attrs, result_types
    from tdflow.dialect.types import DTYPES
    from test_cuda_gpu import check_on_cuda, family_cases

    drv, be = as_cuda
    picked: dict[str, tuple] = {}
    for case in family_cases():
        picked.setdefault(case[0], case)
    cases = list(picked.values())[::max(1, len(picked) // 12)][:12]
    codes = []
    for op, inputs, attrs in cases:
        a = full_attrs(op, dict(attrs))
        outs = [np.empty(t.shape, DTYPES[t.dtype]) for t in result_types(op, list(inputs), a)]
        codes.append(be.code_for(op, a, list(inputs), outs))
    be.prepare(codes)
    for op, inputs, attrs in cases:
        check_on_cuda(op, [None if x is None else np.array(x) for x in inputs], dict(attrs))
    assert len(drv.compiled) == 1


def test_the_gpu_module_on_the_fake_driver(as_cuda):
    """test_cuda_gpu's end-to-end checks (an example, a user kernel, eager forward and backward)
    run here against the fake driver, so the GPU run meets no surprise in them."""
    import test_cuda_gpu as gpu

    drv, _ = as_cuda
    gpu.test_examples_on_cuda_match_the_cpu("mlp.mlir")
    gpu.test_user_cuda_kernel_on_cuda()
    gpu.test_eager_on_cuda()
    gpu.test_training_script_gradients_on_cuda()
    assert drv.calls("launch") and not any(s.queue for s in drv.streams)
