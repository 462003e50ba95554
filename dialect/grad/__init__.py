"""Gradients: one definition per op (a ``grad`` field, a Python rule, or derived from the
formula), used by eager autograd and by the ``autodiff`` pass alike. See :mod:`.core`.

>>> from tdflow.dialect.grad import grad_rule, gradient_of, input_gradients   # doctest: +SKIP
"""

from .core import (
    Emitter,
    Forward,
    GradDef,
    GradError,
    grad_rule,
    gradient_of,
    gradient_report,
    input_gradients,
    needs_gradient,
    registered_rules,
    sum_to_shape,
)

__all__ = ["Emitter", "Forward", "GradDef", "GradError", "grad_rule", "gradient_of",
           "gradient_report", "input_gradients", "needs_gradient", "registered_rules", "sum_to_shape"]
