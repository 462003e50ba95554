"""Gradient cases of the ops in tdflow/ops/train.td, run by test_grad_ops.py (eager against
finite differences, graph mode against eager bit for bit)."""


def add_cases(case, h) -> None:
    """Add this family's cases: ``case(op, inputs, attrs, wrt="x", ...)``; ``h`` has the
    input makers (``h.normal(2, 3)``, ``h.positive``, ``h.away``, ``h.distinct``, ``h.labels``)."""
