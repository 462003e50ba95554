"""The SBP cost model and per-rank attributes: what ``infer-sbp`` and ``physicalize`` share.

``copy_cost`` is OneFlow's ``ComputCopyCostBetweenTwoSbpParallel`` (one placement, so the
same-devices branch): bytes moved to turn a producer's SBP into a consumer's. ``physical_attrs``
rewrites the attributes that spell a logical shape (``expand_shape``, ``filters``, ...) into
the rank's physical one. ``sbp_pipeline`` is the pass pipeline the distributed runtime runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tdflow.dialect.sbp import NdSbp, Sbp

__all__ = ["UNSUPPORTED", "copy_cost", "nd_copy_cost", "physical_attrs", "sbp_pipeline"]

# OneFlow's kUnsupportedBoxing: a conversion the boxing ops cannot do (S -> P)
UNSUPPORTED = math.inf


def copy_cost(producer: Sbp, consumer: Sbp, nbytes: float, parallel_num: int) -> float:
    """Bytes moved to convert ``producer`` into ``consumer`` on one placement of ``parallel_num``.

    >>> from tdflow.dialect.sbp import B, P, S
    >>> copy_cost(S(0), S(0), 800, 4), copy_cost(B, S(1), 800, 4), copy_cost(P, B, 800, 4)
    (0.0, 0.0, 4800.0)
    >>> copy_cost(S(0), S(1), 800, 4), copy_cost(S(0), B, 800, 4), copy_cost(S(0), P, 800, 4)
    (600.0, 2400.0, inf)
    """
    nbytes = float(nbytes)
    if producer == consumer:
        return 0.0
    if consumer.kind == "P":
        # B -> P keeps one rank's copy (free); S -> P is not a boxing OneFlow supports
        return UNSUPPORTED if producer.kind == "S" else 0.0
    if producer.kind == "B":  # B -> S: a local slice
        return 0.0
    if producer.kind == "S" and consumer.kind == "S":  # all-to-all
        return nbytes * (parallel_num - 1) / parallel_num
    if producer.kind == "S" or consumer.kind == "S":  # S -> B all-gather, P -> S reduce-scatter
        return nbytes * (parallel_num - 1)
    return 2.0 * nbytes * (parallel_num - 1)  # P -> B all-reduce


def nd_copy_cost(producer: NdSbp, consumer: NdSbp, nbytes: float, hierarchy: tuple[int, ...],
                 ) -> float:
    """Summed per hierarchy axis, each axis seeing the tensor its outer axes left (a first
    approximation of OneFlow's hierarchical boxing cost).

    >>> from tdflow.dialect.sbp import B, P, S
    >>> nd_copy_cost((P, B), (B, B), 800, (2, 2))
    1600.0
    """
    total, size = 0.0, float(nbytes)
    for p, c, k in zip(producer, consumer, hierarchy):
        total += copy_cost(p, c, size, k)
        if "S" in (p.kind, c.kind) and total != UNSUPPORTED:
            size /= k
    return total


# attributes that spell a logical shape: (attrs, physical input shapes, physical output shapes)
# -> the rank's attributes. An op not here has no shape in its attributes.
_PhysicalFn = Callable[[dict[str, Any], dict[str, list[tuple]], list[tuple]], dict[str, Any]]
_PHYSICAL: dict[str, _PhysicalFn] = {
    "tdflow.expand": lambda a, ins, outs: a | {"expand_shape": list(outs[0])},
    "tdflow.reshape": lambda a, ins, outs: a | {"shape": list(outs[0])},
    "tdflow.conv2d": lambda a, ins, outs: a | {"filters": ins["weight"][0][0]},
    "tdflow.slice_grad": lambda a, ins, outs: a | {"like_shape": list(outs[0])},
}


def physical_attrs(op_name: str, attrs: dict[str, Any], in_shapes: dict[str, list[tuple]],
                   out_shapes: list[tuple]) -> dict[str, Any]:
    """``attrs`` with every logical-shape attribute replaced by the rank's physical one.

    >>> physical_attrs("tdflow.expand", {"expand_shape": [4, -1]}, {"in": [(2, 1)]}, [(2, 3)])
    {'expand_shape': [2, 3]}
    >>> physical_attrs("tdflow.relu", {}, {"x": [(2, 3)]}, [(2, 3)])
    {}
    """
    fn = _PHYSICAL.get(op_name)
    return dict(attrs) if fn is None else fn(dict(attrs), in_shapes, out_shapes)


def has_shape_attrs(op_name: str) -> bool:
    """Whether ``physicalize`` rewrites attributes of ``op_name``.

    >>> has_shape_attrs("tdflow.conv2d"), has_shape_attrs("tdflow.add_n")
    (True, False)
    """
    return op_name in _PHYSICAL


def sbp_pipeline(nproc: int, rank: int, device: str = "cpu", search: str = "lookahead") -> str:
    """The pass pipeline that lowers a logical program into rank ``rank``'s physical plan:
    ``infer-sbp`` (which infers the logical shapes first) and ``physicalize``, then the
    standard pipeline for ``device``. ``search="greedy"`` picks each op's signature by its
    inputs alone (OneFlow's default; see ``lowering.sbp_search``).

    >>> sbp_pipeline(2, 1).split(",")[:3]
    ['infer-sbp{nproc=2}', 'physicalize{rank=1', 'nproc=2}']
    >>> sbp_pipeline(2, 1).endswith("plan-memory")
    True
    """
    from .pass_manager import default_pipeline

    extra = "" if search == "lookahead" else f",search={search}"
    return (f"infer-sbp{{nproc={nproc}{extra}}},physicalize{{rank={rank},nproc={nproc}}},"
            + default_pipeline(device))
