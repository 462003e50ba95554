"""The greedy pattern driver: MLIR's ``applyPatternsAndFoldGreedily`` over tdflow's IR.

A worklist of ops, seeded with every op of the function in order. Each op taken from it is
erased when it is dead and pure, else folded when its operands are constants (``fold``, the
callback canonicalize supplies), else offered to the patterns rooted at its name, highest
benefit first (ties: definition order). After a rewrite the new ops, the users of the values
that changed and the producers of the erased ops' operands go back on the worklist. A sweep
that changed anything is followed by another, up to ``max_iterations``; not reaching a fixpoint
by then is reported (``GreedyResult.converged``), as MLIR's driver does.

>>> from tdflow.dialect import standard_dialect
>>> from tdflow.dialect.ir import parse_module
>>> from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
>>> m = parse_module('''func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
...   %0 = "tdflow.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
...   %1 = "tdflow.log"(%0) : (tensor<4xf32>) -> tensor<4xf32>
...   return %1 : tensor<4xf32>
... }''')
>>> exp = OpNode("op", "tdflow.exp", (Bind("x", "any"),), ("x",))
>>> p = Pattern("LogExp", "tdflow.log", 2, OpNode("op", "tdflow.log", (exp,), ("x",)),
...             (Bind("x", "any"),))
>>> r = apply_greedily(m["f"], [p], standard_dialect())
>>> [op.name for op in m["f"].ops], r.converged, [f.pattern for f in r.fired]
(['func.return'], True, ['LogExp'])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from tdflow.dialect.ir import RETURN, Operation, Rewriter
from tdflow.dialect.patterns.model import OpNode, Pattern

from tdflow.core.valueclass import field, value_class

from .ir_access import is_pure
from .patterns_build import BuildFailed, build_results
from .patterns_match import Match, match

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import FuncOp

    from .ir_access import LoweringDialect

__all__ = ["Fired", "GreedyResult", "PatternIndex", "apply_greedily"]


@value_class(frozen=True)
class Fired:
    """One rewrite: which pattern, on which op (name) at which location."""

    pattern: str
    op: str
    loc: Any


@value_class
class GreedyResult:
    changed: bool = False
    converged: bool = True
    iterations: int = 0
    fired: list[Fired] = field(default_factory=list)


class PatternIndex:
    """Patterns by root op name, each list highest benefit first, ties in definition order.

    >>> from tdflow.dialect.patterns.model import Bind, OpNode, Pattern
    >>> src = OpNode("op", "t.a", (Bind("x", "any"),))
    >>> idx = PatternIndex([Pattern("Low", "t.a", 1, src, ()), Pattern("High", "t.a", 3, src, ())])
    >>> [p.name for p in idx.get("t.a")], idx.get("t.b")
    (['High', 'Low'], ())
    """

    def __init__(self, patterns: Iterable[Pattern]) -> None:
        self.patterns: tuple[Pattern, ...] = tuple(patterns)
        by_root: dict[str, list[tuple[int, int, Pattern]]] = {}
        for i, p in enumerate(self.patterns):
            by_root.setdefault(p.root, []).append((-p.benefit, i, p))
        self._by_root = {k: tuple(p for *_, p in sorted(v)) for k, v in by_root.items()}
        self._screens: dict[tuple[str, int], tuple] = {}

    def get(self, name: str) -> tuple[Pattern, ...]:
        return self._by_root.get(name, ())

    def screened(self, name: str, dialect: Dialect | LoweringDialect) -> tuple:
        """``(pattern, [(operand index, producer op name), ...])`` for the rules rooted at
        ``name``: the producers a rule's source dag names for the root's operands, checked
        before the full match (most ops fail a rule there, and this is cheap)."""
        key = (name, id(dialect))
        hit = self._screens.get(key)
        if hit is None:
            opdef = dialect.ops.get(name)
            simple = opdef is not None and all(d.is_single for d in opdef.operands)
            hit = self._screens[key] = tuple((p, _screen(p, simple))
                                             for p in self._by_root.get(name, ()))
        return hit

    def roots(self) -> frozenset[str]:
        return frozenset(self._by_root)

    def __bool__(self) -> bool:
        return bool(self._by_root)


def _screen(p: Pattern, simple: bool) -> tuple[tuple[int, str], ...]:
    """Which of the root's operands must come from which op (only for roots whose operands
    are all single and whose dag has no ``either``: there position ``i`` is operand ``i``)."""
    args = p.source.args
    if not simple or len(p.source.arg_names) != len(args) or any(
            isinstance(a, OpNode) and a.kind != "op" for a in args):
        return ()
    return tuple((i, a.op) for i, a in enumerate(args) if isinstance(a, OpNode) and a.op)


class _Worklist:
    """Ops to visit, each at most once at a time; also the rewriter's listener."""

    def __init__(self) -> None:
        self.stack: list[Operation] = []
        self.queued: set[Operation] = set()

    def push(self, op: Operation | None) -> None:
        if op is not None and op not in self.queued:
            self.queued.add(op)
            self.stack.append(op)

    def pop(self) -> Operation:
        op = self.stack.pop()
        self.queued.discard(op)
        return op

    # Rewriter listener: new and changed ops are revisited.
    def notify_inserted(self, op: Operation) -> None:
        self.push(op)

    def notify_changed(self, op: Operation) -> None:
        self.push(op)

    def notify_erased(self, op: Operation) -> None:
        self.queued.discard(op)


Folder = Callable[[Operation, Rewriter], bool]


def apply_greedily(func: FuncOp, patterns: Iterable[Pattern] | PatternIndex, dialect: Dialect | LoweringDialect, *,
                   fold: Folder | None = None, max_iterations: int = 10,
                   max_rewrites: int | None = None) -> GreedyResult:
    """Apply ``patterns`` to ``func`` until nothing changes (or ``max_iterations`` sweeps).

    ``fold(op, rewriter) -> bool`` folds one op (constant folding); ``max_rewrites`` bounds the
    rewrites of one sweep (default: 8 per op plus 64) so two patterns undoing each other end.
    """
    from tdflow.dialect.patterns.native_registry import natives_of, using_natives

    with using_natives(natives_of(dialect)):
        return _apply_greedily(func, patterns, dialect, fold, max_iterations, max_rewrites)


def _apply_greedily(func: FuncOp, patterns: Iterable[Pattern] | PatternIndex,
                    dialect: Dialect | LoweringDialect, fold: Folder | None,
                    max_iterations: int, max_rewrites: int | None) -> GreedyResult:
    index = patterns if isinstance(patterns, PatternIndex) else PatternIndex(patterns)
    result = GreedyResult()
    wl = _Worklist()
    rw = Rewriter(wl)
    body = func.body
    # from the program as given: rules that keep growing it must not grow their own budget
    per_sweep = max_rewrites if max_rewrites is not None else 8 * len(body) + 64
    for it in range(max(1, max_iterations)):
        result.iterations = it + 1
        for op in reversed(body.ops):  # popped from the end: visited in program order
            wl.push(op)
        budget = per_sweep
        changed = False
        while wl.stack:
            op = wl.pop()
            if op.parent is not body or op.name == RETURN:
                continue
            if _visit(op, index, dialect, rw, wl, fold, result):
                changed = True
                budget -= 1
                if budget <= 0:
                    wl.stack.clear()
                    wl.queued.clear()
                    break
        result.changed |= changed
        if not changed:
            return result
    result.converged = False
    return result


def _visit(op: Operation, index: PatternIndex, dialect: Dialect | LoweringDialect, rw: Rewriter, wl: _Worklist,
           fold: Folder | None, result: GreedyResult) -> bool:
    if not op.has_users() and op.results and is_pure(dialect, op):
        producers = [v.op for v in op.operands]
        rw.erase_op(op)  # dead: its producers may be dead now too
        for p in producers:
            wl.push(p)
        return True
    if fold is not None and fold(op, rw):
        return True
    operands = op.operands
    for pattern, screen in index.screened(op.name, dialect):
        for i, producer in screen:
            p = operands[i].op if i < len(operands) else None
            if p is None or p.name != producer:
                break
        else:
            m = match(pattern, op, dialect)
            if m is not None:
                if _rewrite(pattern, m, op, dialect, rw, wl, result):
                    return True
    return False


def _rewrite(pattern: Pattern, m: Match, op: Operation, dialect: Dialect | LoweringDialect, rw: Rewriter, wl: _Worklist,
             result: GreedyResult) -> bool:
    loc, name = op.loc, op.name
    try:
        new_values, created = build_results(pattern, m.values, op, dialect, rw)
    except BuildFailed:
        return False
    if any(not _fits(v.type, r.type) for v, r in zip(new_values, op.results)):
        for c in reversed(created):  # would change a result's type: not this rewrite
            if c.parent is not None and not c.has_users():
                rw.erase_op(c)
        return False
    producers = [v.op for v in op.operands]
    rw.replace_op(op, new_values)
    for v in new_values:  # the users of the new values see a changed operand
        wl.push(v.op)
    for p in producers:
        wl.push(p)
    result.fired.append(Fired(pattern.name, name, loc))
    return True


def _fits(new: Any, old: Any) -> bool:
    """A replacement keeps the replaced result's type (or one it refines)."""
    if new == old:
        return True
    refines = getattr(new, "refines", None)
    return bool(refines is not None and refines(old))


def fired_report(fired: list[Fired]) -> str:
    """One comment line per rewrite: ``// pattern 'P' fired on 'tdflow.x' at file:line:col``.

    >>> fired_report([Fired("NegNeg", "tdflow.negative", "p.mlir:3:8")])
    "// pattern 'NegNeg' fired on 'tdflow.negative' at p.mlir:3:8"
    """
    return "\n".join(f"// pattern '{f.pattern}' fired on '{f.op}' at {f.loc}" for f in fired)
