"""The structural verifier: collects every error of a module, each at its location.

Checks, for each function:

- operands are defined, and defined before their use (dominance within the single block):
  ``use of undefined value '%7'``, ``use of '%2' before its definition``; a value defined in
  another function (Python-built IR) is reported too;
- what the parser recorded while resolving names (``module.parse_diagnostics``): redefinitions
  and uses whose written type differs from the definition;
- the body ends with exactly one ``func.return`` whose operand types match the declared results;
- function names are unique;
- with a ``dialect``: unknown ops (``dialect.lookup(name)`` is ``None``; when the dialect has
  ``suggest(name) -> list[str]`` the message adds "did you mean ...") and op-specific checks via
  ``dialect.verify_operation(op, emit)``, where ``emit(message, loc=None, notes=(),
  severity="error")`` adds a diagnostic (at the op's location by default); the dialect's
  warnings (undeclared, discardable attributes) are errors with ``strict_attrs=True``. The dialect is duck-typed: nothing here imports
  the ODS code.

>>> from tdflow.dialect.ir.parser import parse_module
>>> m = parse_module('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\\n'
...                  '  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>\\n'
...                  '  return %0 : tensor<4xf32>\\n}', "t.mlir")
>>> [str(d) for d in verify_module(m)]
["t.mlir:2:22: error: use of undefined value '%y'"]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tdflow.dialect.ir.core import RETURN, FuncOp, Location, Module, Operation, Value
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError, sort_diagnostics

from tdflow.core.gc_pause import gc_paused

__all__ = ["verify_module", "verify_func", "parse_and_verify", "Emit"]

#: ``emit(message, loc=None, notes=(), severity="error")``: report a problem of the op being
#: verified.
Emit = Callable[..., None]
_NONE: frozenset = frozenset()


def _ref(v: Value) -> str:
    return f"'%{v.name}'" if v.name else f"operand of type {v.type}"


def verify_func(func: FuncOp, diags: list[Diagnostic], dialect=None,
                placeholder_locs: dict | None = None,
                forward_use_locs: dict | None = None, strict_attrs: bool = False,
                stamps: set | None = None) -> None:
    """Append the errors (and warnings) of one function to ``diags``.

    ``stamps``: a set to pass from function to function of a module unchanged since it was
    parsed (``verify_module(..., as_parsed=True)``): the parser's stamps (``Operation.stamp``)
    of ops the dialect found valid without a word, each op with one of them then accepted at
    once (the same name, operand and result type objects, and equal attributes: a float
    template's ops, whose stamps are equal pairs, have attributes equal but not the same).
    """
    block = func.body
    defined: set[Value] = set(block.args)
    covers = defined.issuperset
    add_all = defined.update
    lookup = getattr(dialect, "lookup", None) if dialect is not None else None
    verify_operation = getattr(dialect, "verify_operation", None) if dialect is not None else None
    suggest = getattr(dialect, "suggest", None) if dialect is not None else None
    known: dict[str, bool] = {}  # op name -> whether the dialect knows it
    emit = _Emitter(diags, strict_attrs)
    last = block.last
    # Without `stamps` no stamp is ever added: the test below always fails.
    valid = stamps if stamps is not None and verify_operation is not None else _NONE
    for op in block:
        if not covers(op.operands):
            _check_operands(func, op, defined, diags, placeholder_locs, forward_use_locs)
        add_all(op.results)
        stamp = op.stamp
        if stamp is not None and stamp in valid:
            continue  # never a `func.return`: its stamp is not added below
        name = op.name
        if name == RETURN:
            if op is not last:
                diags.append(Diagnostic(
                    "'func.return' must be the last operation of the function body", op.loc))
            _check_return(func, op, diags)
            continue
        if lookup is not None:
            ok = known.get(name)
            if ok is None:
                ok = known[name] = lookup(name) is not None
            if not ok:
                msg = f"unknown operation '{name}'"
                if suggest is not None:
                    cands = list(suggest(name) or ())
                    if cands:
                        msg += "; did you mean " + " or ".join(f"'{c}'" for c in cands) + "?"
                diags.append(Diagnostic(msg, op.loc))
                continue
            if verify_operation is not None:
                emit.op = op
                if stamp is not None and valid is stamps:
                    before = len(diags)
                    verify_operation(op, emit)
                    if len(diags) == before:  # a warning too is per op (discardable attrs)
                        stamps.add(stamp)
                else:
                    verify_operation(op, emit)
    if last is None or last.name != RETURN:
        diags.append(Diagnostic(
            f"function @{func.name} must end with 'return' (found "
            f"{'an empty body' if last is None else repr(last.name)})",
            last.loc if last is not None else func.loc))


class _Emitter:
    """``emit(message, loc=None, notes=(), severity="error")`` for the op being verified (set
    ``op`` before each): one object per function, not a closure per op."""

    __slots__ = ("op", "diags", "strict")

    def __init__(self, diags: list[Diagnostic], strict: bool = False) -> None:
        self.op: Operation | None = None
        self.diags = diags
        self.strict = strict

    def __call__(self, message: str, loc: Location | None = None, notes: Iterable = (),
                 severity: str = "error") -> None:
        if self.strict and severity == "warning":
            severity = "error"
        self.diags.append(Diagnostic(message, self.op.loc if loc is None else loc, notes,
                                     severity))


def _check_operands(func: FuncOp, op: Operation, defined: set, diags: list[Diagnostic],
                    placeholder_locs: dict | None, forward_use_locs: dict | None) -> None:
    """Report the operands of ``op`` not defined before it in ``func``."""
    for i, v in enumerate(op.operands):
        if v in defined:
            continue
        owner = v.owner
        if owner is None:
            locs = placeholder_locs or {}
            if v in locs and locs[v] is None:
                continue  # the parser reported this reference already
            diags.append(Diagnostic(f"use of undefined value {_ref(v)}",
                                    locs.get(v) or op.loc))
        elif isinstance(owner, Operation) and owner.parent is func.body:
            diags.append(Diagnostic(
                f"use of {_ref(v)} before its definition (operand #{i} of '{op.name}' "
                f"does not dominate this use)",
                (forward_use_locs or {}).get(op, op.loc),
                [(f"{_ref(v)} is defined here", owner.loc)]))
        else:
            where = owner.func if isinstance(owner, Operation) else getattr(owner, "parent", None)
            fname = f"@{where.name}" if isinstance(where, FuncOp) else "outside any function"
            diags.append(Diagnostic(
                f"operand #{i} of '{op.name}' is a value defined in {fname}, not in "
                f"@{func.name}", op.loc))


def _check_return(func: FuncOp, op: Operation, diags: list[Diagnostic]) -> None:
    got = [v.type for v in op.operands]
    want = list(func.result_types)
    if len(got) != len(want):
        diags.append(Diagnostic(
            f"'return' has {len(got)} operand(s) but @{func.name} returns {len(want)} "
            f"value(s)", op.loc, [(f"@{func.name} is declared here", func.loc)]))
        return
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            diags.append(Diagnostic(
                f"type of return operand #{i} ({g}) does not match the function result type "
                f"({w}) of @{func.name}", op.loc, [(f"@{func.name} is declared here", func.loc)]))


def verify_module(module: Module, dialect=None, strict_attrs: bool = False,
                  as_parsed: bool = False) -> list[Diagnostic]:
    """Every error and warning in ``module``, in source order (no errors: the module is valid).

    An attribute an op does not declare is a warning (MLIR keeps it as a discardable
    attribute); ``strict_attrs=True`` makes it an error (``tdflow verify --strict-attrs``).
    ``as_parsed=True`` promises that nothing changed the module since the parser made it
    (``tdflow opt``/``verify`` without passes): the dialect's check then runs once per
    distinct op text (``Operation.stamp``), not once per op; the diagnostics are the same.
    """
    stamps = set() if as_parsed else None
    diags: list[Diagnostic] = list(getattr(module, "parse_diagnostics", ()) or ())
    seen: dict[str, FuncOp] = {}
    with gc_paused():  # inference allocates per op; the collector would walk the whole module
        for f in module.funcs:
            prev = seen.get(f.name)
            if prev is not None:
                diags.append(Diagnostic(f"redefinition of function @{f.name}", f.loc,
                                        [("previously defined here", prev.loc)]))
            seen[f.name] = f
            verify_func(f, diags, dialect, getattr(module, "placeholder_locs", None),
                        getattr(module, "forward_use_locs", None), strict_attrs, stamps)
    return sort_diagnostics(diags)


def parse_and_verify(text: str, filename: str = "<string>", dialect=None) -> Module:
    """Parse and verify; raise ``DiagnosticError`` listing every error, else return the module."""
    from tdflow.dialect.ir.parser import parse_module

    module = parse_module(text, filename)
    diags = verify_module(module, dialect)
    if any(d.severity == "error" for d in diags):
        raise DiagnosticError(diags)
    return module
