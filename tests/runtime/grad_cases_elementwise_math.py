"""Gradient cases of the differentiable ops in the elementwise and math families (ops/elementwise.td, ops/math.td), run by
test_grad_ops.py (eager against finite differences, graph mode against eager bit for bit).

Inputs stay inside each function's domain and away from its jumps (the rounding ops at
integers and halves, the remainders where ``x / y`` is an integer), where finite differences
see a step the derivative does not have."""

import numpy as np


def _label(*arrays: np.ndarray) -> str:
    return "_".join("x".join(map(str, a.shape)) or "scalar" for a in arrays)


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.rng``)."""
    rng = h.rng

    def unit(*shape):  # |x| <= 0.9: inside asin's, acos's and atanh's (-1, 1)
        return rng.uniform(-0.9, 0.9, size=shape)

    def above_one(*shape):  # acosh's domain, away from its infinite slope at 1
        return rng.uniform(1.2, 3.0, size=shape)

    def off_grid(*shape, centre=0.5, spread=0.3):  # k + centre +- spread, away from jumps
        return (rng.integers(-3, 3, size=shape) + centre
                + rng.uniform(-spread, spread, size=shape)).astype(np.float64)

    makers = {
        "sin": lambda *s: h.normal(*s) * 2, "cos": lambda *s: h.normal(*s) * 2,
        "tan": unit,  # away from the poles at +-pi/2
        "asin": unit, "acos": unit, "atan": lambda *s: h.normal(*s) * 2,
        "sinh": h.normal, "cosh": h.normal, "asinh": lambda *s: h.normal(*s) * 2,
        "acosh": above_one, "atanh": unit,
        "floor": off_grid, "ceil": off_grid,
        "round": lambda *s: off_grid(*s, centre=0.0, spread=0.35),
        "sign": h.away,
        "softsign": lambda *s: h.normal(*s) * 3,
    }
    for name, make in makers.items():
        operand = "in" if name == "softsign" else "x"
        for shape in ((3, 4), (2, 3, 2), ()):
            x = np.asarray(make(*shape))
            case(name, {operand: x}, wrt=operand, label=_label(x))

    # The remainders jump where x / y is an integer: with |x| in [1.2, 1.5] and |y| in
    # [0.8, 1.0], |x / y| stays in [1.2, 1.875]; all four sign combinations occur (fmod and
    # floor_mod differ exactly where the signs differ).
    def signed(lo, hi, shape):
        return np.asarray(rng.choice([-1.0, 1.0], size=shape) * rng.uniform(lo, hi, size=shape))

    for name in ("broadcast_fmod", "broadcast_floor_mod"):
        for sx, sy in (((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (2, 3))):
            x, y = signed(1.2, 1.5, sx), signed(0.8, 1.0, sy)
            case(name, {"x": x, "y": y}, wrt="x y", label=_label(x, y))
