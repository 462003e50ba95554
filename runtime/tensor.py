"""``Tensor``: a typed buffer on a device, and ``tensor(...)`` to make one.

>>> t = tensor([[1.0, 2.0], [3.0, 4.0]])
>>> t.shape, t.dtype, t.device
((2, 2), 'f32', 'cpu')
>>> t
tensor([[1., 2.],
        [3., 4.]], dtype=f32)
>>> tensor(3).item(), tensor([True]).dtype
(3, 'i1')

``dtype`` is the MLIR spelling (``f16 bf16 f32 f64 i1 i8 i16 i32 i64 ui8 ui16 ui32 ui64``); on the CPU the buffer is a
numpy array (``bf16`` is stored as ``f32``, its values rounded to bf16 by ``tensor()``). ``Tensor._wrap(ndarray)`` is the fast path used by
kernels and the functional API: no copy, no checks, a handful of slot stores.

Fields an engine or autograd may use: ``requires_grad``, ``grad``, ``grad_fn``, ``_sync`` (a
callable run before the buffer is read from outside, e.g. the engine's wait on the op that
writes it; ``None`` when the buffer is ready) and ``_ctx`` (free for the owner of the tensor).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tdflow.dialect.types import DTYPE_NAMES, DTYPES, FLOAT_DTYPES

_FROM_NUMPY: dict[np.dtype, str] = {DTYPES[k]: k for k in DTYPE_NAMES if k != "bf16"}
_new = object.__new__


def _mlir_dtype(dtype: Any) -> str:
    """``"f32"``, ``np.float32``, ``"float32"`` or ``float`` -> ``"f32"``."""
    # Tensors hold the element types tdflow computes in; the IR's signed spellings (si64) have
    # no kernels.
    if isinstance(dtype, str) and dtype in DTYPE_NAMES:
        return dtype
    if dtype is float:
        return "f32"
    if dtype is int:
        return "i64"
    if dtype is bool:
        return "i1"
    try:
        name = _FROM_NUMPY[np.dtype(dtype)]
        if name in DTYPE_NAMES:
            return name
    except (KeyError, TypeError):
        pass
    name = str(np.dtype(dtype)) if isinstance(dtype, np.dtype) else repr(dtype)
    raise TypeError(f"unsupported dtype {name}; expected one of {', '.join(DTYPE_NAMES)} (numpy: "
                    f"float16, float32, float64, bool, int8...int64, uint8...uint64)") from None


class Tensor:
    """A tensor: ``shape``, ``dtype`` (MLIR spelling), ``device`` and a buffer."""

    __slots__ = ("_buf", "dtype", "device", "requires_grad", "grad", "grad_fn", "_sync", "_ctx",
                 "_version", "__weakref__")

    _buf: np.ndarray
    dtype: str
    device: str
    requires_grad: bool
    grad: Tensor | None
    grad_fn: Any
    _sync: Any
    _ctx: Any
    _version: int  # bumped by every in-place write (sgd_update): autograd checks saved inputs

    def __init__(self, buffer: np.ndarray, dtype: str | None = None, device: str = "cpu",
                 requires_grad: bool = False) -> None:
        self._buf = buffer
        self.dtype = dtype if dtype is not None else _FROM_NUMPY[buffer.dtype]
        self.device = device
        self.requires_grad = requires_grad
        self.grad = None
        self.grad_fn = None
        self._sync = None
        self._ctx = None
        self._version = 0

    @classmethod
    def _wrap(cls, buffer: np.ndarray, dtype: str | None = None, device: str = "cpu") -> Tensor:
        """Wrap an array without copying or checking (the hot path)."""
        t = _new(cls)
        t._buf = buffer
        t.dtype = dtype or _FROM_NUMPY[buffer.dtype]
        t.device = device
        t.requires_grad = False
        t.grad = None
        t.grad_fn = None
        t._sync = None
        t._ctx = None
        t._version = 0
        return t

    @classmethod
    def from_numpy(cls, array: np.ndarray) -> Tensor:
        """Share ``array``'s memory (no copy), like ``torch.from_numpy``.

        >>> Tensor.from_numpy(np.zeros(2, np.float32)).dtype
        'f32'
        """
        _check_array(array, "from_numpy()")
        if not array.dtype.isnative:
            raise TypeError(f"from_numpy(): argument 'array' has non-native byte order "
                            f"({array.dtype.str}); kernels read native order, so sharing it is "
                            f"impossible: use tdflow.tensor(array), which converts (a copy)")
        return cls._wrap(array, _mlir_dtype(array.dtype))

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape

    @property
    def ndim(self) -> int:
        return self._buf.ndim

    def numel(self) -> int:
        return self._buf.size

    @property
    def size(self) -> int:
        return self._buf.size

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def buffer(self) -> np.ndarray:
        """The device buffer, without waiting for pending writes (use ``numpy()`` to read)."""
        return self._buf

    def __len__(self) -> int:
        if not self._buf.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self._buf.shape[0]

    # -- reading ------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a numpy array (shares memory on the CPU); waits for pending writes."""
        if self._sync is not None:
            self._sync()
        if self.device != "cpu":
            from tdflow.runtime.backends import get_backend

            return get_backend(self.device).to_numpy(self._buf)
        return self._buf

    def to(self, device: str) -> Tensor:
        """This tensor on ``device`` (``"cpu"``, ``"cudasim"``, ``"cuda"``): itself when it is
        there already, else a copy (not recorded for autograd).

        >>> tensor([1.0, 2.0]).to("cpu").device
        'cpu'
        """
        if device == self.device:
            return self
        return tensor(self, device=device)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError(f"converting a {self.dtype} tensor to {np.dtype(dtype)} needs a copy")
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.numpy().__dlpack_device__()

    def item(self) -> bool | int | float:
        a = self.numpy()
        if a.size != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape {a.shape}")
        return a.reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def detach(self) -> Tensor:
        """The same buffer without autograd history (pending writes still tracked)."""
        t = Tensor._wrap(self._buf, self.dtype, self.device)
        t._sync = self._sync
        return t

    # ``backward()`` runs ops, so runtime/tensor_ops.py installs it: this module sits below
    # the eager op paths and the tape.
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (a floating-point leaf only); returns the tensor."""
        if requires_grad and self.dtype not in FLOAT_DTYPES:
            raise TypeError(f"only floating-point tensors can require gradients, not "
                            f"{self.dtype}")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("requires_grad_(False) on a computed tensor; use detach()")
        self.requires_grad = requires_grad
        return self

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extra = f", dtype={self.dtype}"
        if self.device != "cpu":
            extra += f", device={self.device!r}"
        if self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __bool__(self) -> bool:
        return bool(self.numpy())


def round_to_bf16(a: np.ndarray) -> np.ndarray:
    """Round f32 values to the nearest bfloat16 (ties to even), kept in f32 storage.

    >>> round_to_bf16(np.array([1.0 + 2**-9, 3.14159], np.float32)).tolist()
    [1.0, 3.140625]
    """
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    nan = np.isnan(a)
    out = rounded.view(np.float32).copy()
    out[nan] = np.nan
    return out.reshape(a.shape)


def _check_array(array: Any, where: str) -> None:
    """Reject what a plain buffer cannot represent: an ndarray subclass with extra meaning."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{where}: argument 'array' must be a numpy array, not "
                        f"{type(array).__name__}")
    if isinstance(array, np.ma.MaskedArray):
        # its mask would be dropped silently, and the masked slots hold arbitrary values
        raise TypeError(f"{where}: masked arrays are not supported (the mask would be lost); "
                        f"fill the masked values first, e.g. array.filled(0)")


def _from_python(data: Any) -> np.ndarray:
    """``np.array(data)`` for nested lists and numbers, with errors that say what is wrong."""
    if data is None:
        raise TypeError("tensor(): argument 'data' must be a Tensor, numpy array, nested list "
                        "or number, not None")
    try:
        array = np.array(data)
    except (ValueError, TypeError) as e:
        if "inhomogeneous" in str(e):  # numpy's word for a ragged nested list
            raise ValueError(f"tensor(): argument 'data' is a ragged nested list: every list at "
                             f"one depth must have the same length ({e})") from None
        raise TypeError(f"tensor(): cannot make a tensor from {type(data).__name__}: {e}") from None
    if array.dtype == object:
        for v in array.reshape(-1):
            if isinstance(v, int) and not isinstance(v, bool):
                if not -(2**63) <= v < 2**63:
                    raise ValueError(f"tensor(): the integer {v} in argument 'data' does not "
                                     f"fit i64 [{-(2**63)}, {2**63 - 1}]")
            elif not isinstance(v, (bool, float, int)):
                raise TypeError(f"tensor(): argument 'data' holds a {type(v).__name__} "
                                f"({v!r:.40}); expected numbers or bools")
        raise TypeError(f"tensor(): cannot make a tensor from {type(data).__name__} "
                        f"(numpy dtype object)")
    return array


def tensor(data: Any, dtype: Any = None, device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """Make a tensor from a Tensor, numpy array, nested lists or a Python number (copies).

    Python floats default to ``f32``, ints to ``i64``, bools to ``i1``; numpy arrays keep their
    dtype. ``requires_grad`` needs a floating dtype.

    >>> tensor([1, 2], dtype="f64")
    tensor([1., 2.], dtype=f64)
    """
    target = _mlir_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        array = np.array(data.numpy(), copy=True)
        target = target or data.dtype
    elif isinstance(data, np.ndarray | np.generic):
        if isinstance(data, np.ndarray):
            _check_array(data, "tensor()")
        array = np.array(data, copy=True)
        if not array.dtype.isnative:  # '>f4' on a little-endian machine: it is copied anyway
            array = array.astype(array.dtype.newbyteorder("="))
        if target is None:
            target = _mlir_dtype(array.dtype)
    else:
        array = _from_python(data)
        if target is None:
            if array.dtype.kind == "f":
                target = "f32"
            elif array.dtype.kind in "iu":
                target = "i64"
            elif array.dtype.kind == "b":
                target = "i1"
            else:
                raise TypeError(f"cannot make a tensor from {type(data).__name__} "
                                f"(numpy dtype {array.dtype})")
    np_dtype = DTYPES[target]
    if array.dtype != np_dtype:
        array = array.astype(np_dtype)
    if target == "bf16":
        array = round_to_bf16(array)
    if requires_grad and target not in FLOAT_DTYPES:
        raise TypeError(f"only floating-point tensors can require gradients, not {target}")
    if device != "cpu":
        from tdflow.runtime.backends import get_backend

        buf = get_backend(device).from_numpy(array)
        return Tensor(buf, target, device, requires_grad)
    t = Tensor._wrap(array, target, device)
    t.requires_grad = requires_grad
    return t
