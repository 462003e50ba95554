"""Python's operators on :class:`~tdflow.runtime.tensor.Tensor`, installed when imported.

Every operator is a call of the functional API (:mod:`tdflow.runtime.functional`), looked up
when the operator runs, so whatever an eager call does (kernel choice, the engine, the autograd
tape) an operator does too. ``tdflow.runtime`` imports this module; the functional API (which
loads the standard dialect) is imported on the first operator call, not before.

>>> import numpy as np
>>> from tdflow.runtime.tensor import tensor
>>> x, y = tensor([1.0, 2.0, 3.0]), tensor([3.0, 2.0, 1.0])
>>> (2 * x + y).numpy(), (1 - x).numpy(), (x ** 2).numpy()
(array([5., 6., 7.], dtype=float32), array([ 0., -1., -2.], dtype=float32), array([1., 4., 9.], dtype=float32))
>>> (x > y).numpy(), (x == 2).dtype
(array([False, False,  True]), 'i1')
>>> (tensor(np.eye(2, dtype=np.float32)) @ tensor([[1.0, 2.0], [3.0, 4.0]])).numpy()
array([[1., 2.],
       [3., 4.]], dtype=float32)

Python numbers (``int``, ``float``, ``bool`` and numpy's scalar types) combine with tensors as
the functional API's ``Scalar`` parameters do (OneFlow's scalar ops: the result keeps the
tensor's type). Anything else, a numpy array included, gets ``NotImplemented``, so Python
raises its usual ``TypeError``; ``__array_ufunc__`` makes numpy refuse ``array + tensor`` too
instead of converting the tensor. ``==`` with such a value falls back to identity, as Python's
``==`` does. Tensors hash by identity (as PyTorch's do), so they stay
usable as dict keys and in sets although ``==`` is elementwise.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
from tdflow.dialect.types import FLOAT_DTYPES

from .tensor import Tensor, tensor

__all__ = ["OPERATORS", "install"]

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)
_INT_RANGES = {"i1": (0, 1), "i8": (-(2**7), 2**7 - 1), "i32": (-(2**31), 2**31 - 1),
               "i64": (-(2**63), 2**63 - 1)}
_functional: ModuleType | None = None


def _f() -> ModuleType:
    """:mod:`tdflow.runtime.functional`, imported on first use (it loads the standard ops)."""
    global _functional
    if _functional is None:
        from . import functional

        _functional = functional
    return _functional


def _is_scalar(v: Any) -> bool:
    return isinstance(v, _SCALARS)


def _scalar_like(value: Any, like: Tensor) -> Tensor | None:
    """``value`` as a 0-d tensor of ``like``'s type and device, or None when that type cannot
    hold it exactly (``2.5`` or ``2**70`` for an ``i64`` tensor).

    >>> _scalar_like(2, tensor([1.5])).dtype, _scalar_like(2.5, tensor([1])) is None
    ('f32', True)
    """
    dtype = like.dtype
    if dtype not in FLOAT_DTYPES:
        v = float(value) if isinstance(value, (float, np.floating)) else int(value)
        if isinstance(v, float):
            if not v.is_integer():
                return None
            v = int(v)
        low, high = _INT_RANGES.get(dtype, (None, None))
        if low is None or not low <= v <= high:
            return None
        value = bool(v) if dtype == "i1" else v
    else:
        value = float(value)  # tensor() of a big int (2**70) would try, and fail, an i64 first
    return tensor(value, dtype=dtype, device=like.device)


# -- arithmetic ----------------------------------------------------------------------------------
def _binary(name: str, fname: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``t OP other`` and the reflected ``scalar OP t``: ``functional.<fname>`` with the
    operands in Python's order (so ``2 - t`` is ``sub(2, t)``, ScalarRSub)."""

    def forward(self: Tensor, other: Any) -> Any:
        if isinstance(other, Tensor) or _is_scalar(other):
            return getattr(_f(), fname)(self, other)
        return NotImplemented

    def reflected(self: Tensor, other: Any) -> Any:
        if _is_scalar(other):  # tensor OP tensor never reaches the reflected form
            return getattr(_f(), fname)(other, self)
        return NotImplemented

    forward.__name__ = forward.__qualname__ = f"__{name}__"
    reflected.__name__ = reflected.__qualname__ = f"__r{name}__"
    return forward, reflected


def _pow(self: Tensor, other: Any, modulo: Any = None) -> Any:
    """``t ** u`` (broadcast_pow) and ``t ** 2.0`` (scalar_pow)."""
    if modulo is not None or not (isinstance(other, Tensor) or _is_scalar(other)):
        return NotImplemented
    return _f().pow(self, other)


def _rpow(self: Tensor, other: Any, modulo: Any = None) -> Any:
    """``2 ** t``: broadcast_pow of the base as a 0-d tensor of ``t``'s type."""
    if modulo is not None or not _is_scalar(other):
        return NotImplemented
    base = _scalar_like(other, self)
    if base is None:
        raise TypeError(f"{other!r} ** tensor: the base does not fit the exponent's element "
                        f"type {self.dtype}; cast the tensor first "
                        f"(functional.cast(t, dtype='f64'))")
    return _f().pow(base, self)


def _neg(self: Tensor) -> Any:
    return _f().negative(self)


def _pos(self: Tensor) -> Tensor:
    return self


# -- comparisons ---------------------------------------------------------------------------------
def _compare(name: str, fname: str) -> Callable[..., Any]:
    """``t OP other`` -> an i1 tensor. A scalar becomes a 0-d tensor of ``t``'s type; one that
    type cannot hold (``t_i64 < 2.5``) compares in f64, so the answer is numpy's, not that of
    a truncated scalar. ``2 < t`` is Python's ``t > 2``: no reflected methods are needed."""

    def method(self: Tensor, other: Any) -> Any:
        F = _f()
        if isinstance(other, Tensor):
            return getattr(F, fname)(self, other)
        if not _is_scalar(other):
            return NotImplemented
        scalar = _scalar_like(other, self)
        if scalar is None:
            return getattr(F, fname)(F.cast(self, dtype="f64"),
                                     tensor(float(other), dtype="f64", device=self.device))
        return getattr(F, fname)(self, scalar)

    method.__name__ = method.__qualname__ = f"__{name}__"
    return method


# -- matmul ----------------------------------------------------------------------------------------
def _matmul(self: Tensor, other: Any) -> Any:
    """``a @ b``: matmul for 2-D operands, batch_matmul for equal ranks >= 3; a 1-D operand is
    a row (left) or column (right) vector whose unit dim is dropped again, as in numpy."""
    if not isinstance(other, Tensor):
        return NotImplemented
    F = _f()
    ra, rb = self.ndim, other.ndim
    if ra == rb == 2:
        return F.matmul(self, other)
    if ra == rb and ra >= 3:
        return F.batch_matmul(self, other)
    if min(ra, rb) >= 1 and max(ra, rb) <= 2:  # at least one vector
        a = F.reshape(self, [1, self.shape[0]]) if ra == 1 else self
        b = F.reshape(other, [other.shape[0], 1]) if rb == 1 else other
        out = F.matmul(a, b)
        shape = [n for n, keep in ((out.shape[0], ra == 2), (out.shape[1], rb == 2)) if keep]
        return F.reshape(out, shape)
    raise TypeError(f"tensor @ tensor needs 1-D or 2-D operands (matmul) or batches of equal "
                    f"rank >= 3 (batch_matmul), got shapes {list(self.shape)} and "
                    f"{list(other.shape)}; reshape them first")


# -- numpy -------------------------------------------------------------------------------------------
# The binary ufuncs numpy calls for `numpy_scalar OP tensor` (numpy's scalars do not return
# NotImplemented to Python, they call the ufunc): each to our operator, with the operands'
# order as given, so np.float32(2) - t is t.__rsub__(2.0) and np.float32(2) < t is t > 2.0.
_UFUNC_OPERATORS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
                    np.power: "pow", np.equal: "eq", np.not_equal: "ne", np.less: "lt",
                    np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge"}
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _array_ufunc(self: Tensor, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """numpy's hook for ufuncs given a tensor. A tensor next to a numpy array is refused
    (``NotImplemented``): ``array + t`` and ``t + array`` raise ``TypeError`` instead of
    silently leaving tdflow. A numpy scalar with a tensor (``np.float32(2) * t``) is our
    operator with a Python number. Anything else (``np.exp(t)``, ``np.add.reduce(t)``) runs on
    the values and returns an array, as it did before tensors had operators."""
    if any(isinstance(v, np.ndarray) for v in inputs):
        return NotImplemented
    name = _UFUNC_OPERATORS.get(ufunc)
    if (name is not None and method == "__call__" and not kwargs and len(inputs) == 2
            and any(isinstance(v, np.generic) for v in inputs)):
        a, b = (v.item() if isinstance(v, np.generic) else v for v in inputs)
        if isinstance(a, Tensor):
            return OPERATORS[f"__{name}__"](a, b)
        reflected = f"__{_MIRROR[name]}__" if name in _MIRROR else f"__r{name}__"
        return OPERATORS[reflected](b, a)
    args = [v.numpy() if isinstance(v, Tensor) else v for v in inputs]
    if "out" in kwargs:
        kwargs["out"] = tuple(v.numpy() if isinstance(v, Tensor) else v for v in kwargs["out"])
    return getattr(ufunc, method)(*args, **kwargs)


# -- installation ------------------------------------------------------------------------------------
OPERATORS: dict[str, Any] = {}
for _name, _fname in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div")):
    OPERATORS[f"__{_name}__"], OPERATORS[f"__r{_name}__"] = _binary(_name, _fname)
for _name, _fname in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                      ("ge", "ge")):
    OPERATORS[f"__{_name}__"] = _compare(_name, _fname)
OPERATORS.update({
    "__pow__": _pow, "__rpow__": _rpow, "__neg__": _neg, "__pos__": _pos,
    "__matmul__": _matmul,
    "__hash__": object.__hash__,  # defining __eq__ would otherwise leave Tensor unhashable
    "__array_ufunc__": _array_ufunc,
})


def install(cls: type = Tensor) -> None:
    """Set :data:`OPERATORS` on ``cls`` (idempotent; importing this module does it)."""
    for name, value in OPERATORS.items():
        setattr(cls, name, value)


install()
