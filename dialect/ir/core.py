"""The IR data model: ``Module`` → ``FuncOp`` → ``Block`` → ``Operation`` → ``Value``.

A program is a :class:`Module` holding ``func.func`` functions. Each :class:`FuncOp` has one
:class:`Block` whose arguments are the function's arguments and whose last operation is the
``func.return`` terminator. Operations are MLIR's generic operations: a name, operand
:class:`Value`\\ s, result values, an attribute dict (values from :mod:`.attrs`) and a
:class:`Location`.

Mutation goes through :class:`~tdflow.dialect.ir.rewriter.Rewriter` (replace uses, erase,
insert) so that use-lists stay right; reading is plain attribute access. Structural equality is
:func:`~tdflow.dialect.ir.equality.module_equal` (also ``module == other``).

>>> from tdflow.dialect.types import TensorType
>>> t = TensorType((4,), "f32")
>>> f = FuncOp("f", [t], [t])
>>> x, = f.body.args
>>> relu = f.body.append(Operation("tdflow.relu", [x], [t]))
>>> ret = f.body.append(Operation("func.return", [relu.results[0]], []))
>>> [op.name for op in f.body], x.num_uses
(['tdflow.relu', 'func.return'], 1)

Design notes (why, not what):

- A block's operations form a doubly-linked list, so insertion and erasure are O(1) and a pass
  that rewrites a 100k-op function stays linear. ``block.ops`` is a *tuple snapshot*, safe to
  iterate while rewriting; ``for op in block`` walks the live list.
- ``op.operands``/``op.results`` are tuples; change operands through ``op.set_operand`` or the
  ``Rewriter``. Each value keeps ``users``: a dict ``{op: number of operand slots}``, so
  "has uses", "replace all uses" and "erase" do not scan the function.
- Types are :class:`~tdflow.dialect.types.TensorType`, :class:`~tdflow.dialect.types.FunctionType`
  (attributes only) or, for scalars, the builtin spelling as a ``str`` (``"f32"``, ``"i64"``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tdflow.dialect.ir.location import UNKNOWN_LOC, Location, NameLoc
from tdflow.dialect.types import FunctionType, TensorType

Type = TensorType | FunctionType | str

__all__ = ["Block", "FuncOp", "Location", "Module", "NameLoc", "Operation", "Type", "UNKNOWN_LOC", "Value",
           "RETURN", "FUNC", "JOB", "FUNC_KINDS"]

#: Name of the terminator of every function body.
RETURN = "func.return"
#: The function ops, and the spelling of each one's terminator.
FUNC = "func.func"
JOB = "oneflow.job"
FUNC_KINDS = {FUNC: RETURN, JOB: "oneflow.return"}


class Value:
    """An SSA value: a result of an operation or an argument of a block.

    ``owner`` is the defining :class:`Operation` or the :class:`Block` (for arguments); ``owner``
    is ``None`` for a placeholder the parser made for a name that was never defined (the verifier
    reports it). ``index`` is the result/argument number; ``name`` a hint for messages and for
    printing function arguments (``"x"`` for ``%x``), or ``None``.
    """

    __slots__ = ("type", "owner", "index", "name", "users")

    def __init__(self, type: Type, owner: Operation | Block | None, index: int,
                 name: str | None = None) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        #: ``{operation: number of its operand slots holding this value}``, in first-use order.
        self.users: dict[Operation, int] = {}

    @property
    def op(self) -> Operation | None:
        """The defining operation, or ``None`` for a block argument."""
        owner = self.owner
        return owner if isinstance(owner, Operation) else None

    @property
    def is_block_arg(self) -> bool:
        return isinstance(self.owner, Block)

    @property
    def num_uses(self) -> int:
        return sum(self.users.values())

    @property
    def has_uses(self) -> bool:
        return bool(self.users)

    @property
    def uses(self) -> list[tuple[Operation, int]]:
        """Every use as ``(operation, operand index)``, operations in first-use order."""
        return [(op, i) for op in self.users for i, v in enumerate(op.operands) if v is self]

    @property
    def loc(self) -> Location:
        """Where the value is defined (its op, or its function argument)."""
        owner = self.owner
        if isinstance(owner, Operation):
            return owner.loc
        if isinstance(owner, Block) and owner.arg_locs is not None:
            return owner.arg_locs[self.index]
        return UNKNOWN_LOC

    def __repr__(self) -> str:
        return f"<Value %{self.name if self.name is not None else '?'}: {self.type}>"


class Operation:
    """A generic operation ``%r = "name"(%a, %b) {attrs} : (Ta, Tb) -> Tr``.

    ``Operation(name, operands, result_types, attributes=None, loc=None)`` creates the result
    values and registers the uses. It is detached until added to a block (``block.append``,
    :class:`Rewriter`, :class:`~tdflow.dialect.ir.builder.Builder`).

    Operations have no regions and no successors (``successors`` is always ``()``): tdflow
    programs are single-block functions.
    """

    __slots__ = ("name", "operands", "results", "attributes", "loc", "parent", "_prev", "_next",
                 "stamp")

    successors: tuple = ()

    def __init__(self, name: str, operands: Sequence[Value], result_types: Sequence[Type] = (),
                 attributes: dict[str, Any] | None = None, loc: Location | None = None) -> None:
        self.name = name
        operands = tuple(operands)
        self.operands = operands
        self.results = tuple([Value(t, self, i) for i, t in enumerate(result_types)])
        self.attributes = {} if attributes is None else attributes
        self.loc = UNKNOWN_LOC if loc is None else loc
        self.parent: Block | None = None
        self._prev: Operation | None = None
        self._next: Operation | None = None
        #: The parser's mark (an object shared by every op it read from the same text after
        #: the operand list, with operands of exactly the written type objects), else ``None``.
        #: An op read from a float template (``BodyParser._new_rest``) has the pair (the
        #: template's mark, its constant's text, spelled as the printer spells it): ops of
        #: equal text have equal pairs.
        #: Only code told that the module is unchanged since parsing reads it (``as_parsed``
        #: of ``verify_module``/``print_module``): nothing clears it when an op is changed.
        self.stamp = None
        for v in operands:
            users = v.users
            users[self] = users.get(self, 0) + 1

    # -- reading -------------------------------------------------------------------------
    @property
    def result(self) -> Value:
        """The single result (``ValueError`` unless there is exactly one)."""
        if len(self.results) != 1:
            raise ValueError(f"'{self.name}' has {len(self.results)} results, not 1")
        return self.results[0]

    @property
    def operand_types(self) -> tuple[Type, ...]:
        return tuple([v.type for v in self.operands])

    @property
    def result_types(self) -> tuple[Type, ...]:
        return tuple([v.type for v in self.results])

    @property
    def dialect_name(self) -> str:
        """``"tdflow"`` for ``"tdflow.relu"``."""
        return self.name.partition(".")[0]

    @property
    def next_op(self) -> Operation | None:
        return self._next

    @property
    def prev_op(self) -> Operation | None:
        return self._prev

    @property
    def func(self) -> FuncOp | None:
        """The function whose body holds this operation, if any."""
        return self.parent.parent if self.parent is not None else None

    def has_users(self) -> bool:
        return any(r.users for r in self.results)

    # -- changing operands (keeps use-lists right) -----------------------------------------
    def set_operand(self, index: int, value: Value) -> None:
        """Make operand ``index`` use ``value``."""
        old = self.operands[index]
        if old is value:
            return
        ops = list(self.operands)
        ops[index] = value
        self.operands = tuple(ops)
        _drop_use(old, self)
        value.users[self] = value.users.get(self, 0) + 1

    def set_operands(self, values: Sequence[Value]) -> None:
        """Replace the whole operand list."""
        for v in self.operands:
            _drop_use(v, self, all_slots=True)
        self.operands = tuple(values)
        for v in self.operands:
            v.users[self] = v.users.get(self, 0) + 1

    def drop_operands(self) -> None:
        """Forget all operands (used when erasing)."""
        for v in self.operands:
            v.users.pop(self, None)
        self.operands = ()

    def clone(self, operands: Sequence[Value] | None = None) -> Operation:
        """A detached copy with the same name, attributes, result types and location."""
        return Operation(self.name, self.operands if operands is None else operands,
                         [r.type for r in self.results], dict(self.attributes), self.loc)

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {self.loc}>"


_new_op = Operation.__new__
_new_value = Value.__new__


def _drop_use(value: Value, op: Operation, all_slots: bool = False) -> None:
    users = value.users
    n = users.get(op, 0)
    if n <= 1 or all_slots:
        users.pop(op, None)
    else:
        users[op] = n - 1


class Block:
    """A list of operations with typed arguments. Iterating a block walks its live op list.

    ``block.ops`` is a tuple snapshot (safe to iterate while rewriting); ``len(block)`` is the
    number of operations; ``block.first``/``block.last`` are the ends (``None`` when empty).
    """

    __slots__ = ("args", "arg_locs", "parent", "first", "last", "_len")

    def __init__(self, arg_types: Iterable[Type] = (), arg_names: Iterable[str | None] = (),
                 arg_locs: list[Location] | None = None) -> None:
        names = list(arg_names)
        self.args: list[Value] = [
            Value(t, self, i, names[i] if i < len(names) else None)
            for i, t in enumerate(arg_types)
        ]
        self.arg_locs = arg_locs
        self.parent: FuncOp | None = None
        self.first: Operation | None = None
        self.last: Operation | None = None
        self._len = 0

    def add_arg(self, type: Type, name: str | None = None,
                loc: Location | None = None) -> Value:
        v = Value(type, self, len(self.args), name)
        self.args.append(v)
        if loc is not None or self.arg_locs is not None:
            if self.arg_locs is None:
                self.arg_locs = [UNKNOWN_LOC] * (len(self.args) - 1)
            self.arg_locs.append(loc or UNKNOWN_LOC)
        return v

    @property
    def ops(self) -> tuple[Operation, ...]:
        return tuple(self)

    def __iter__(self) -> Iterator[Operation]:
        op = self.first
        while op is not None:
            yield op
            # An op erased meanwhile keeps its `_next`: skip forward to the next live op. An op
            # inserted after the current one is visited.
            op = op._next
            while op is not None and op.parent is not self:
                op = op._next

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return True

    @property
    def terminator(self) -> Operation | None:
        """The ``func.return`` at the end, if the block ends with one."""
        last = self.last
        return last if last is not None and last.name == RETURN else None

    def append(self, op: Operation) -> Operation:
        """Add a detached ``op`` at the end and return it."""
        if op.parent is not None:
            raise ValueError(f"{op!r} is already in a block")
        return self._link(op, self.last, None)

    def append_new(self, name: str, operands: tuple[Value, ...], result_types: Sequence[Type],
                   attributes: dict[str, Any], loc: Location, stamp: object = None
                   ) -> Operation:
        """``self.append(Operation(name, operands, result_types, attributes, loc))`` built in
        place: the parser's fast path, once per op of a program. ``operands`` is a tuple and
        ``attributes`` a dict the op may keep; ``stamp`` the parser's (``Operation.stamp``).

        >>> from tdflow.dialect.types import TensorType
        >>> b = Block([TensorType((2,), "f32")])
        >>> op = b.append_new("t.neg", (b.args[0],), [b.args[0].type], {}, UNKNOWN_LOC)
        >>> b.last is op, op.results[0].owner is op, b.args[0].users == {op: 1}
        (True, True, True)
        """
        op = _new_op(Operation)
        op.name = name
        op.operands = operands
        if len(result_types) == 1:
            v = _new_value(Value)
            v.type = result_types[0]
            v.owner = op
            v.index = 0
            v.name = None
            v.users = {}
            op.results = (v,)
        else:
            op.results = tuple([Value(t, op, i) for i, t in enumerate(result_types)])
        op.attributes = attributes
        op.loc = loc
        op.stamp = stamp
        last = self.last
        op._prev = last
        op._next = None
        if last is None:
            self.first = op
        else:
            last._next = op
        self.last = op
        op.parent = self
        self._len += 1
        if len(operands) == 1:  # most ops: the new op is not yet among its users
            operands[0].users[op] = 1
        else:
            for v in operands:
                users = v.users
                users[op] = users.get(op, 0) + 1
        return op

    def _insert_before(self, anchor: Operation | None, op: Operation) -> Operation:
        if anchor is None:
            return self.append(op)
        if op.parent is not None:
            raise ValueError(f"{op!r} is already in a block")
        if anchor.parent is not self:
            raise ValueError(f"{anchor!r} is not in this block")
        return self._link(op, anchor._prev, anchor)

    def _link(self, op: Operation, prev: Operation | None, nxt: Operation | None) -> Operation:
        """Put the detached ``op`` between the neighbours ``prev`` and ``nxt`` (the inverse of
        :meth:`_unlink`; ``None`` stands for the block's start or end)."""
        op._prev = prev
        op._next = nxt
        if prev is None:
            self.first = op
        else:
            prev._next = op
        if nxt is None:
            self.last = op
        else:
            nxt._prev = op
        op.parent = self
        self._len += 1
        return op

    def _unlink(self, op: Operation) -> None:
        prev, nxt = op._prev, op._next
        if prev is None:
            self.first = nxt
        else:
            prev._next = nxt
        if nxt is None:
            self.last = prev
        else:
            nxt._prev = prev
        op.parent = None
        op._prev = None
        # `_next` is kept so an iterator standing on `op` can continue.
        self._len -= 1

    def __repr__(self) -> str:
        return f"<Block {len(self.args)} args, {self._len} ops>"


class FuncOp:
    """``func.func @name(args) -> results { body }``.

    ``arg_types`` are the body's argument types; ``result_types`` the declared results (the
    verifier checks ``func.return`` against them). ``visibility`` is ``None`` or ``"private"``/
    ``"public"``/``"nested"``; ``attributes`` holds extra function attributes, ``arg_attrs`` one
    dict per argument (or ``None``), ``res_attrs`` one per result (or ``None``).
    """

    __slots__ = ("name", "result_types", "body", "loc", "visibility", "attributes", "arg_attrs",
                 "res_attrs", "kind", "parent")

    def __init__(self, name: str, arg_types: Sequence[Type] = (), result_types: Sequence[Type] = (),
                 arg_names: Sequence[str | None] = (), loc: Location | None = None,
                 body: Block | None = None) -> None:
        self.name = name
        self.result_types: list[Type] = list(result_types)
        if body is None:
            body = Block(arg_types, arg_names)
        body.parent = self
        self.body = body
        self.loc = UNKNOWN_LOC if loc is None else loc
        self.visibility: str | None = None
        self.attributes: dict[str, Any] = {}
        self.arg_attrs: list[dict[str, Any]] | None = None
        self.res_attrs: list[dict[str, Any]] | None = None
        #: The function op as written: ``func.func``, or ``oneflow.job`` (OneFlow's job
        #: function, whose terminator ``oneflow.return`` is this IR's ``func.return``).
        self.kind: str = FUNC
        self.parent: Module | None = None

    @property
    def args(self) -> list[Value]:
        return self.body.args

    @property
    def arg_types(self) -> list[Type]:
        return [a.type for a in self.body.args]

    @property
    def function_type(self) -> FunctionType:
        return FunctionType(tuple(self.arg_types), tuple(self.result_types))

    @property
    def ops(self) -> tuple[Operation, ...]:
        return self.body.ops

    def walk(self) -> Iterator[Operation]:
        return iter(self.body)

    def clone(self, name: str | None = None) -> FuncOp:
        """A deep copy (new block, ops and values; attributes shared, they are immutable).

        Operands defined outside the function (placeholders) are kept as they are.
        """
        f = FuncOp(self.name if name is None else name, self.arg_types, self.result_types,
                   [a.name for a in self.body.args], self.loc)
        f.body.arg_locs = None if self.body.arg_locs is None else list(self.body.arg_locs)
        f.visibility = self.visibility
        f.attributes = dict(self.attributes)
        f.arg_attrs = None if self.arg_attrs is None else [dict(d) for d in self.arg_attrs]
        f.res_attrs = None if self.res_attrs is None else [dict(d) for d in self.res_attrs]
        f.kind = self.kind
        vmap: dict[Value, Value] = dict(zip(self.body.args, f.body.args))
        for op in self.body:
            new = op.clone([vmap.get(v, v) for v in op.operands])
            for r, nr in zip(op.results, new.results):
                nr.name = r.name
                vmap[r] = nr
            f.body.append(new)
        return f

    def __repr__(self) -> str:
        return f"<FuncOp @{self.name} {self.function_type}>"


class Resources(dict):
    """A module's blob table (``dense_resource`` name -> ``"0x..."`` text or bytes): a dict that
    can be weakly referenced, so that what is derived from the blobs (the runtime's decoded
    constants) lives as long as the module's blobs do, and no longer.

    >>> import weakref
    >>> r = Resources(w="0x0400000000"); weakref.ref(r)() is r
    True
    """

    __slots__ = ("__weakref__",)


class Module:
    """A list of functions. ``module[name]`` finds a function by name.

    ``parse_diagnostics`` holds problems the parser found while resolving names (duplicate
    definitions, a use whose written type differs from its definition); the verifier reports them
    with everything else.
    """

    __slots__ = ("funcs", "loc", "name", "attributes", "parse_diagnostics", "placeholder_locs",
                 "forward_use_locs", "resources", "value_names")

    def __init__(self, funcs: Iterable[FuncOp] = (), loc: Location | None = None) -> None:
        self.funcs: list[FuncOp] = []
        self.loc = UNKNOWN_LOC if loc is None else loc
        self.name: str | None = None  # `module @name`
        self.attributes: dict[str, Any] = {}
        self.parse_diagnostics: list = []
        #: Parser bookkeeping for precise verifier locations: where an undefined value
        #: (placeholder) was first used, and where an op used a value defined after it.
        self.placeholder_locs: dict[Value, Location] = {}
        self.forward_use_locs: dict[Operation, Location] = {}
        #: The blobs of ``dense_resource`` constants (name -> ``"0x..."`` text, as written in the
        #: file's ``{-# dialect_resources: { builtin: {...} } #-}`` section, which prints back).
        self.resources: dict[str, str | bytes] = Resources()
        # print op results by their names (an imported model's value names) instead of numbers
        self.value_names = False
        for f in funcs:
            self.add(f)

    def add(self, func: FuncOp) -> FuncOp:
        func.parent = self
        self.funcs.append(func)
        return func

    def __getitem__(self, name: str) -> FuncOp:
        for f in self.funcs:
            if f.name == name:
                return f
        raise KeyError(f"no function @{name}; functions: "
                       f"{', '.join('@' + f.name for f in self.funcs) or '(none)'}")

    def __iter__(self) -> Iterator[FuncOp]:
        return iter(self.funcs)

    def __len__(self) -> int:
        return len(self.funcs)

    def walk(self) -> Iterator[Operation]:
        """Every operation of every function, in order."""
        for f in self.funcs:
            yield from f.body

    def clone(self) -> Module:
        """A deep copy of every function (see :meth:`FuncOp.clone`)."""
        m = Module([f.clone() for f in self.funcs], self.loc)
        m.name = self.name
        m.attributes = dict(self.attributes)
        m.resources = self.resources  # blobs never change: the copy's attributes share them
        m.value_names = self.value_names
        return m

    @property
    def num_ops(self) -> int:
        return sum(len(f.body) for f in self.funcs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Module):
            return NotImplemented
        return _SERVICES["equal"](self, other)

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return _SERVICES["print"](self)

    def __repr__(self) -> str:
        return f"<Module {len(self.funcs)} funcs, {self.num_ops} ops>"


# How a Module prints (``str``) and compares (``==``): the printer and the structural equality
# walk the classes above, so they live in modules above this one; tdflow.dialect.ir (the
# package, always imported before this module) plugs them in with `plug_module_services`.
_SERVICES: dict[str, Any] = {}


def plug_module_services(print_module: Callable[[Module], str],
                         module_equal: Callable[[Module, Module], bool]) -> None:
    """Install the functions behind ``str(module)`` and ``module == other``.

    >>> saved = dict(_SERVICES)
    >>> plug_module_services(lambda m: "text", lambda a, b: True); str(Module())
    'text'
    >>> _SERVICES.clear(); _SERVICES.update(saved)
    """
    _SERVICES["print"] = print_module
    _SERVICES["equal"] = module_equal
