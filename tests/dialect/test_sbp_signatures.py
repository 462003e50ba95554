"""Every standard op's SBP signatures, checked by running the op on each rank's piece.

For each op case (the gradient cases of tests/runtime/test_grad_ops.py plus the extra cases
below), for 2 and 4 ranks and for every signature the op's ``get_sbp`` hook returns: the logical
inputs are split per the signature (``S``: the rank's slice, ``B``: the whole tensor, ``P``: random
pieces that sum to it), the op runs on each rank's physical inputs, and each output must match its
SBP: ``S(a)`` the rank's slice of the single-process result, ``B`` the whole result on every rank,
``P`` pieces summing to it. No communicator is involved. A failure here is a wrong ``get_sbp`` hook.
On a [2, 2] mesh every pair of an op's signatures (OneFlow's nd signatures, which infer-sbp
enumerates) is checked the same way, one case per op.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from tdflow.dialect.sbp import B, parse_sbp, physical_shape, slices_of
from tdflow.dialect.types import TensorType, dtype_from_numpy
from tdflow.lowering.sbp import physical_attrs

import tdflow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runtime"))
import test_grad_ops as grad  # noqa: E402  (the op case table, with its inputs)

CTX = grad.CTX
rng = np.random.default_rng(20261203)
NPROCS = (2, 4)


def _extra_cases() -> list:
    """Ops the gradient table lacks (not differentiable), with signatures beyond all-B."""
    cases = []

    def case(op, inputs, attrs=None, label=""):
        cases.append(grad.Case(op, inputs, attrs or {}, label=label))

    x, y = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    y[0, 0] = x[0, 0]
    for op in ("broadcast_equal", "broadcast_not_equal", "broadcast_less", "broadcast_less_equal",
               "broadcast_greater", "broadcast_greater_equal"):
        case(op, {"x": x, "y": y})
        case(op, {"x": x, "y": y[:1]}, label="bcast")
    bx, by = rng.random((5, 3)) < 0.5, rng.random((5, 3)) < 0.5
    for op in ("broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor"):
        case(op, {"x": bx, "y": by})
    ix, iy = rng.integers(0, 64, (5, 3)), rng.integers(0, 5, (5, 3))
    for op in ("broadcast_bitwise_and", "broadcast_bitwise_or", "broadcast_bitwise_xor",
               "broadcast_bitwise_left_shift", "broadcast_bitwise_right_shift"):
        case(op, {"x": ix, "y": iy})
    case("logical_not", {"x": bx})
    case("bitwise_not", {"x": ix})
    z = rng.normal(size=(5, 3))
    z[1, 1], z[2, 0] = np.nan, np.inf
    case("isnan", {"in": z})
    case("isinf", {"in": z})
    case("ones_like", {"like": rng.normal(size=(5, 3))})
    case("argmax", {"in": grad.distinct(5, 3)})
    case("one_hot", {"indices": rng.integers(0, 4, 5)}, {"depth": 4, "dtype": "f64"})
    conv = {"num_spatial_dims": 2, "padding_before": [1, 0], "data_format": "channels_first",
            "kernel_size": [2, 2], "strides": [1, 1], "dilation_rate": [1, 1], "groups": 1}
    case("conv_data_grad", {"dy": rng.normal(size=(3, 4, 4, 2)), "filter": rng.normal(size=(4, 2, 2, 2)),
                            "x_like": rng.normal(size=(3, 2, 3, 3))}, conv)
    case("conv_filter_grad", {"dy": rng.normal(size=(3, 4, 4, 2)), "x": rng.normal(size=(3, 2, 3, 3))},
         conv)
    pool = {"padding": [0, 0], "data_format": "channels_first", "kernel_size": [2, 2],
            "stride": [2, 2], "dilation": [1, 1]}
    px = grad.distinct(3, 2, 4, 4)
    _, indice = tdflow.functional.max_pool_2d(tdflow.tensor(px), **pool, return_indices=True)
    case("max_pool_2d_grad", {"x": px, "indice": indice.numpy(), "dy": rng.normal(size=(3, 2, 2, 2))},
         pool)
    prob = rng.uniform(0.1, 1.0, (4, 5))
    case("sparse_softmax_cross_entropy_grad", {"label": rng.integers(0, 5, 4), "dy": rng.normal(size=4),
                                               "prob": prob / prob.sum(1, keepdims=True)}, {"depth": 5})
    case("sparse_softmax_cross_entropy_with_grad", {"prediction": rng.normal(size=(4, 5)),
                                                    "label": rng.integers(0, 5, 4),
                                                    "dy": rng.normal(size=4)}, {"depth": 5})
    case("embedding_grad", {"dy": rng.normal(size=(3, 2, 4)), "weight": rng.normal(size=(6, 4)),
                            "indices": rng.integers(0, 6, (3, 2))})
    case("top_k", {"in": grad.distinct(5, 6)}, {"k": 2, "sorted": True})
    ci = rng.uniform(0.5, 2.0, (4, 5))
    case("cumprod_grad", {"dy": rng.normal(size=(4, 5)), "output": np.cumprod(ci, 1), "input": ci},
         {"dim": 1})
    for op in ("dim_scatter_max", "dim_scatter_min"):
        case(op, {"input": rng.normal(size=(4, 5)), "index": rng.integers(0, 5, (4, 3)),
                  "src": rng.normal(size=(4, 3))}, {"dim": 1})
    for ta, tb in ((False, False), (True, False), (False, True)):
        a, b = rng.normal(size=(4, 6)), rng.normal(size=(6, 4))
        case("matmul_bias", {"a": a.T.copy() if ta else a, "b": b.T.copy() if tb else b,
                             "bias": rng.normal(size=4)},
             {"transpose_a": ta, "transpose_b": tb}, label=f"t{int(ta)}{int(tb)}")
    return cases


def _all_cases() -> list:
    """Boxing ops communicate: their SBP is checked on thread ranks in test_sbp_boxing.py."""
    return [c for c in grad.CASES + _extra_cases()
            if CTX.lookup(f"tdflow.{c.op}") is not None and not c.op.startswith("boxing_")]


def _types(c) -> dict:
    """Operand name -> its type (a tuple of types for a variadic operand)."""
    def one(a):
        return TensorType(a.shape, dtype_from_numpy(a.dtype))

    return {k: tuple(one(a) for a in v) if isinstance(v, list) else one(v)
            for k, v in c.inputs.items()}


def _run(c, inputs: dict) -> tuple[np.ndarray, ...]:
    """The op on ``inputs`` (numpy arrays by operand name), eagerly on cpu, as the gradient
    test runs it (the functional API, or an ``OpRunner`` for ops outside it)."""
    tensors = {k: tuple(tdflow.tensor(a) for a in v) if isinstance(v, list) else tdflow.tensor(v)
               for k, v in inputs.items()}
    return tuple(t.numpy() for t in grad._forward(c, tensors))


def _partial_pieces(a: np.ndarray, n: int) -> list[np.ndarray]:
    """``n`` random pieces summing to ``a`` (bool: ``a`` on rank 0, zeros elsewhere)."""
    if a.dtype == np.bool_:
        return [a] + [np.zeros_like(a)] * (n - 1)
    if np.issubdtype(a.dtype, np.integer):
        pieces = [np.asarray(rng.integers(-3, 4, a.shape), dtype=a.dtype) for _ in range(n - 1)]
    else:
        pieces = [np.asarray(rng.normal(size=a.shape), dtype=a.dtype) for _ in range(n - 1)]
    return [np.asarray(a - sum(pieces), dtype=a.dtype)] + pieces


def _physical_inputs(c, sig, n: int) -> list[dict]:
    """Each rank's inputs by operand name under signature ``sig``."""
    per_rank: list[dict] = [{} for _ in range(n)]
    for d in c.opdef.operands:
        v = c.inputs.get(d.name)
        if v is None:
            continue
        arrays = v if isinstance(v, list) else [v]
        pieces_by_rank: list[list] = [[] for _ in range(n)]
        for j, a in enumerate(arrays):
            s = parse_sbp(sig[f"{d.name}_{j}"])
            parts = (_partial_pieces(a, n) if s.kind == "P" else
                     [a[slices_of(a.shape, (s,), (n,), r)] for r in range(n)])
            for r in range(n):
                pieces_by_rank[r].append(np.array(parts[r]))
        for r in range(n):
            per_rank[r][d.name] = pieces_by_rank[r] if isinstance(v, list) else pieces_by_rank[r][0]
    return per_rank


def _close(got: np.ndarray, want: np.ndarray, what: str, tol: float = 1e-12) -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _out_sbp(sig: dict, blob: str):
    """An output the signature leaves out is broadcast (an unused optional result)."""
    return parse_sbp(sig[blob]) if blob in sig else B


def _check_signature(c, sig_obj, n: int, logical: tuple) -> None:
    sig = dict(sig_obj.inputs) | dict(sig_obj.outputs)
    out_names = [r.name for r in c.opdef.results]
    ranks = []
    for r, inputs in enumerate(_physical_inputs(c, sig, n)):
        # attributes that spell a logical shape become the rank's (what physicalize does)
        outs = [physical_shape(want.shape, (_out_sbp(sig, f"{name}_0"),), (n,), r)
                for name, want in zip(out_names, logical)]
        shapes = {k: [a.shape for a in v] if isinstance(v, list) else [v.shape]
                  for k, v in inputs.items()}
        attrs = physical_attrs(f"tdflow.{c.op}", c.attrs, shapes, outs)
        ranks.append(_run(dataclasses.replace(c, attrs=attrs), inputs))
    for k, want in enumerate(logical):
        blob = f"{out_names[k]}_0"
        s = _out_sbp(sig, blob)
        what = f"{c.id}: {blob} under {sig} on {n} ranks"
        if s.kind == "P":
            # float32 inputs cut into partial pieces round at float32's precision
            f32 = any(np.asarray(a).dtype == np.float32 for a in _leaves(c))
            _close(sum(r[k] for r in ranks), want, what + " (sum of the partial pieces)",
                   1e-6 if f32 else 1e-12)
            continue
        for r, outs in enumerate(ranks):
            piece = want[slices_of(want.shape, (s,), (n,), r)]
            assert outs[k].shape == physical_shape(want.shape, (s,), (n,), r), what
            _close(outs[k], piece, f"{what}, rank {r}")


CASES = _all_cases()


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_every_signature_gives_the_single_process_result(c):
    logical = _run(c, c.inputs)
    sigs = CTX.sbp_signatures(f"tdflow.{c.op}", _types(c), c.attrs)
    for n in NPROCS:
        for sig in sigs:
            if any(parse_sbp(v).kind == "S" and
                   parse_sbp(v).axis >= len(np.shape(_blob_array(c, b)))
                   for b, v in sig.inputs):
                pytest.fail(f"{c.id}: {sig} splits an axis its input does not have")
            _check_signature(c, sig, n, logical)


def _blob_array(c, blob: str) -> np.ndarray:
    name, j = blob.rsplit("_", 1)
    v = c.inputs[name]
    return v[int(j)] if isinstance(v, list) else v


def _leaves(c) -> list:
    return [a for v in c.inputs.values() for a in (v if isinstance(v, list) else [v])]


def test_a_wrong_signature_is_caught():
    """The check can fail: relu of partial sums is not a partial sum, and a matmul split on its
    contracted axis gives partial sums, not a split."""
    from tdflow.dialect.hooks.context import SbpSignature

    relu = next(c for c in CASES if c.op == "relu" and c.inputs["x"].ndim == 2)
    with pytest.raises(AssertionError):
        _check_signature(relu, SbpSignature.make({"x_0": "P"}, {"y_0": "P"}), 2, _run(relu, relu.inputs))
    mm = next(c for c in CASES if c.op == "matmul" and not c.attrs.get("transpose_a"))
    with pytest.raises(AssertionError):
        _check_signature(mm, SbpSignature.make({"a_0": "S(1)", "b_0": "S(0)"}, {"out_0": "S(0)"}),
                         2, _run(mm, mm.inputs))


def test_the_table_covers_many_ops_and_signatures():
    """Most standard ops are exercised with at least one signature beyond broadcast."""
    ops = {c.op for c in CASES if CTX.sbp_signatures(f"tdflow.{c.op}", _types(c), c.attrs)}
    assert len(ops) >= 100, sorted(ops)


# Ops checked elsewhere or with nothing to split: boxing ops (test_sbp_boxing.py), sources
# without inputs (always broadcast), optimizers (no results: they write the model in place).
UNCHECKED = {"adam_update", "sgd_update", "arange", "constant", "dense_constant",
             "boxing_all_gather", "boxing_all_reduce", "boxing_all_to_all",
             "boxing_reduce_scatter", "boxing_slice", "boxing_to_partial"}


def test_every_standard_op_with_get_sbp_has_a_case():
    """A new op with a get_sbp hook needs a case here (or in the gradient table)."""
    have = {c.op for c in CASES}
    missing = {name.split(".", 1)[1] for name in CTX.ops
               if "has_get_sbp_fn" in CTX.lookup(name).hooks} - have - UNCHECKED
    assert not missing, f"ops whose SBP signatures no case checks: {sorted(missing)}"


# ---- 2-D hierarchies ------------------------------------------------------------------------
# infer-sbp takes OneFlow's nd signatures: one 1-D signature per hierarchy axis, chosen
# independently. Checked on a [2, 2] mesh, one case per op, every pair of signatures.

HIER = (2, 2)


def _groups(nd: tuple) -> dict[tuple, list[int]]:
    """Ranks grouped by their coordinates on the non-P axes (a P group sums to one piece)."""
    from tdflow.dialect.sbp import rank_coords

    out: dict[tuple, list[int]] = {}
    for r in range(HIER[0] * HIER[1]):
        c = rank_coords(HIER, r)
        out.setdefault(tuple(x for x, s in zip(c, nd) if s.kind != "P"), []).append(r)
    return out


def _nd_pieces(a: np.ndarray, nd: tuple) -> list[np.ndarray]:
    """Each rank's piece of ``a`` under ``nd`` (P axes: random pieces summing per group)."""
    no_p = tuple(B if s.kind == "P" else s for s in nd)
    base = [np.array(a[slices_of(a.shape, no_p, HIER, r)]) for r in range(4)]
    pieces = list(base)
    for ranks in _groups(nd).values():
        if len(ranks) > 1:
            parts = _partial_pieces(base[ranks[0]], len(ranks))
            for r, p in zip(ranks, parts):
                pieces[r] = p
    return pieces


def _one_case_per_op() -> list:
    """Per op, the (first) case with the most signatures."""
    best: dict[str, tuple[int, object]] = {}
    for c in CASES:
        n = len(CTX.sbp_signatures(f"tdflow.{c.op}", _types(c), c.attrs))
        if c.op not in best or n > best[c.op][0]:
            best[c.op] = (n, c)
    return [c for _, c in best.values()]


def _with_split_signatures() -> list:
    return [c for c in _one_case_per_op()
            if CTX.sbp_signatures(f"tdflow.{c.op}", _types(c), c.attrs)]


def test_ops_whose_cases_have_only_broadcast():
    # The 2x2 test below needs a split signature; these ops' cases have none (so nothing to
    # pair), and the list is checked so that no op drops out of that test unnoticed.
    left_out = {c.op for c in _one_case_per_op()} - {c.op for c in _with_split_signatures()}
    assert left_out == {"reshape"}


@pytest.mark.parametrize("c", _with_split_signatures(), ids=lambda c: c.id)
def test_pairs_of_signatures_on_a_2x2_mesh(c):
    sigs = CTX.sbp_signatures(f"tdflow.{c.op}", _types(c), c.attrs)
    logical = _run(c, c.inputs)
    out_names = [r.name for r in c.opdef.results]
    for s0, s1 in itertools.product(sigs, repeat=2):
        t0, t1 = dict(s0.inputs) | dict(s0.outputs), dict(s1.inputs) | dict(s1.outputs)
        nd_of = {b: (parse_sbp(t0.get(b, "B")), parse_sbp(t1.get(b, "B"))) for b in {*t0, *t1}}
        per_rank: list[dict] = [{} for _ in range(4)]
        for name, v in c.inputs.items():
            arrays = v if isinstance(v, list) else [v]
            split = [_nd_pieces(a, nd_of.get(f"{name}_{j}", (B, B))) for j, a in enumerate(arrays)]
            for r in range(4):
                per_rank[r][name] = [p[r] for p in split] if isinstance(v, list) else split[0][r]
        ranks = []
        for r, inputs in enumerate(per_rank):
            outs = [physical_shape(w.shape, nd_of.get(f"{n}_0", (B, B)), HIER, r)
                    for n, w in zip(out_names, logical)]
            shapes = {k: [a.shape for a in v] if isinstance(v, list) else [v.shape]
                      for k, v in inputs.items()}
            attrs = physical_attrs(f"tdflow.{c.op}", c.attrs, shapes, outs)
            ranks.append(_run(dataclasses.replace(c, attrs=attrs), inputs))
        f32 = any(np.asarray(a).dtype == np.float32 for a in _leaves(c))
        for k, want in enumerate(logical):
            nd = nd_of.get(f"{out_names[k]}_0", (B, B))
            no_p = tuple(B if s.kind == "P" else s for s in nd)
            what = f"{c.id}: {out_names[k]} under {s0} x {s1}"
            for group in _groups(nd).values():
                got = sum(ranks[r][k] for r in group)
                piece = want[slices_of(want.shape, no_p, HIER, group[0])]
                _close(np.asarray(got), piece, f"{what}, ranks {group}", 1e-6 if f32 else 1e-12)
