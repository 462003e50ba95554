"""``tdflow.dialect.sbp``: the notation both ways, OneFlow's split rule, and the pieces of all
ranks tiling the logical tensor exactly (hypothesis over shapes, hierarchies and nd_sbp)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tdflow.dialect.sbp import (
    B,
    P,
    S,
    Sbp,
    SbpError,
    parse_sbp,
    physical_shape,
    rank_coords,
    sbp_ir,
    sbp_text,
    slices_of,
)

from tdflow.core.errors import TdflowError


@pytest.mark.parametrize("text, sbp", [
    ("S(0)", S(0)), ("S(3)", S(3)), ("B", B), ("P", P), ("#sbp.S<1>", S(1)), ("#sbp.B", B),
    ("#sbp.P", P), (" S( 2 ) ", S(2)), ("#sbp.S<split_axis = 1>", S(1)),
])
def test_parse_both_notations(text, sbp):
    assert parse_sbp(text) == sbp
    assert parse_sbp(sbp_text(sbp)) == sbp == parse_sbp(sbp_ir(sbp))


@pytest.mark.parametrize("text", ["S", "S(-1)", "X", "#sbp.Q", "S(0", "BP", ""])
def test_bad_sbp_text_is_a_tdflow_error(text):
    with pytest.raises(SbpError) as info:
        parse_sbp(text)
    assert isinstance(info.value, TdflowError)


def test_bad_sbp_values():
    for kind, axis in (("S", None), ("B", 0), ("Q", None)):
        with pytest.raises(SbpError):
            Sbp(kind, axis)


def test_oneflow_split_rule_uneven():
    """7 rows on 3 ranks: 3, 2, 2 (the first n % k ranks get one more)."""
    assert [physical_shape((7, 2), (S(0),), (3,), r) for r in range(3)] == [(3, 2), (2, 2), (2, 2)]
    assert [physical_shape((2, 5), (S(0),), (4,), r)[0] for r in range(4)] == [1, 1, 0, 0]
    assert physical_shape((7, 2), (P,), (3,), 2) == (7, 2)


def test_ranks_are_row_major_over_the_hierarchy():
    assert [rank_coords((2, 3), r) for r in range(6)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with pytest.raises(SbpError, match="rank 6 is outside the hierarchy"):
        rank_coords((2, 3), 6)


def test_mismatched_hierarchy_and_axis_are_errors():
    with pytest.raises(SbpError, match="has 1 axes; the hierarchy \\[2, 2\\] has 2"):
        physical_shape((4,), (S(0),), (2, 2), 0)
    with pytest.raises(SbpError, match="S\\(1\\) splits axis 1 of a rank-1 tensor"):
        physical_shape((4,), (S(1),), (2,), 0)


@st.composite
def layouts(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 7), min_size=ndim, max_size=ndim)))
    hier = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
    nd = tuple(draw(st.sampled_from([B, P] + [S(a) for a in range(ndim)])) for _ in hier)
    return shape, nd, hier


@given(layouts())
def test_split_pieces_tile_the_tensor_once(layout):
    """Over the ranks that share the B/P coordinates, S pieces cover every element exactly once;
    B and P pieces are the whole tensor."""
    shape, nd, hier = layout
    size = int(np.prod(hier))
    cover = np.zeros(shape, dtype=int)
    for r in range(size):
        sl = slices_of(shape, nd, hier, r)
        assert tuple(s.stop - s.start for s in sl) == physical_shape(shape, nd, hier, r)
        cover[sl] += 1
    copies = int(np.prod([k for s, k in zip(nd, hier) if s.kind != "S"]))
    assert (cover == copies).all()
