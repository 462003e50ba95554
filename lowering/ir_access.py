"""What passes ask of the dialect and the IR, in one place: traits, effects, printing, verifying.

Passes never switch on op names: they ask the op's definition (its traits and declared hooks)
through these helpers.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, TypeAlias

from tdflow.dialect.types import TensorType

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.ir.core import Module, Operation
    from tdflow.dialect.ir.diagnostics import Diagnostic
    from tdflow.dialect.opdef import OpDef

    #: What passes ask about ops: a dialect or context, or one wrapped with lowering's ops.
    Ops: TypeAlias = "Dialect | LoweringDialect"

#: Traits that make an op free of side effects (safe to CSE and to erase when unused).
PURE_TRAITS = frozenset({"NoMemoryEffect", "NoSideEffect", "Pure"})


def op_def(dialect: Ops | None, name: str) -> OpDef | None:
    """The ``OpDef`` of ``name`` in ``dialect``, or ``None`` when the dialect lacks it."""
    if dialect is None:
        return None
    try:
        return dialect.lookup(name)
    except (KeyError, LookupError):
        return None


def op_attributes(dialect: Ops | None, op: Operation) -> dict:
    """The attributes of ``op`` its definition declares: the discardable ones (names the op
    does not declare, kept on the IR op for passes and printing) never reach hooks, kernel
    selection or kernels. All of them for an op the dialect lacks (a fused op's).

    >>> from tdflow.dialect import standard_dialect
    >>> from tdflow.dialect.ir.core import Operation
    >>> op = Operation("tdflow.relu", [], [], {"op_type_name": "relu"})
    >>> op_attributes(standard_dialect(), op)
    {}
    """
    d = op_def(dialect, op.name)
    if d is None or not hasattr(d, "op_conf_attrs"):
        return op.attributes
    from tdflow.dialect.op_verify import declared_attributes

    return declared_attributes(d, op.attributes)


def traits(dialect: Ops | None, name: str) -> frozenset[str]:
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


def mutated_operands(dialect: Ops | None, op: Operation) -> tuple[int, ...]:
    """Operand indices ``op`` writes in place (declared through ``modify_input_arg``)."""
    fn = getattr(dialect, "mutable_operands", None)
    if fn is None or op_def(dialect, op.name) is None:
        return ()
    hook = getattr(dialect, "hook", None)
    if hook is not None and hook(op.name, "modify_input_arg") is None:
        # most ops write nothing: skip freezing the op's attributes into the hook's cache key
        # (CSE and SBP inference ask this of every op, a third of ResNet-50's compile)
        return ()
    return tuple(fn(op))


def is_pure(dialect: Ops | None, op: Operation) -> bool:
    """True when ``op`` has no side effects and mutates none of its inputs."""
    return bool(traits(dialect, op.name) & PURE_TRAITS) and not mutated_operands(dialect, op)


def tensor_type(value: Any) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def print_module(module: Module) -> str:
    """MLIR text of ``module`` (the IR's printer)."""
    from tdflow.dialect.ir.printer import print_module as _print

    return _print(module)


def verify(module: Module, dialect: Ops | None) -> list[Diagnostic]:
    """Every error the IR verifier finds (empty when the module is valid); its warnings
    (undeclared, discardable attributes) do not make a module invalid."""
    from tdflow.dialect.ir import verify_module

    return [d for d in verify_module(module, dialect) if d.severity == "error"]


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

#: The op ``fuse-elementwise`` produces (declared in ``ops.td`` like every other op).
FUSED_OP = "tdflow.fused_elementwise"
#: Every op a lowering pass may create.
LOWERING_OPS = (FUSED_OP,)


@functools.lru_cache(maxsize=1)
def lowering_ops() -> Dialect:
    """A dialect of the ops lowering creates, as ``ops.td`` declares them (with their hooks).

    It serves contexts that lack the standard ops (``tdflow.load_ops(..., std=False)``): their
    programs still get fused, so verification between passes must know the fused op.

    >>> [op.name for op in lowering_ops()]
    ['tdflow.fused_elementwise']
    """
    from tdflow.dialect.dialect import Dialect, standard_dialect

    std = standard_dialect()
    return Dialect([std[name] for name in LOWERING_OPS], name=std.name, registry=std.registry)


class LoweringDialect:
    """``dialect`` plus the ops lowering creates, for passes and verification between them.

    Everything is delegated to the wrapped dialect; lowering's own ops that it does not declare
    (a context without the standard ops) are answered by :func:`lowering_ops`: the same
    definition and hooks, so checks and result types are those of ``ops.td``.

    >>> from tdflow.dialect.dialect import Dialect
    >>> from tdflow.dialect.types import TensorType as T
    >>> d = LoweringDialect(Dialect([]))  # a library without the standard ops
    >>> d.infer_result_types(FUSED_OP, [T((2,), "f32"), T((2,), "f32")], {"expr": "gt(in0, in1)"})
    [TensorType(shape=(2,), dtype='i1')]
    """

    def __init__(self, base: Dialect):
        self.base = base
        self._own = frozenset(n for n in LOWERING_OPS if op_def(base, n) is None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def _owner(self, name: str) -> Dialect:
        return lowering_ops() if name in self._own else self.base

    def lookup(self, name: str) -> OpDef | None:
        return self._owner(name).lookup(name)

    def hook(self, op_name: str, kind: str) -> Any:
        owner = self._owner(op_name)
        fn = getattr(owner, "hook", None)
        return fn(op_name, kind) if fn is not None else None

    def verify_operation(self, op: Operation, emit: Any) -> None:
        verify = getattr(self._owner(op.name), "verify_operation", None)
        if verify is not None:
            verify(op, emit)

    def infer_result_types(self, op_name: str, input_types: Any, attrs: Any = None
                           ) -> list[TensorType]:
        return self._owner(op_name).infer_result_types(op_name, input_types, attrs)

    def mutable_operands(self, op: Operation) -> tuple[int, ...]:
        fn = getattr(self._owner(op.name), "mutable_operands", None)
        return tuple(fn(op)) if fn is not None else ()


def with_lowering_ops(dialect: Ops | None) -> LoweringDialect | None:
    """Wrap ``dialect`` so lowering's own ops are known (``None`` stays ``None``)."""
    if dialect is None or isinstance(dialect, LoweringDialect):
        return dialect
    return LoweringDialect(dialect)
