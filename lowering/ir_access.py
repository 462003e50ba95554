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


# -- ops that lowering itself creates -------------------------------------------------------------

#: The op ``fuse-elementwise`` produces. When the dialect does not declare it (``ops.td``),
#: lowering supplies its definition so verification between passes still covers it.
FUSED_OP = "tdflow.fused_elementwise"


def _fused_opdef() -> Any:
    from tdflow.dialect.opdef import VARIADIC, AttrDef, OpDef, TraitDef, ValueDef

    return OpDef(
        mnemonic="fused_elementwise", dialect="tdflow",
        operands=(ValueDef("in", arity=VARIADIC),), results=(ValueDef("out"),),
        attributes=(AttrDef("expr", "str", "StrAttr"),
                    AttrDef("ops", "str_array", "StrArrayAttr", required=False, optional=True)),
        traits=(TraitDef("NoMemoryEffect"), TraitDef("Elementwise")),
        summary="elementwise ops fused into one kernel by fuse-elementwise",
    )


class LoweringDialect:
    """``dialect`` plus the ops lowering creates, for passes and verification between them.

    Everything is delegated to the wrapped dialect, except for lowering's own ops when the
    dialect does not know them: their definition, checks and result types come from here.
    """

    def __init__(self, base: Any):
        self.base = base
        self._fused = None if op_def(base, FUSED_OP) is not None else _fused_opdef()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def lookup(self, name: str) -> Any:
        if name == FUSED_OP and self._fused is not None:
            return self._fused
        return self.base.lookup(name)

    def verify_operation(self, op: Any, emit: Any) -> None:
        if op.name == FUSED_OP and self._fused is not None:
            _verify_fused(op, emit)
            return
        verify = getattr(self.base, "verify_operation", None)
        if verify is not None:
            verify(op, emit)

    def infer_result_types(self, op_name: str, input_types: Any, attrs: Any = None) -> Any:
        if op_name == FUSED_OP and self._fused is not None:
            import numpy as np

            shapes = [t.shape for t in input_types]
            if any(s is None or None in s for s in shapes):
                return None
            return [TensorType(tuple(np.broadcast_shapes(*shapes)), input_types[0].dtype)]
        return self.base.infer_result_types(op_name, input_types, attrs)

    def mutable_operands(self, op: Any) -> tuple[int, ...]:
        if op.name == FUSED_OP and self._fused is not None:
            return ()
        fn = getattr(self.base, "mutable_operands", None)
        return tuple(fn(op)) if fn is not None else ()


def _verify_fused(op: Any, emit: Any) -> None:
    from tdflow.dialect.ir.attrs import StringAttr

    from .elementwise import arity
    from .fused_expr import parse_expr

    expr = op.attributes.get("expr")
    if not isinstance(expr, StringAttr):
        emit(f"'{op.name}' op needs a string attribute 'expr'")
        return
    try:
        n = arity(parse_expr(expr.value))
    except ValueError as exc:
        emit(f"'{op.name}' op has a malformed 'expr': {exc}")
        return
    if n > len(op.operands):
        emit(f"'{op.name}' op's expression reads input {n - 1} but only "
             f"{len(op.operands)} operand(s) are given")
    if len(op.results) != 1:
        emit(f"'{op.name}' op has exactly one result, got {len(op.results)}")


def with_lowering_ops(dialect: Any) -> Any:
    """Wrap ``dialect`` so lowering's own ops are known (``None`` stays ``None``)."""
    if dialect is None or isinstance(dialect, LoweringDialect):
        return dialect
    return LoweringDialect(dialect)
