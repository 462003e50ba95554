"""Attributes normalized once, in the dialect (``tdflow.dialect.attr_normalize``): the records'
``TDF_AxisAttr``/``TDF_AxesAttr``/``TDF_PairAttr`` say what a value is, ``normalize_attrs``
fills defaults, makes axes non-negative, expands pairs and checks ranges.

Differential: against the helpers the hooks used before (``normalize_axis``/``normalize_axes``
of ``dialect/hooks/_shape.py`` and the pair checks the conv/pool hooks had) and against numpy
(``numpy.transpose`` for a permutation, ``numpy.cumsum`` for a scan axis, which counts a
scalar as one axis), on every ruled attribute of every standard op over many values and
ranks."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from tdflow.dialect import InferError, standard_dialect
from tdflow.dialect.attr_normalize import AttrError, normalize_attrs, normalize_value
from tdflow.dialect.hooks._shape import normalize_axes, normalize_axis
from tdflow.dialect.hooks.context import HookError
from tdflow.dialect.types import TensorType as T

D = standard_dialect()
RULED = sorted((op.mnemonic, a.name) for op in D for a in op.attributes if a.rule is not None)


def _old_pair(name, value, minimum):
    """The conv/pool hooks' pair check before normalization moved to the dialect."""
    v = tuple(value)
    if len(v) != 2:
        raise HookError(f"{name} must have 2 entries (one per spatial dim), got {list(v)}")
    if any(x < minimum for x in v):
        raise HookError(f"{name} entries must be >= {minimum}, got {list(v)}")
    return list(v)


def _outcome(fn):
    try:
        return "ok", fn()
    except HookError as exc:  # AttrError is one
        return "error", exc.message


def _numpy(fn):
    try:
        return "ok", fn()
    except (ValueError, IndexError) as exc:  # numpy's AxisError is both
        return "error", str(exc)


def _same(new, old):
    """Equal outcomes; an error's message may name the operand and its shape where the old
    helper said "a rank-N tensor" (the range after it is the same)."""
    if new[0] != old[0] or new[0] == "ok":
        return new == old
    if old[1] == new[1]:
        return True
    scalar = re.fullmatch(r"(\w+ -?\d+) is out of range for a rank-0 tensor .*", old[1])
    if scalar:
        return re.fullmatch(rf"{scalar[1]} is out of range: '\w+' is a scalar \(rank 0\) and "
                            rf"has no dimension", new[1]) is not None
    shape = re.sub(r" for '\w+' of shape \[[^\]]*\]", " for a rank-N tensor", new[1])
    return shape == re.sub(r"a rank-\d+ tensor", "a rank-N tensor", old[1])


def test_the_standard_ops_declare_their_axes_and_pairs():
    assert len(RULED) >= 40
    kinds = {D.lookup(f"tdflow.{m}").attr(a).rule.kind for m, a in RULED}
    assert kinds == {"axis", "axes", "pair", "perm", "dims"}
    # the records' attribute kinds and defaults are the wrapped attribute's (OneFlow's)
    bias = D.lookup("tdflow.bias_add").attr("axis")
    assert (bias.kind, bias.default, bias.constraint) == ("si32", 0, "SI32Attr")
    conv = D.lookup("tdflow.conv2d").attr("kernel_size")
    assert (conv.kind, conv.required, conv.rule.minimum) == ("si32_array", True, 1)


@pytest.mark.parametrize("mnemonic,attr", RULED)
def test_every_ruled_attribute_matches_the_old_helpers(mnemonic, attr):
    op = D.lookup(f"tdflow.{mnemonic}")
    rule = op.attr(attr).rule
    cases = 0
    if rule.kind in ("perm", "dims"):
        cases = _check_against_numpy(op, attr, rule)
    elif rule.kind == "pair":
        values = [[a, b] for a, b in itertools.product(range(-1, 3), repeat=2)]
        values += [[1, 2, 3], [], [0]]
        for v in values:
            new = _outcome(lambda v=v: normalize_attrs(op, {attr: v})[attr])
            old = _outcome(lambda v=v: _old_pair(attr, v, rule.minimum))
            assert new == old, (v, new, old)
            cases += 1
    else:
        for rank in range(0, 5):
            shape = tuple(range(2, 2 + rank))
            bound = max(rank, rule.minimum or 0) + rule.extra
            if rule.kind == "axis" and rule.minimum:  # a scan axis: numpy's cumsum decides
                for v in range(-bound - 2, bound + 2):
                    new = _outcome(lambda v=v, shape=shape: normalize_value(
                        op, op.attr(attr), v, {rule.operand: shape}))
                    ref = _numpy(lambda v=v, shape=shape: np.cumsum(np.zeros(shape), axis=v))
                    assert new[0] == ref[0], (rank, v, new, ref)
                    if new[0] == "ok":  # the same axis: numpy's moveaxis agrees
                        assert new[1] == v % bound
                    cases += 1
            elif rule.kind == "axis":
                for v in range(-bound - 2, bound + 2):
                    # this attribute alone (layer_norm's other axis has a default that a
                    # rank-0 input would refuse first)
                    new = _outcome(lambda v=v, shape=shape: normalize_value(
                        op, op.attr(attr), v, {rule.operand: shape}))
                    old = _outcome(lambda v=v, bound=bound: normalize_axis(v, bound, attr=attr))
                    assert _same(new, old), (rank, v, new, old)
                    cases += 1
            else:
                for n in range(0, 3):
                    for vs in itertools.product(range(-bound - 1, bound + 1), repeat=n):
                        new = _outcome(lambda vs=vs, shape=shape: tuple(normalize_attrs(
                            op, {attr: list(vs)}, {rule.operand: shape})[attr]))
                        old = _outcome(lambda vs=vs, bound=bound: normalize_axes(list(vs), bound,
                                                                              attr=attr))
                        assert _same(new, old), (rank, vs, new, old)
                        cases += 1
    assert cases >= 10


def _check_against_numpy(op, attr, rule) -> int:
    """A permutation against ``numpy.transpose`` (which takes negative axes); one entry per
    dim against the rule it states (``len == rank``, entries ``>= minimum``)."""
    cases = 0
    for rank in range(0, 4):
        shape = tuple(range(2, 2 + rank))
        for n in range(0, rank + 2):
            for vs in itertools.product(range(-rank - 1, rank + 1), repeat=n):
                new = _outcome(lambda vs=vs, shape=shape: normalize_value(
                    op, op.attr(attr), list(vs), {rule.operand: shape}))
                if rule.kind == "perm":
                    ref = _numpy(lambda vs=vs, shape=shape: np.zeros(shape).transpose(vs).shape)
                    assert new[0] == ref[0], (shape, vs, new, ref)
                    if new[0] == "ok":
                        assert tuple(shape[p] for p in new[1]) == ref[1]
                        assert all(p >= 0 for p in new[1])
                    else:
                        dims = f"0..{rank - 1}" if rank else "[]"
                        assert f"is not a permutation of {dims} for '{rule.operand}' of " \
                               f"shape [" in new[1]
                else:
                    ok = len(vs) == rank and all(v >= rule.minimum for v in vs)
                    assert new == ("ok", list(vs)) if ok else new[0] == "error", (vs, new)
                    if not ok:
                        assert attr in new[1] and str(list(vs)) in new[1]
                cases += 1
    return cases


def test_defaults_filled_and_unknown_ranks_kept():
    op = D.lookup("tdflow.bias_add")
    assert normalize_attrs(op) == {"axis": 0}
    assert normalize_attrs(op, {"axis": -1}, {"a": None}) == {"axis": -1}  # unranked: as given
    assert normalize_attrs(op, {"axis": -1}, [(2, 3), (3,)]) == {"axis": 1}  # operand order
    cat = D.lookup("tdflow.cat")  # a variadic operand: its first value's rank
    assert normalize_attrs(cat, {"axis": -1}, {"in": [T((2, 3), "f32"), T((2, 5), "f32")]}
                           )["axis"] == 1
    expand = D.lookup("tdflow.expand_dims")  # inserts: the range is rank + 1
    assert normalize_attrs(expand, {"axis": -1}, {"in": (2, 3)}) == {"axis": 2}
    pool = D.lookup("tdflow.max_pool_2d")
    assert normalize_attrs(pool, {"kernel_size": 3, "stride": [2, 1]})["kernel_size"] == [3, 3]
    with pytest.raises(AttrError, match="must have 2 entries"):  # a list says both dims
        normalize_attrs(pool, {"kernel_size": [3]})


def test_bad_values_name_the_op_and_the_attribute():
    with pytest.raises(AttrError) as err:
        normalize_attrs(D.lookup("tdflow.gather"), {"axis": 3}, {"in": (4, 5)})
    assert err.value.op == "tdflow.gather" and err.value.attr == "axis"
    assert str(err.value).startswith("'tdflow.gather': attribute 'axis': axis 3 is out of range")
    with pytest.raises(AttrError, match="names a dimension twice"):
        normalize_attrs(D.lookup("tdflow.reduce_sum"), {"axis": [1, -1]}, [(2, 3)])
    with pytest.raises(AttrError, match="must be an integer"):
        normalize_attrs(D.lookup("tdflow.bias_add"), {"axis": 1.5}, [(2, 3), (3,)])
    with pytest.raises(AttrError, match=r"strides entries must be >= 1, got \[0, 1\]"):
        normalize_attrs(D.lookup("tdflow.conv2d"), {"strides": [0, 1]})


def test_inference_and_hooks_see_normalized_attributes():
    # reduce_sum over axis -1 of a rank-3 tensor, and bias_add's SBP along axis -1 (== 1)
    assert D.infer_result_types("tdflow.reduce_sum", [T((2, 3, 4), "f32")],
                                {"axis": [-1], "keepdims": True}) == [T((2, 3, 1), "f32")]
    sigs = [s.as_dict() for s in D.sbp_signatures("tdflow.bias_add",
                                                  [T((2, 3), "f32"), T((3,), "f32")], {"axis": -1})]
    assert {"inputs": {"a_0": "S(1)", "b_0": "S(0)"}, "outputs": {"out_0": "S(1)"}} in sigs
    with pytest.raises(InferError) as err:  # at the op, naming the attribute
        D.infer_result_types("tdflow.squeeze", [T((1, 3), "f32")], {"axes": [2]})
    assert err.value.op == "tdflow.squeeze" and err.value.attr == "axes"
