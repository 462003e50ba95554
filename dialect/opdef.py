"""Op definitions: what a dialect knows about each op, read from TableGen records.

Everything here is a frozen value class (:mod:`tdflow.core.valueclass`) built once by
:mod:`tdflow.dialect.ods`; lowering and the runtime read these fields and never touch records.

>>> from tdflow.dialect import standard_dialect      # doctest: +SKIP
>>> op = standard_dialect().lookup("tdflow.leaky_relu")   # doctest: +SKIP
>>> op.operands[0].name, op.attr("alpha").default, op.has_trait("Elementwise")  # doctest: +SKIP
('x', 0.0, True)
"""

from __future__ import annotations

from typing import Any

from tdflow.core.valueclass import field, value_class

# Operand / result arity.
SINGLE = "single"
OPTIONAL = "optional"
VARIADIC = "variadic"

# OneFlow's `has_*_fn` bits (OneFlow_BaseOp) -> the Python hook kind each one declares.
FLAG_TO_HOOK: dict[str, str] = {
    "has_check_fn": "check_attr",
    "has_logical_tensor_desc_infer_fn": "infer_logical_tensor_desc",
    "has_physical_tensor_desc_infer_fn": "infer_physical_tensor_desc",
    "has_get_sbp_fn": "get_sbp",
    "has_sbp_signature_infer_fn": "infer_sbp_signature",
    "has_data_type_infer_fn": "infer_data_type",
    "has_device_and_stream_infer_fn": "infer_device",
    "has_input_arg_modify_fn": "modify_input_arg",
    "has_output_arg_modify_fn": "modify_output_arg",
    "has_output_blob_time_shape_infer_fn": "infer_output_blob_time_shape",
    "has_nd_sbp_infer_fn": "infer_nd_sbp",
    "has_compute_complexity_fn": "compute_complexity",
    "has_get_nd_sbp_fn": "get_nd_sbp",
    "has_enumerate_nd_sbp_signatures_fn": "enumerate_nd_sbp_signatures",
    "has_dump_nd_sbp_signature_for_op_conf_fn": "dump_nd_sbp_signature_for_op_conf",
}
HOOK_TO_FLAG: dict[str, str] = {v: k for k, v in FLAG_TO_HOOK.items()}
#: The hook kinds an ``Elementwise`` op's ``formula`` provides (``tdflow.dialect.infer``,
#: ``tdflow.dialect.formula_sbp``): such an op declares them only to override the formula.
FORMULA_HOOKS: tuple[str, ...] = ("infer_logical_tensor_desc", "infer_physical_tensor_desc",
                                  "get_sbp", "infer_data_type")
HOOK_KINDS: tuple[str, ...] = tuple(FLAG_TO_HOOK.values())


@value_class(frozen=True, slots=True)
class SourceLocation:
    """Where an op was defined: ``file:line`` (column when known)."""

    file: str
    line: int
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@value_class(frozen=True, slots=True)
class ValueDef:
    """An operand or result: ``name``, type ``constraint`` and ``arity``.

    ``arity`` is ``"single"``, ``"optional"`` (0 or 1 value) or ``"variadic"`` (0 or more);
    ``dtypes`` lists the element types the constraint allows (``None``: any); ``summary`` is
    the constraint's own description (``"tensor of any type values"``).
    """

    name: str
    constraint: str = "TDF_Tensor"
    arity: str = SINGLE
    dtypes: tuple[str, ...] | None = None
    summary: str = ""

    @property
    def is_optional(self) -> bool:
        return self.arity == OPTIONAL

    @property
    def is_variadic(self) -> bool:
        return self.arity == VARIADIC

    @property
    def is_single(self) -> bool:
        return self.arity == SINGLE


OperandDef = ValueDef
ResultDef = ValueDef


RULE_KINDS = ("axis", "axes", "pair", "perm", "dims")


@value_class(frozen=True, slots=True)
class AttrRule:
    """What an attribute's value is (read from the record's ``TDF_*Attr`` wrapper; applied by
    :func:`tdflow.dialect.attr_normalize.normalize_attrs`).

    ``kind`` is ``"axis"``, ``"axes"``, ``"pair"``, ``"perm"`` (a permutation of the dims)
    or ``"dims"`` (one entry per dim); ``operand`` names the operand whose rank bounds the
    axes (its first value for a variadic one); ``extra`` widens the axis range to
    ``rank + extra``; ``minimum`` is the least value of a pair's or dims' entries (``None``:
    any), and for an axis the least rank counted (1: a scalar has one axis, as in numpy's
    cumsum); ``note`` is the hint an entry below ``minimum`` gets.
    """

    kind: str
    operand: str = ""
    extra: int = 0
    minimum: int | None = None
    note: str = ""


@value_class(frozen=True, slots=True)
class AttrDef:
    """An attribute: ``kind`` (see :data:`tdflow.dialect.attr_kinds.KINDS`), parsed ``default``.

    ``required`` is true when the attribute has no default and is not ``OptionalAttr``;
    ``default_text`` keeps the C++ spelling from the ``.td`` file (``"0."``, ``"\\"NCHW\\""``);
    ``constraint`` names the base attribute def (``F32Attr``). Attributes of kinds tdflow does
    not model (bit enums, ...) have kind ``"other"`` and keep their default as text. An
    ``enum``/``enum_array`` attribute (``I32EnumAttr``) has its cases in ``enum``
    (:class:`~tdflow.dialect.attr_kinds.EnumInfo`).
    """

    name: str
    kind: str
    constraint: str
    default: Any = None
    default_text: str | None = None
    required: bool = True
    optional: bool = False
    enum: Any = None
    #: what the value is, from the record's ``TDF_AxisAttr``/``TDF_AxesAttr``/``TDF_PairAttr``
    #: wrapper (:class:`~tdflow.dialect.attr_normalize.AttrRule`), or ``None``
    rule: AttrRule | None = field(default=None, compare=False)  # tdflow's, not the kind's

    @property
    def has_default(self) -> bool:
        return self.default_text is not None


@value_class(frozen=True, slots=True)
class TraitDef:
    """A trait with its template arguments (``ParamNativeOpTrait<"HasParent", "FuncOp">``)."""

    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}<{', '.join(self.args)}>" if self.args else self.name


@value_class(frozen=True)
class OpDef:
    """One op of a dialect.

    ``name`` is qualified (``tdflow.leaky_relu``), ``mnemonic`` is not; ``hooks`` lists the
    ``has_*_fn`` flags set to 1, in OneFlow's order; ``record`` is the TableGen def name.
    """

    mnemonic: str
    dialect: str
    operands: tuple[ValueDef, ...] = ()
    results: tuple[ValueDef, ...] = ()
    attributes: tuple[AttrDef, ...] = ()
    traits: tuple[TraitDef, ...] = ()
    hooks: tuple[str, ...] = ()
    #: OneFlow's ``op_conf_attrs`` (``op_name``, ``device_tag``, ``device_name``, ...): checked by
    #: the verifier like attributes (known names, required ones present, kinds), but not the
    #: op's own: hooks, kernels and serving (``op_shape``) never see them.
    op_conf_attrs: tuple[AttrDef, ...] = ()
    #: OneFlow's ``ctrl_input``/``ctrl_output`` (``Variadic<AnyType>:$ctrl_inputs``,
    #: ``Optional<AnyType>:$ctrl_output``): control edges, after the data operands and results
    #: in the IR (and in the segment sizes) but no data: hooks and kernels never see them.
    ctrl_operands: tuple[ValueDef, ...] = ()
    ctrl_results: tuple[ValueDef, ...] = ()
    summary: str = ""
    description: str = ""
    location: SourceLocation | None = None
    record: str = ""
    #: the checked ``formula`` field (:class:`~tdflow.dialect.formula.CheckedFormula`), if any
    formula: Any = field(default=None, compare=False, repr=False)
    #: the ``signature`` field: one functional signature per line, each with where it is
    signatures: tuple[tuple[str, SourceLocation | None], ...] = field(default=(), compare=False,
                                                                        repr=False)
    #: the ``grad`` field's text and where it starts (file, line, col); parsed and checked by
    #: :mod:`tdflow.dialect.grad` when the context is loaded or a gradient is first needed
    grad_code: str | None = field(default=None, compare=False, repr=False)
    grad_loc: tuple[str, int, int] | None = field(default=None, compare=False, repr=False)
    #: defined on a foreign ODS base (MLIR's ``OpBase.td``, as OneFlow's own ``.td`` is), not
    #: on ``tdflow/Base.td``: its ``has_*_fn`` bits name that framework's C++ hooks, which tdflow
    #: does not have, so a missing Python hook is not a forgotten ``--hooks`` (see
    #: ``docs/mlir-compat.md``, "Missing hooks")
    foreign: bool = field(default=False, compare=False)
    _attr_index: dict[str, AttrDef] = field(default_factory=dict, repr=False, compare=False)
    _trait_names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_attr_index", {a.name: a for a in self.attributes})
        object.__setattr__(self, "_trait_names", frozenset(t.name for t in self.traits))

    @property
    def name(self) -> str:
        return f"{self.dialect}.{self.mnemonic}"

    def attr(self, name: str) -> AttrDef | None:
        """The attribute called ``name``, or ``None``."""
        return self._attr_index.get(name)

    def has_trait(self, name: str) -> bool:
        return name in self._trait_names

    @property
    def trait_names(self) -> frozenset[str]:
        return self._trait_names

    @property
    def hook_kinds(self) -> tuple[str, ...]:
        """The hook kinds the op declares (``infer_data_type``, ...), from its flags."""
        return tuple(FLAG_TO_HOOK[f] for f in self.hooks)

    def declares(self, hook_kind: str) -> bool:
        return HOOK_TO_FLAG.get(hook_kind) in self.hooks

    @property
    def formula_hooks(self) -> tuple[str, ...]:
        """The hook kinds its formula provides (an ``Elementwise`` op with a ``formula``), in
        :data:`FORMULA_HOOKS`'s order; ``()`` for an op without a formula."""
        if self.formula is None or not self.has_trait("Elementwise"):
            return ()
        return FORMULA_HOOKS

    def provides(self, hook_kind: str) -> bool:
        """Whether the op has a ``hook_kind`` rule: declared (a Python hook) or its formula's.

        >>> from tdflow.dialect import standard_dialect
        >>> relu = standard_dialect().lookup("tdflow.relu")
        >>> relu.declares("get_sbp"), relu.provides("get_sbp"), relu.provides("check_attr")
        (False, True, False)
        """
        return self.declares(hook_kind) or hook_kind in self.formula_hooks

    @property
    def operand_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.operands)

    @property
    def result_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.results)

    @property
    def has_variable_operands(self) -> bool:
        return any(not o.is_single for o in self.operands)

    @property
    def pure(self) -> bool:
        """Free of side effects (``NoMemoryEffect``/``NoSideEffect``): safe to DCE and CSE."""
        return "NoMemoryEffect" in self._trait_names or "NoSideEffect" in self._trait_names
