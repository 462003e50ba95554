"""``Rewriter``: the one way passes change IR (use-lists and block links stay consistent)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tdflow.dialect.ir.core import Block, Operation, Value

__all__ = ["Rewriter"]


class Rewriter:
    """The one way passes change IR: keeps use-lists and block links consistent.

    >>> from tdflow.dialect.ir.core import RETURN, FuncOp, Operation
    >>> from tdflow.dialect.types import TensorType
    >>> t = TensorType((4,), "f32")
    >>> f = FuncOp("f", [t], [t]); x, = f.args
    >>> a = f.body.append(Operation("tdflow.relu", [x], [t]))
    >>> b = f.body.append(Operation("tdflow.relu", [a.result], [t]))
    >>> r = f.body.append(Operation(RETURN, [b.result]))
    >>> rw = Rewriter()
    >>> rw.replace_op(b, [a.result])   # relu(relu(x)) -> relu(x)
    >>> [op.name for op in f.body], r.operands[0] is a.result
    (['tdflow.relu', 'func.return'], True)
    """

    __slots__ = ("listener",)

    def __init__(self, listener: Any = None) -> None:
        #: Optional object with ``notify_erased(op)`` / ``notify_inserted(op)`` /
        #: ``notify_changed(op)`` methods (a worklist driver uses it).
        self.listener = listener

    def replace_all_uses(self, old: Value, new: Value) -> None:
        """Make every user of ``old`` use ``new`` instead."""
        if old is new:
            return
        users = old.users
        listener = self.listener
        for op, n in list(users.items()):
            op.operands = tuple([new if v is old else v for v in op.operands])
            new.users[op] = new.users.get(op, 0) + n
            if listener is not None:
                listener.notify_changed(op)
        users.clear()

    def replace_uses_where(self, old: Value, new: Value, pred) -> None:
        """Replace the uses of ``old`` by ``new`` in the ops for which ``pred(op)`` is true."""
        for op in list(old.users):
            if pred(op):
                for i, v in enumerate(op.operands):
                    if v is old:
                        op.set_operand(i, new)
                if self.listener is not None:
                    self.listener.notify_changed(op)

    def replace_op(self, op: Operation, new_values: Sequence[Value]) -> None:
        """Replace each result of ``op`` by the matching new value, then erase ``op``."""
        if len(new_values) != len(op.results):
            raise ValueError(f"'{op.name}' has {len(op.results)} results; "
                             f"got {len(new_values)} replacement values")
        for r, v in zip(op.results, new_values):
            self.replace_all_uses(r, v)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        """Remove ``op`` from its block. Its results must have no uses left."""
        for r in op.results:
            if r.users:
                users = ", ".join(f"'{u.name}' at {u.loc}" for u in r.users)
                raise ValueError(f"cannot erase '{op.name}' at {op.loc}: result #{r.index} "
                                 f"is still used by {users}")
        op.drop_operands()
        if op.parent is not None:
            op.parent._unlink(op)
        if self.listener is not None:
            self.listener.notify_erased(op)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        """Insert detached ``op`` just before ``anchor`` (in ``anchor``'s block)."""
        if anchor.parent is None:
            raise ValueError(f"{anchor!r} is not in a block")
        anchor.parent._insert_before(anchor, op)
        if self.listener is not None:
            self.listener.notify_inserted(op)
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        """Insert detached ``op`` just after ``anchor``."""
        block = anchor.parent
        if block is None:
            raise ValueError(f"{anchor!r} is not in a block")
        block._insert_before(anchor._next, op)
        if self.listener is not None:
            self.listener.notify_inserted(op)
        return op

    def append(self, block: Block, op: Operation) -> Operation:
        """Insert detached ``op`` at the end of ``block``."""
        block.append(op)
        if self.listener is not None:
            self.listener.notify_inserted(op)
        return op

    def move_before(self, anchor: Operation, op: Operation) -> None:
        """Move ``op`` (already in a block) to just before ``anchor``."""
        if op.parent is not None:
            op.parent._unlink(op)
        self.insert_before(anchor, op)

    def set_operand(self, op: Operation, index: int, value: Value) -> None:
        op.set_operand(index, value)
        if self.listener is not None:
            self.listener.notify_changed(op)
