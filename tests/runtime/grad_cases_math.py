"""Gradient cases of the ops in tdflow/ops/math.td, run by test_grad_ops.py (eager against
finite differences, graph mode against eager bit for bit)."""

import numpy as np


def _label(*arrays: np.ndarray) -> str:
    return "_".join("x".join(map(str, a.shape)) or "scalar" for a in arrays)


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.distinct``, ``h.labels``)."""
    for name, make in (("abs", h.away), ("rsqrt", h.positive), ("erf", h.normal),
                       ("silu", h.normal), ("fast_gelu", h.normal), ("softplus", h.normal)):
        for shape in ((3, 4), (2, 3, 2), ()):
            x = np.asarray(make(*shape) * (3 if name in ("silu", "fast_gelu", "softplus") else 1))
            operand = "in" if name in ("silu", "fast_gelu") else "x"
            case(name, {operand: x}, wrt=operand, label=_label(x))

    # softplus on both sides of its threshold (beta * x > threshold is linear); inputs kept
    # 0.1 away from the switch, where the two branches differ by up to log(1 + e^t) / beta - t / beta
    for beta, threshold in ((2.0, 1.0), (0.5, 0.25), (1.0, 20.0)):
        x = h.normal(4, 5) * 2
        kink = threshold / beta
        x = np.where(np.abs(x - kink) < 0.1, x + 0.3, x)
        case("softplus", {"x": x}, {"beta": beta, "threshold": threshold}, wrt="x",
             label=f"beta{beta}_threshold{threshold}")

    for v in (2, -3):
        case("scalar_div", {"in": h.normal(3, 4)}, {"has_int_operand": True, "int_operand": v},
             wrt="in", label=f"int{v}")
    for v in (0.5, -2.25):
        case("scalar_div", {"in": h.normal(2, 3)},
             {"has_float_operand": True, "float_operand": v}, wrt="in", label=f"float{v}")

    for sc, sx, sy in (((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((4,), (3, 4), ()),
                       ((2, 1, 4), (3, 1), (1, 4)), ((), (2, 3), (2, 3))):
        c = h.rng.random(sc) < 0.5
        x, y = h.normal(*sx), h.normal(*sy)
        case("where", {"condition": c, "x": x, "y": y}, wrt="x y", label=_label(c, x, y))
    c = (h.rng.integers(-1, 2, size=(3, 4))).astype(np.int8)
    case("where", {"condition": c, "x": h.normal(3, 4), "y": h.normal(3, 4)}, wrt="y",
         label="i8_condition_wrt_y")

    for n, shape in ((2, (3, 4)), (3, (2, 3, 2)), (4, (5,)), (2, ())):
        arrays = [h.normal(*shape) for _ in range(n)]
        case("add_n", {"in": arrays}, wrt="in", label=f"{n}x{_label(arrays[0])}")
