"""The boxing kernels on 2 and 4 thread ranks: each rank's piece, assembled by the target SBP,
equals the logical tensor the source SBP describes (uneven splits included)."""

from __future__ import annotations

import numpy as np
import pytest
from tdflow.dialect.sbp import B, S, slices_of
from tdflow.runtime.kernels.registry import kernel_table

from tdflow.distributed.threads import run_threads

SHAPE = (5, 7, 3)  # 5 and 7 split unevenly over 2 and 4 ranks


def _kernel(op, attrs, dtype="f64"):
    return kernel_table("cpu").select(f"tdflow.{op}", (dtype,), attrs)


def _piece(x, sbp, nproc, rank):
    return np.array(x[slices_of(x.shape, (sbp,), (nproc,), rank)])


def _run(op, attrs, inputs_of, nproc):
    k = _kernel(op, attrs)
    return run_threads(lambda r: k(attrs, [inputs_of(r)])[0], nproc)


def _partials(nproc):
    return [np.random.default_rng(r).standard_normal(SHAPE) for r in range(nproc)]


@pytest.mark.parametrize("nproc", [2, 4])
def test_all_reduce_p_to_b(nproc):
    parts = _partials(nproc)
    out = _run("boxing_all_reduce", {}, lambda r: parts[r], nproc)
    for o in out:
        np.testing.assert_allclose(o, sum(parts), rtol=0, atol=1e-13)


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reduce_scatter_p_to_s(nproc, axis):
    parts = _partials(nproc)
    out = _run("boxing_reduce_scatter", {"axis": axis}, lambda r: parts[r], nproc)
    for r, o in enumerate(out):
        np.testing.assert_allclose(o, _piece(sum(parts), S(axis), nproc, r), rtol=0, atol=1e-13)


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_all_gather_s_to_b(nproc, axis):
    x = np.random.default_rng(9).standard_normal(SHAPE)
    out = _run("boxing_all_gather", {"axis": axis}, lambda r: _piece(x, S(axis), nproc, r), nproc)
    for o in out:
        np.testing.assert_array_equal(o, x)


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("src,dst", [(0, 1), (1, 0), (0, 2), (2, 1)])
def test_all_to_all_s_to_s(nproc, src, dst):
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    attrs = {"in_axis": src, "out_axis": dst}
    k = _kernel("boxing_all_to_all", attrs, "f32")
    out = run_threads(lambda r: k(attrs, [_piece(x, S(src), nproc, r)])[0], nproc)
    for r, o in enumerate(out):
        assert o.dtype == np.float32
        np.testing.assert_array_equal(o, _piece(x, S(dst), nproc, r))


@pytest.mark.parametrize("nproc", [2, 4])
def test_slice_b_to_s_and_to_partial_b_to_p(nproc):
    x = np.arange(35.0).reshape(5, 7)
    out = _run("boxing_slice", {"axis": 1}, lambda r: x, nproc)
    for r, o in enumerate(out):
        np.testing.assert_array_equal(o, _piece(x, S(1), nproc, r))
    parts = _run("boxing_to_partial", {}, lambda r: x, nproc)
    np.testing.assert_array_equal(sum(parts), x)
    assert all(not p.any() for p in parts[1:])


def test_kernels_write_into_a_given_buffer():
    x = np.arange(6.0).reshape(2, 3)
    buf = np.empty((2, 3))
    (y,) = _kernel("boxing_all_reduce", {})({}, [x], [buf])
    assert y is buf and (buf == x).all()


def test_broadcast_is_untouched_by_a_one_rank_group():
    x = np.arange(4.0)
    for op, attrs in [("boxing_all_gather", {"axis": 0}), ("boxing_reduce_scatter", {"axis": 0}),
                      ("boxing_all_to_all", {"in_axis": 0, "out_axis": 0})]:
        np.testing.assert_array_equal(_kernel(op, attrs)(attrs, [x])[0], x)
    assert B.kind == "B"


def test_all_to_all_uses_out_shape_when_the_compiler_gives_it():
    x = np.random.default_rng(4).standard_normal((3, 5))
    attrs = {"in_axis": 0, "out_axis": 1}
    k = _kernel("boxing_all_to_all", attrs)

    def body(r):
        shape = [3, 5]
        shape[1] = slices_of((3, 5), (S(1),), (4,), r)[1].stop - \
            slices_of((3, 5), (S(1),), (4,), r)[1].start
        return k({**attrs, "out_shape": shape}, [_piece(x, S(0), 4, r)])[0]

    for r, o in enumerate(run_threads(body, 4)):
        np.testing.assert_array_equal(o, _piece(x, S(1), 4, r))
