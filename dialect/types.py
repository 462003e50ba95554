"""Tensor types: ``tensor<4x?x8xf32>`` (ranked, ``?`` = unknown dim) and ``tensor<*xf32>``.

>>> t = TensorType.parse("tensor<4x?x8xf32>")
>>> t.shape, t.dtype, str(t)
((4, None, 8), 'f32', 'tensor<4x?x8xf32>')
>>> TensorType.parse("tensor<*xi64>").rank is None
True
"""

from __future__ import annotations

from typing import Any

from tdflow.core.valueclass import value_class

# The element types tdflow computes in come from one table (dialect/element_types.py).
from .element_types import DTYPE_NAMES, INT_TYPES
from .element_types import FLOAT_DTYPES as _FLOATS

FLOAT_DTYPES = frozenset(_FLOATS)
INT_DTYPES = frozenset(INT_TYPES)
#: Element types with a sign (``si64``, as OneFlow prints its tensors), which tdflow has no
#: kernels of its own for. The verifier treats them as MLIR does (``si64`` is not ``i64``: an
#: op declaring ``I64`` refuses it); kernels compute them in the numpy dtype of the same width
#: and sign, and printing keeps the spelling.
EXTRA_ELEMENT_TYPES: tuple[str, ...] = ("si8", "si16", "si32", "si64")
#: Every element type a tensor type may have.
ELEMENT_TYPES: tuple[str, ...] = DTYPE_NAMES + EXTRA_ELEMENT_TYPES
_DTYPE_SET = frozenset(ELEMENT_TYPES)

# `DTYPES` (MLIR spelling -> numpy dtype; `i1` is a boolean, bf16 is computed in f32 on the CPU)
# is built on first access (PEP 562), so that parsing and verifying IR never imports numpy:
# `tdflow verify` starts in a fraction of the time.
_NUMPY_NAMES = {"f16": "float16", "bf16": "float32", "f32": "float32", "f64": "float64",
                "i1": "bool", "si8": "int8", "si16": "int16", "si32": "int32", "si64": "int64",
                **{n: t.numpy for n, t in INT_TYPES.items()}}


def __getattr__(name: str) -> Any:
    if name in ("DTYPES", "_FROM_NUMPY"):
        import numpy as np

        dtypes = {k: np.dtype(v) for k, v in _NUMPY_NAMES.items()}
        globals()["DTYPES"] = dtypes
        # numpy -> MLIR is signless (int64 -> i64), so the signed spellings are left out.
        globals()["_FROM_NUMPY"] = {v: k for k, v in dtypes.items()
                                    if k != "bf16" and k[0] != "s"}
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dtype_from_numpy(dt) -> str:
    """MLIR spelling of a numpy dtype (``float32`` -> ``f32``); ``ValueError`` if unsupported."""
    import numpy as np

    from_numpy = globals().get("_FROM_NUMPY") or __getattr__("_FROM_NUMPY")
    try:
        return from_numpy[np.dtype(dt)]
    except KeyError:
        raise ValueError(f"unsupported numpy dtype {np.dtype(dt)}; supported: "
                         f"{', '.join(sorted(from_numpy.values()))}") from None


@value_class(frozen=True, slots=True)
class TensorType:
    """A tensor type. ``shape`` is ``None`` when unranked; a dim is ``None`` when dynamic."""

    shape: tuple[int | None, ...] | None
    dtype: str

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)

    @property
    def numel(self) -> int | None:
        if not self.is_static:
            return None
        n = 1
        for d in self.shape:  # type: ignore[union-attr]
            n *= d  # type: ignore[operator]
        return n

    @property
    def np_dtype(self):
        """The numpy dtype (imports numpy on first use)."""
        dtypes = globals().get("DTYPES") or __getattr__("DTYPES")
        return dtypes[self.dtype]

    def __str__(self) -> str:
        if self.shape is None:
            return f"tensor<*x{self.dtype}>"
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"

    def refines(self, other: TensorType) -> bool:
        """True when ``self`` is compatible with ``other`` and at least as precise.

        >>> TensorType((4, 8), "f32").refines(TensorType((4, None), "f32"))
        True
        """
        if self.dtype != other.dtype:
            return False
        if other.shape is None:
            return True
        if self.shape is None or len(self.shape) != len(other.shape):
            return False
        return all(o is None or s == o for s, o in zip(self.shape, other.shape))

    def compatible(self, other: TensorType) -> bool:
        """True when some static type refines both (``?`` and ``*`` match anything)."""
        if self.dtype != other.dtype:
            return False
        if self.shape is None or other.shape is None:
            return True
        if len(self.shape) != len(other.shape):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.shape, other.shape))

    @classmethod
    def parse(cls, text: str) -> TensorType:
        """Parse ``tensor<...>`` text; raises ``ValueError`` with what was expected."""
        s = text.strip()
        if not (s.startswith("tensor<") and s.endswith(">")):
            raise ValueError(f"expected a tensor type like 'tensor<4x8xf32>', got {text!r}")
        body = s[7:-1].replace(" ", "")
        parts = body.split("x")
        dtype = parts[-1]
        if dtype not in _DTYPE_SET:
            raise ValueError(f"unknown element type {dtype!r} in {text!r}; expected one of "
                             f"{', '.join(ELEMENT_TYPES)}")
        dims = parts[:-1]
        if dims == ["*"]:
            return cls(None, dtype)
        shape: list[int | None] = []
        for d in dims:
            if d == "?":
                shape.append(None)
            elif d.isdigit():
                shape.append(int(d))
            else:
                raise ValueError(f"bad dimension {d!r} in {text!r}; expected an integer or '?'")
        return cls(tuple(shape), dtype)


@value_class(frozen=True, slots=True)
class FunctionType:
    """A function type ``(T, T) -> T``; used by ``func.func`` and as a type attribute.

    >>> str(FunctionType((TensorType((4,), "f32"),), ()))
    '(tensor<4xf32>) -> ()'
    """

    inputs: tuple
    results: tuple

    def __str__(self) -> str:
        ins = ", ".join(str(t) for t in self.inputs)
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            outs = str(self.results[0])
        else:
            outs = "(" + ", ".join(str(t) for t in self.results) + ")"
        return f"({ins}) -> {outs}"
