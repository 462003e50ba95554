"""ONNX's sequence ops, for sequences whose length is known when the model is compiled.

tdflow's values are tensors, so a sequence is held while lowering as a Python list of its
tensors: ``SequenceConstruct`` builds the list, ``SequenceInsert``/``SequenceErase`` make new
lists, ``SequenceAt`` picks an element and ``ConcatFromSequence`` joins them with one ``cat``.
Positions must be known when compiling (constants, or graph inputs the converter specialises
on), which is what fixes the length. A sequence that is a graph input or output is not
supported (the importer reports it).

>>> from tdflow.onnx.rules.api import rule_for
>>> rule_for("SequenceAt", 11) is sequence_at
True
"""

from __future__ import annotations

from typing import Any

from .api import Lowerer, Node, rule
from .common import norm_axis, reshape
from .shape import static_slice


def _seq(cx: Lowerer, v: Any, what: str = "input 0") -> list:
    if not isinstance(v, list):
        cx.unsupported(f"{what} is not a sequence this lowering built (a sequence graph input?)")
    return v


def _position(cx: Lowerer, v: Any, length: int, *, inserting: bool = False) -> int:
    """A position in a sequence of ``length``: negative counts from the end; ``inserting``
    allows ``length`` itself (after the last element)."""
    pos = int(cx.need_const(v, "the position").reshape(()))
    hi = length if inserting else length - 1
    if not -length <= pos <= hi:
        cx.unsupported(f"position {pos} is outside [-{length}, {hi}]")
    return pos + length if pos < 0 else pos


@rule("SequenceEmpty")
def sequence_empty(cx: Lowerer, n: Node) -> list:
    return [[]]


@rule("SequenceConstruct")
def sequence_construct(cx: Lowerer, n: Node) -> list:
    return [[v for v in n.inputs if v is not None]]


@rule("SequenceLength")
def sequence_length(cx: Lowerer, n: Node) -> list:
    import numpy as np

    return [cx.constant(np.array(len(_seq(cx, n.input(0))), np.int64))]


@rule("SequenceAt")
def sequence_at(cx: Lowerer, n: Node) -> list:
    seq = _seq(cx, n.input(0))
    return [seq[_position(cx, n.input(1), len(seq))]]


@rule("SequenceInsert")
def sequence_insert(cx: Lowerer, n: Node) -> list:
    seq = list(_seq(cx, n.input(0)))
    pos = _position(cx, n.input(2), len(seq), inserting=True) if n.has_input(2) else len(seq)
    seq.insert(pos, n.input(1))
    return [seq]


@rule("SequenceErase")
def sequence_erase(cx: Lowerer, n: Node) -> list:
    seq = list(_seq(cx, n.input(0)))
    if not seq:
        cx.unsupported("erasing from an empty sequence")
    pos = _position(cx, n.input(1), len(seq)) if n.has_input(1) else len(seq) - 1
    del seq[pos]
    return [seq]


@rule("ConcatFromSequence")
def concat_from_sequence(cx: Lowerer, n: Node) -> list:
    """The elements joined along ``axis``; with ``new_axis`` stacked along a new one."""
    seq = _seq(cx, n.input(0))
    if not seq:
        cx.unsupported("concatenating an empty sequence")
    rank = len(cx.shape_of(seq[0]))
    new_axis = bool(n.attrs.get("new_axis"))
    axis = norm_axis(n.attrs["axis"], rank + 1 if new_axis else rank, cx)
    if new_axis:
        seq = [reshape(cx, v, [*cx.shape_of(v)[:axis], 1, *cx.shape_of(v)[axis:]]) for v in seq]
    if len(seq) == 1:
        return [seq[0]]
    return [cx.op("tdflow.cat", [seq], {"axis": axis})]


@rule("SplitToSequence")
def split_to_sequence(cx: Lowerer, n: Node) -> list:
    """Pieces of ``split`` sizes (a list), of ``split`` each (a scalar, the last smaller), or
    of one (absent: then ``keepdims=0`` drops the split axis)."""
    x = n.input(0)
    shape = cx.shape_of(x)
    axis = norm_axis(n.attrs["axis"], len(shape), cx)
    dim = shape[axis]
    squeeze = False
    if n.has_input(1):
        split = cx.need_const(n.input(1), "split")
        if split.ndim == 0:
            each = int(split)
            if each <= 0:
                cx.unsupported(f"split size {each} is not positive")
            sizes = [min(each, dim - s) for s in range(0, dim, each)]
        else:
            sizes = [int(s) for s in split]
            if sum(sizes) != dim:
                cx.unsupported(f"split sizes {sizes} do not add up to dim {axis} of "
                               f"{list(shape)}")
    else:
        sizes = [1] * dim
        squeeze = not n.attrs.get("keepdims", 1)
    out, start = [], 0
    for s in sizes:
        piece = static_slice(cx, x, [start], [start + s], [axis], [1])
        if squeeze:
            piece = reshape(cx, piece, [d for i, d in enumerate(shape) if i != axis])
        out.append(piece)
        start += s
    return [out]


@rule("OptionalHasElement")
def optional_has_element(cx: Lowerer, n: Node) -> list:
    """Whether the optional input is there: known when compiling, since an optional value
    here is a tensor or nothing."""
    import numpy as np

    return [cx.constant(np.array(n.has_input(0)))]


@rule("OptionalGetElement")
def optional_get_element(cx: Lowerer, n: Node) -> list:
    return [n.input(0)]
