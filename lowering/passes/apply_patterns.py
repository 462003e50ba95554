"""``apply-patterns``: every DRR rewrite rule of the context, greedily, to a fixpoint.

The rules are the ``Pat``/``Pattern`` records of every loaded op library
(``context.dialect.patterns``, the standard library's included); MLIR's greedy driver is the
model (:mod:`tdflow.lowering.patterns_driver`): highest benefit first, dead pure ops erased,
constants folded (when a kernel table is at hand, as for ``canonicalize``), until nothing
changes or ``max-iterations`` sweeps ran; not converging is reported as a warning. Which
pattern fired where is printed after the IR by ``--print-ir-after-all``.

With ``rules.td`` holding ``def ExpOfLog : Pat<(TDF_ExpOp (TDF_LogOp $x)), (replaceWithValue $x)>;``::

    $ tdflow opt prog.mlir --ops rules.td --pipeline apply-patterns

>>> from tdflow.lowering.pass_manager import PassManager
>>> [str(p) for p in PassManager.parse("apply-patterns{max-iterations=3}").passes]
['apply-patterns{max-iterations=3}']
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tdflow.dialect.patterns.model import OpNode

from ..constant_fold import fold_op
from ..ir_access import diagnostic
from ..pass_manager import Pass, PassContext, PassFailure
from ..patterns_driver import Fired, PatternIndex, apply_greedily, fired_report

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module

    from ..ir_access import LoweringDialect


def context_patterns(dialect: Dialect | LoweringDialect) -> tuple:
    """Every pattern of the context (``()`` for a dialect without any).

    >>> from tdflow.dialect.context import standard_context
    >>> "TDF_NegativeNegative" in [p.name for p in context_patterns(standard_context())]
    True
    """
    return tuple(getattr(dialect, "patterns", ()) or ())


class ApplyPatternsPass(Pass):
    name = "apply-patterns"
    summary = "apply the DRR rewrite rules (Pat/Pattern) of every loaded op library, greedily"
    options = {"max-iterations": 10, "max-rewrites": 0, "fold": True}

    def run(self, module: Module, context: PassContext) -> None:
        self.fired: list[Fired] = []
        index = PatternIndex(context_patterns(context.dialect))
        if not index:
            return
        run_greedy(self, module, context, index)

    def annotate(self, module: Module, context: PassContext) -> str:
        return fired_report(getattr(self, "fired", []))


def run_greedy(p: Pass, module: Module, context: PassContext, index: PatternIndex) -> None:
    """Drive ``index`` over every function of ``module``; record what fired on ``p.fired`` and
    warn (``context.warnings``) about a function that did not converge."""
    from tdflow.dialect.patterns.native import missing_natives
    from tdflow.dialect.patterns.native_registry import natives_of

    missing = missing_natives(index.patterns, natives_of(context.dialect))
    if missing:  # found before anything is rewritten, every one at once
        raise PassFailure(p.name, [diagnostic(
            f"pattern '{pat.name}' needs a Python function for '{rec}': define it with "
            f"@tdflow.native({rec!r}) in a hooks module and pass --hooks FILE.py",
            _loc(pat.loc)) for pat, rec in missing])
    for pat in index.patterns:
        what = unsupported(pat.source)
        if what:
            context.warnings.append(diagnostic(
                f"pattern '{pat.name}' matches with {what}, which {p.name} does not apply: "
                f"it never fires", _loc(pat.loc), severity="warning"))
    fold = None
    if p.option("fold") and context.kernel_table is not None:
        def fold(op, rw):
            return fold_op(op, context, rw)
    for func in module:
        r = apply_greedily(func, index, context.dialect, fold=fold,
                           max_iterations=p.option("max-iterations"),
                           max_rewrites=p.option("max-rewrites") or None)
        p.fired.extend(r.fired)
        if not r.converged:
            context.warnings.append(diagnostic(
                f"{p.name} did not reach a fixpoint in @{func.name} after "
                f"{r.iterations} iterations (max-iterations={p.option('max-iterations')}); "
                f"patterns may be undoing each other", func.loc, severity="warning"))


def unsupported(node: Any) -> str | None:
    """What in a source dag the matcher cannot apply (``variadic``, a constraint dag, a
    ``NativeCodeCall`` used as a matcher), or ``None``.

    >>> from tdflow.dialect.patterns.model import Bind, OpNode
    >>> unsupported(OpNode("op", "t.a", (OpNode("variadic", None, (Bind("x", "any"),)),)))
    "'variadic'"
    """
    for a in getattr(node, "args", ()):
        if isinstance(a, OpNode):
            if a.kind in ("variadic", "constraint_dag", "native"):
                return f"'{a.kind}'"
            found = unsupported(a)
            if found:
                return found
    return None


def _loc(loc: Any) -> Any:
    from tdflow.dialect.ir.core import Location

    return None if loc is None else Location(loc.file, loc.line, loc.col)
