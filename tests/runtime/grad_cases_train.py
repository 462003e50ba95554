"""Gradient cases of the ops in the reduce, pool, softmax and optim families (formerly ops/train.td), run by test_grad_ops.py (eager against
finite differences, graph mode against eager bit for bit)."""

import numpy as np


def _pool_attrs(k: int, s: int, p: int, *, fmt: str = "channels_first", ceil: bool = False,
                include: bool = False, divisor: int = 0) -> dict:
    return {"padding": [p, p], "data_format": fmt, "kernel_size": [k, k], "stride": [s, s],
            "ceil_mode": ceil, "count_include_pad": include, "divisor_override": divisor}


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.distinct``, ``h.labels``)."""
    for axis in ([1], [0, 2], [-1], []):
        for keep in (False, True):
            label = f"axis{axis}_keep{int(keep)}".replace(" ", "")
            case("reduce_min", {"input_tensor": h.distinct(2, 3, 4)},
                 {"axis": axis, "keepdims": keep}, wrt="input_tensor", label=label)
            case("reduce_prod", {"input_tensor": h.away(2, 3, 4)},
                 {"axis": axis, "keepdims": keep}, wrt="input_tensor", label=label)
    # one zero in a slice (its entry gets the product of the others) and two (all zero):
    # finite differences are exact there, the product being linear in each element
    x = h.away(3, 4)
    x[0, 1] = 0.0
    x[1, 0] = x[1, 2] = 0.0
    case("reduce_prod", {"input_tensor": x}, {"axis": [1], "keepdims": False},
         wrt="input_tensor", label="zeros")

    pools = (("k2_s2", (1, 1, 4, 4), _pool_attrs(2, 2, 0)),
             ("k3_s2_pad1", (1, 1, 5, 5), _pool_attrs(3, 2, 1)),
             ("k3_s2_pad1_include", (1, 1, 5, 5), _pool_attrs(3, 2, 1, include=True)),
             ("k2_s2_ceil", (1, 1, 5, 3), _pool_attrs(2, 2, 0, ceil=True)),
             ("k3_s1_pad1_divisor5", (2, 1, 3, 4), _pool_attrs(3, 1, 1, divisor=5)),
             ("nhwc_k2_s1", (1, 3, 4, 2), _pool_attrs(2, 1, 0, fmt="channels_last")))
    for label, shape, attrs in pools:
        case("avg_pool_2d", {"x": h.normal(*shape)}, attrs, wrt="x", label=label)
    for label, shape, dy_shape, attrs in (("k3_s2_pad1_ceil", (1, 2, 5, 5), (1, 2, 3, 3),
                                           _pool_attrs(3, 2, 1, ceil=True)),
                                          ("nhwc_k2_s2", (1, 4, 4, 2), (1, 2, 2, 2),
                                           _pool_attrs(2, 2, 0, fmt="channels_last"))):
        case("avg_pool_2d_grad", {"x": h.normal(*shape), "dy": h.normal(*dy_shape)}, attrs,
             wrt="dy", label=label)

    for label, shape, size, fmt in (("5x7_to_3x3", (2, 1, 5, 7), [3, 3], "channels_first"),
                                    ("4x6_to_2x3", (1, 2, 4, 6), [2, 3], "channels_first"),
                                    ("global", (1, 3, 3, 3), [1], "channels_first"),
                                    ("nhwc_5x4_to_3x2", (1, 5, 4, 2), [3, 2], "channels_last")):
        case("adaptive_avg_pool2d", {"x": h.normal(*shape)},
             {"data_format": fmt, "output_size": size}, wrt="x", label=label)
    case("adaptive_avg_pool2d_grad", {"x": h.normal(1, 2, 5, 4), "dy": h.normal(1, 2, 3, 3)},
         {"data_format": "channels_first", "output_size": [3, 3]}, wrt="dy", label="5x4_to_3x3")

    def soft(*shape: int) -> np.ndarray:
        t = h.positive(*shape)
        return t / t.sum(axis=-1, keepdims=True)

    for use in ("out", "prob", "prob out"):
        case("softmax_cross_entropy", {"prediction": h.normal(4, 5), "label": soft(4, 5)},
             wrt="prediction", use=use, label=f"through_{use.replace(' ', '_')}")
    case("softmax_cross_entropy", {"prediction": h.normal(2, 3, 4), "label": soft(2, 3, 4)},
         wrt="prediction", label="rank3")
    case("softmax_cross_entropy_grad", {"dy": h.normal(4), "label": soft(4, 5),
                                        "prob": soft(4, 5)}, wrt="dy label prob", label="4x5")
