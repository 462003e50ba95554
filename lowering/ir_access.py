"""What passes ask of the dialect and the IR, in one place: traits, effects, printing, verifying.

Passes never switch on op names: they ask the op's definition (its traits and declared hooks)
through these helpers.
"""

from __future__ import annotations

from typing import Any

from tdflow.dialect.types import TensorType

#: Traits that make an op free of side effects (safe to CSE and to erase when unused).
PURE_TRAITS = frozenset({"NoMemoryEffect", "NoSideEffect", "Pure"})


def op_def(dialect: Any, name: str) -> Any | None:
    """The ``OpDef`` of ``name`` in ``dialect``, or ``None`` when the dialect lacks it."""
    if dialect is None:
        return None
    try:
        return dialect.lookup(name)
    except (KeyError, LookupError):
        return None


def traits(dialect: Any, name: str) -> frozenset[str]:
    """Names of the traits of op ``name`` (``{"NoMemoryEffect", "Elementwise", ...}``)."""
    d = op_def(dialect, name)
    if d is None:
        return frozenset()
    names = getattr(d, "trait_names", None)
    if names is None:
        names = frozenset(_trait_name(t) for t in getattr(d, "traits", ()))
    if "IsIdempotent" in names or "IsInvolution" in names:
        names = frozenset(_trait_name(t) for t in names)
    return names


def _trait_name(t: Any) -> str:
    name = t if isinstance(t, str) else getattr(t, "name", str(t))
    # MLIR spells some native traits with an `Is` prefix (`IsIdempotent`).
    for short in ("Idempotent", "Involution"):
        if name == f"Is{short}":
            return short
    return name


def mutated_operands(dialect: Any, op: Any) -> tuple[int, ...]:
    """Operand indices ``op`` writes in place (declared through ``modify_input_arg``)."""
    fn = getattr(dialect, "mutable_operands", None)
    if fn is None or op_def(dialect, op.name) is None:
        return ()
    return tuple(fn(op))


def is_pure(dialect: Any, op: Any) -> bool:
    """True when ``op`` has no side effects and mutates none of its inputs."""
    return bool(traits(dialect, op.name) & PURE_TRAITS) and not mutated_operands(dialect, op)


def tensor_type(value: Any) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def print_module(module: Any) -> str:
    """MLIR text of ``module`` (the IR's printer)."""
    from tdflow.dialect.ir.printer import print_module as _print

    return _print(module)


def verify(module: Any, dialect: Any) -> list[Any]:
    """Every diagnostic the IR verifier finds (empty when the module is valid)."""
    from tdflow.dialect.ir import verify_module

    return list(verify_module(module, dialect))


def attr_key(value: Any) -> Any:
    """A hashable key for an attribute value (lists and dicts become tuples)."""
    if isinstance(value, dict):
        return tuple(sorted((k, attr_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(attr_key(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return (type(value).__name__, value)


def diagnostic(message: str, loc: Any = None, severity: str = "error") -> Any:
    """A ``Diagnostic`` for ``message`` at ``loc`` (rendered by the CLI with the source line)."""
    from tdflow.dialect.ir.diagnostics import Diagnostic

    return Diagnostic(message, loc, severity=severity)
