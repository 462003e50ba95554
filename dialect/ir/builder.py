"""``Builder``: create operations at an insertion point; the generated per-op builder extends it.

>>> from tdflow.dialect.types import TensorType
>>> t = TensorType((8, 4), "f32")
>>> b = Builder()
>>> with b.func("f", [t], [t], arg_names=["x"]) as f:
...     y = b.create("tdflow.relu", [f.args[0]], [t]).result
...     _ = b.ret(y)
>>> print(b.module, end="")
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from tdflow.dialect.ir.core import (
    RETURN,
    Block,
    FuncOp,
    Location,
    Module,
    Operation,
    Type,
    Value,
)

__all__ = ["Builder"]


class Builder:
    """Inserts new operations into a block, at the end or before a given operation.

    ``Builder(module=None)``: a new empty :class:`Module` when none is given. The insertion point
    is ``(block, before)``; ``before=None`` means the end of the block. ``loc`` set on the builder
    is used for operations created without one.
    """

    __slots__ = ("module", "block", "before", "loc", "_func")

    def __init__(self, module: Module | None = None, loc: Location | None = None) -> None:
        self.module = Module() if module is None else module
        self.block: Block | None = None
        self.before: Operation | None = None
        self.loc = loc
        self._func: FuncOp | None = None

    # -- insertion point -----------------------------------------------------------------
    def set_insertion_point_to_end(self, block: Block) -> None:
        self.block, self.before = block, None

    def set_insertion_point_before(self, op: Operation) -> None:
        if op.parent is None:
            raise ValueError(f"{op!r} is not in a block")
        self.block, self.before = op.parent, op

    def set_insertion_point_after(self, op: Operation) -> None:
        if op.parent is None:
            raise ValueError(f"{op!r} is not in a block")
        self.block, self.before = op.parent, op.next_op

    @contextmanager
    def at(self, block: Block, before: Operation | None = None) -> Iterator[Builder]:
        """Temporarily move the insertion point (restored afterwards)."""
        saved = (self.block, self.before)
        self.block, self.before = block, before
        try:
            yield self
        finally:
            self.block, self.before = saved

    # -- creating --------------------------------------------------------------------------
    def insert(self, op: Operation) -> Operation:
        """Insert a detached ``op`` at the insertion point."""
        if self.block is None:
            raise ValueError("the builder has no insertion point; use `with builder.func(...)` "
                             "or set_insertion_point_to_end(block)")
        return self.block._insert_before(self.before, op)

    def create(self, name: str, operands: Sequence[Value] = (), result_types: Sequence[Type] = (),
               attributes: dict[str, Any] | None = None,
               loc: Location | None = None) -> Operation:
        """Create ``name`` with the given operands, result types and attributes; insert it."""
        return self.insert(Operation(name, operands, result_types,
                                     dict(attributes) if attributes else {},
                                     loc if loc is not None else self.loc))

    def ret(self, *values: Value, loc: Location | None = None) -> Operation:
        """``return`` the values. Inside :meth:`func` with ``result_types=None``, the
        function's result types are taken from the values."""
        f = self._func
        if f is not None and f.result_types is None:  # type: ignore[comparison-overlap]
            f.result_types = [v.type for v in values]
        return self.create(RETURN, values, (), None, loc)

    @contextmanager
    def func(self, name: str, arg_types: Sequence[Type], result_types: Sequence[Type] | None = None,
             arg_names: Sequence[str | None] = (), loc: Location | None = None
             ) -> Iterator[FuncOp]:
        """Add ``func.func @name`` to the module and build its body inside the ``with``.

        ``result_types=None`` takes them from the :meth:`ret` call.
        """
        f = FuncOp(name, arg_types, result_types or (), arg_names,
                   loc if loc is not None else self.loc)
        if result_types is None:
            f.result_types = None  # type: ignore[assignment]
        self.module.add(f)
        saved = (self.block, self.before, self._func)
        self.block, self.before, self._func = f.body, None, f
        try:
            yield f
        finally:
            if f.result_types is None:
                f.result_types = []
            self.block, self.before, self._func = saved
