"""Python's operators on :class:`~tdflow.runtime.tensor.Tensor`, and its methods that run ops
(``t.sum()``, ``t.backward()``), installed when imported.

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

``t[...]`` is numpy's basic indexing (ints, slices with positive steps, ``...``, ``None``) by
``slice`` and ``reshape``, so it is differentiable; tensor, array and list indices (advanced
indexing) are a ``TypeError`` until tdflow has a gather op.

>>> tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])[1, ::2].numpy()
array([4., 6.], dtype=float32)

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
from tdflow.dialect.element_types import INT_TYPES
from tdflow.dialect.types import FLOAT_DTYPES

from .tensor import Tensor, tensor

__all__ = ["OPERATORS", "install"]

_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)
_INT_RANGES = {"i1": (0, 1), **{n: t.range for n, t in INT_TYPES.items()}}
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


# -- indexing --------------------------------------------------------------------------------------
_ADVANCED = (Tensor, np.ndarray, list, tuple, bool, np.bool_)


def _index_plan(shape: tuple[int, ...], index: Any) -> tuple[list[int], list[int], list[int],
                                                             list[int]]:
    """``(start, stop, step, result shape)`` of basic index ``index`` into ``shape``: the
    slice attributes (normalised: non-negative, clamped) and the shape after dropping the
    int-indexed dims and adding the ``None`` ones.

    >>> _index_plan((4, 5), (1, slice(None, None, 2)))
    ([1, 0], [2, 5], [1, 2], [3])
    >>> _index_plan((4, 5), (None, Ellipsis, -1))
    ([0, 4], [4, 5], [1, 1], [1, 4])
    """
    items = index if type(index) is tuple else (index,)
    for it in items:
        if isinstance(it, _ADVANCED) or not (it is None or it is Ellipsis or
                                             isinstance(it, (slice, int, np.integer))):
            if isinstance(it, _ADVANCED):
                raise TypeError(f"advanced indexing (by a {type(it).__name__}) needs gather, not "
                                f"available yet; index with ints, slices, ... and None")
            raise TypeError(f"tensor indices must be ints, slices, ... or None, not "
                            f"{type(it).__name__}")
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for tensor: tensor is {len(shape)}-dimensional, but "
                         f"{used} were indexed")
    if Ellipsis not in items:
        items = (*items, Ellipsis)
    start: list[int] = []
    stop: list[int] = []
    step: list[int] = []
    out: list[int] = []
    for it in items:
        if it is None:
            out.append(1)
            continue
        if it is Ellipsis:
            dims = [(0, n, 1) for n in shape[len(start):len(start) + len(shape) - used]]
            out.extend(n for _, n, _ in dims)
        elif isinstance(it, slice):
            axis, size = len(start), shape[len(start)]
            k = 1 if it.step is None else int(it.step)
            if k == 0:
                raise ValueError("slice step cannot be zero")
            if k < 0:
                raise IndexError(f"slice step {k} on axis {axis}: only positive steps are "
                                 f"supported (as OneFlow's slice)")
            a, b, _ = it.indices(size)
            dims = [(a, max(a, b), k)]
            out.append(len(range(a, b, k)))
        else:  # an int: one element of the dim, which then goes
            axis, size, i = len(start), shape[len(start)], int(it)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
            dims = [(i % size, i % size + 1, 1)]
        for a, b, k in dims:
            start.append(a)
            stop.append(b)
            step.append(k)
    return start, stop, step, out


def _getitem(self: Tensor, index: Any) -> Any:
    """``t[...]`` with numpy's basic indexing: ints, slices with positive steps, ``...`` and
    ``None``; a slice then, where dims go or come, a reshape, so gradients flow through both.
    Advanced indexing (tensor, array, list or bool indices) is a ``TypeError``."""
    shape = tuple(self.shape)
    start, stop, step, out = _index_plan(shape, index)
    F = _f()
    sliced = any((a, b, k) != (0, n, 1) for a, b, k, n in zip(start, stop, step, shape))
    y = F.slice(self, start=start, stop=stop, step=step) if sliced else self
    if not sliced or tuple(out) != tuple(y.shape):  # t[...] too: a new tensor, as numpy's view
        y = F.reshape(y, out)
    return y


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


def _iter(self: Tensor):
    """Rows along the first dim, as numpy iterates (``t[i]`` each, so autograd records it);
    a 0-d tensor is not iterable."""
    if not self._buf.ndim:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self._buf.shape[0]))


# -- methods PyTorch users expect (each a functional call, so autograd records it) ----------
def _reduction(fname: str):
    def method(self: Tensor, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
               keepdims: bool | None = None, **numpy_only: Any) -> Tensor:
        # numpy's np.sum(t)/np.mean(t) call t.sum(axis=..., dtype=..., out=...): its names
        # are accepted; dtype/out exist only in numpy, so those calls read the values.
        if any(v is not None for v in numpy_only.values()):
            return getattr(np, fname)(self.numpy(), axis=axis if dim is None else dim,
                                      keepdims=bool(keepdims or keepdim), **numpy_only)
        dim = axis if dim is None else dim
        keep = keepdim if keepdims is None else keepdims
        return getattr(_f(), fname)(self, [dim] if isinstance(dim, int) else dim, keep)

    method.__name__ = fname
    method.__doc__ = f"``t.{fname}(dim=None, keepdim=False)`` (numpy's ``axis``/``keepdims`` too)."
    return method


_sum, _mean = _reduction("sum"), _reduction("mean")


def _reshape(self: Tensor, *shape: Any) -> Tensor:
    """``t.reshape(2, -1)`` or ``t.reshape((2, -1))``."""
    if len(shape) == 1 and isinstance(shape[0], tuple | list):
        shape = tuple(shape[0])
    return _f().reshape(self, shape=[int(d) for d in shape])


def _permute(self: Tensor, *dims: Any) -> Tensor:
    """``t.permute(1, 0, 2)``: the dims in the new order."""
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        dims = tuple(dims[0])
    return _f().transpose(self, perm=[int(d) for d in dims])


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """``t.transpose(dim0, dim1)``: swap two dims (PyTorch's meaning)."""
    rank = self._buf.ndim
    perm = list(range(rank))
    a, b = dim0 % rank, dim1 % rank
    perm[a], perm[b] = perm[b], perm[a]
    return _f().transpose(self, perm=perm)


def _T(self: Tensor) -> Tensor:  # noqa: N802 - numpy's and PyTorch's name
    """The dims reversed (a transpose op, so gradients flow through it)."""
    return _f().transpose(self, perm=list(range(self._buf.ndim))[::-1])


def _unary_method(fname: str):
    def method(self: Tensor) -> Tensor:
        return getattr(_f(), fname)(self)

    method.__name__ = fname
    method.__doc__ = f"``t.{fname}()``: ``tdflow.functional.{fname}(t)``."
    return method


def _backward(self: Tensor, grad: Tensor | None = None, retain_graph: bool = False) -> None:
    """Accumulate this tensor's gradient into the ``.grad`` of the leaves it was computed
    from (``grad`` defaults to one for a one-element tensor); the graph is freed after
    unless ``retain_graph``.

    >>> x = tensor([3.0], requires_grad=True)
    >>> (x * x).backward()
    >>> x.grad.numpy().tolist()
    [6.0]
    """
    from .autograd import backward  # imported on first use, as the functional API is

    backward(self, grad, retain_graph)


# -- installation ------------------------------------------------------------------------------------
OPERATORS: dict[str, Any] = {}
for _name, _fname in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div")):
    OPERATORS[f"__{_name}__"], OPERATORS[f"__r{_name}__"] = _binary(_name, _fname)
for _name, _fname in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"),
                      ("ge", "ge")):
    OPERATORS[f"__{_name}__"] = _compare(_name, _fname)
OPERATORS.update({
    "__pow__": _pow, "__rpow__": _rpow, "__neg__": _neg, "__pos__": _pos,
    "__matmul__": _matmul, "__getitem__": _getitem, "__iter__": _iter,
    "__hash__": object.__hash__,  # defining __eq__ would otherwise leave Tensor unhashable
    "__array_ufunc__": _array_ufunc,
    "sum": _sum, "mean": _mean, "reshape": _reshape, "permute": _permute,
    "transpose": _transpose, "T": property(_T), "matmul": lambda self, other: self @ other,
    "backward": _backward,
})
for _fname in ("exp", "log", "sqrt", "tanh", "sigmoid", "relu", "square"):
    OPERATORS[_fname] = _unary_method(_fname)


def install(cls: type = Tensor) -> None:
    """Set :data:`OPERATORS` on ``cls`` (idempotent; importing this module does it)."""
    for name, value in OPERATORS.items():
        setattr(cls, name, value)


install()
