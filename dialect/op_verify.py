"""Op-specific verification: what the IR's structural verifier asks the dialect about each op.

``verify_operation(dialect, op, emit)`` checks, reporting every problem through ``emit``:

1. operand and result counts, with optional/variadic groups sized by ``operandSegmentSizes``
   (required with ``AttrSizedOperandSegments``, as in MLIR);
   OneFlow's control edges (``ctrl_inputs``/``ctrl_output``) come after the data operands and
   results, sized by the same attributes; only the data ones reach traits and hooks;
2. attributes: missing required ones, values of the wrong kind (absent ones take their ``.td``
   default); a name the op does not declare is MLIR's *discardable* attribute: kept on the op,
   printed back and seen by passes, but a *warning* here (with "did you mean" when close to a
   declared name; ``verify_module(..., strict_attrs=True)`` makes it an error), and never given
   to hooks, kernels or memo keys (:func:`declared_attributes`);
3. operand element types allowed by the operand's constraint (``TensorOf<[F32, F64]>``);
4. traits: ``SameOperandsAndResultType``/``Shape``/``ElementType``;
5. the op's ``check_attr`` hook, then inference: declared result types must agree with what the
   hooks compute (``?`` dims and unranked results are refinable, not errors); an op built on
   tdflow/Base.td whose declared hooks have no Python is an error (a forgotten ``--hooks``),
   while a foreign op (OneFlow's own ``.td``) without them is verified by its ODS alone, as
   ``oneflow-opt`` does (:func:`missing_hooks`, :func:`results_checked`).

Messages follow ``mlir-opt``: ``'tdflow.matmul' op <what is wrong, what was expected>``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .attr_convert import describe, to_value
from .attr_kinds import kind_description
from .infer import SEGMENT_ATTR, InferError, infer_types
from .ir.attrs import FloatAttr
from .oneflow_types import same_data_type, tdflow_type
from .opdef import HOOK_TO_FLAG, OpDef
from .segments import SegmentError, check_sizes, describe_arity, split_sizes
from .types import TensorType
from .verify_memo import BY_ID, memo_key, memo_plan

if TYPE_CHECKING:  # the IR's operation (dialect/ir/core.py imports nothing of the dialect's)
    from .ir.core import Operation

RESULT_SEGMENT_ATTR = "resultSegmentSizes"
#: The spellings before MLIR 17, which OneFlow still prints; accepted beside the new ones.
OLD_SEGMENT_ATTR = "operand_segment_sizes"
OLD_RESULT_SEGMENT_ATTR = "result_segment_sizes"
_OPERAND_SEGMENT_ATTRS = (SEGMENT_ATTR, OLD_SEGMENT_ATTR)
_RESULT_SEGMENT_ATTRS = (RESULT_SEGMENT_ATTR, OLD_RESULT_SEGMENT_ATTR)


def segment_attr_name(op: Operation) -> str:
    """The name an IR op gives its operand segment sizes: ``operandSegmentSizes``, or OneFlow's
    older ``operand_segment_sizes`` when only that one is present."""
    attrs = op.attributes
    if SEGMENT_ATTR not in attrs and OLD_SEGMENT_ATTR in attrs:
        return OLD_SEGMENT_ATTR
    return SEGMENT_ATTR


class _VerifyInfo:
    """Per-op facts for verification, computed once per op definition."""

    __slots__ = ("all_single", "n_operands", "single_results", "n_results", "sized",
                 "sized_results", "same_type", "same_shape", "same_elem", "dtypes", "attr_names",
                 "op_conf", "in_defs", "out_defs", "ctrl", "declared")

    def __init__(self, op: OpDef) -> None:
        # every operand and result group the IR holds: the data ones, then OneFlow's ctrl ones
        self.in_defs = op.operands + op.ctrl_operands
        self.out_defs = op.results + op.ctrl_results
        self.ctrl = bool(op.ctrl_operands or op.ctrl_results)
        self.all_single = all(d.is_single for d in self.in_defs)
        self.n_operands = len(self.in_defs)
        self.single_results = all(r.is_single for r in self.out_defs)
        self.n_results = len(self.out_defs)
        self.sized = op.has_trait("AttrSizedOperandSegments")
        self.sized_results = op.has_trait("AttrSizedResultSegments")
        self.same_type = op.has_trait("SameOperandsAndResultType")
        self.same_shape = op.has_trait("SameOperandsAndResultShape")
        self.same_elem = op.has_trait("SameOperandsAndResultElementType")
        self.dtypes = any(o.dtypes is not None for o in op.operands + op.results)
        self.attr_names = [a.name for a in op.attributes]
        self.op_conf = {a.name: a for a in op.op_conf_attrs}
        # names that are the op's own (inherent, in MLIR's words); the segment sizes are an
        # op's own only when it has groups to size (result ones are accepted on any op)
        self.declared = frozenset(self.attr_names) | frozenset(self.op_conf) | frozenset(
            _RESULT_SEGMENT_ATTRS) | (frozenset() if self.all_single else frozenset(
                _OPERAND_SEGMENT_ATTRS))


_INFOS: dict[int, tuple[OpDef, _VerifyInfo]] = {}


def _vinfo(op: OpDef) -> _VerifyInfo:
    hit = _INFOS.get(id(op))
    if hit is not None and hit[0] is op:
        return hit[1]
    info = _VerifyInfo(op)
    _INFOS[id(op)] = (op, info)
    return info


def segment_sizes(op: Operation) -> tuple[int, ...] | None:
    """The ``operandSegmentSizes`` of an IR op as ints, ``None`` when absent or malformed."""
    attr = op.attributes.get(segment_attr_name(op))
    if attr is None:
        return None
    return _int_tuple(attr)


def result_segment_sizes(op: Operation) -> tuple[int, ...] | None:
    """The ``resultSegmentSizes`` (or OneFlow's ``result_segment_sizes``) of an IR op as ints,
    ``None`` when absent or malformed."""
    attrs = op.attributes
    attr = attrs.get(RESULT_SEGMENT_ATTR)
    if attr is None:
        attr = attrs.get(OLD_RESULT_SEGMENT_ATTR)
    return _int_tuple(attr)


def _int_tuple(attr: Any) -> tuple[int, ...] | None:
    vals = getattr(attr, "value", None)
    if not isinstance(vals, tuple) or not all(isinstance(getattr(v, "value", v), int)
                                              and not isinstance(getattr(v, "value", v), bool)
                                              for v in vals):
        return None
    return tuple(getattr(v, "value", v) for v in vals)


def operand_groups(opdef: OpDef, op: Operation) -> dict[str, list] | None:
    """Data operands of an IR op grouped by operand definition, or ``None`` if they do not fit
    (OneFlow's ctrl operands are left out)."""
    return _groups(_vinfo(opdef).in_defs, op.operands, segment_sizes(op), opdef.operands)


def result_groups(opdef: OpDef, op: Operation) -> dict[str, list] | None:
    """Data results of an IR op grouped by result definition, or ``None`` if they do not fit."""
    return _groups(_vinfo(opdef).out_defs, op.results, result_segment_sizes(op), opdef.results,
                   "result")


def data_values(opdef: OpDef, op: Operation) -> tuple[list, list] | None:
    """An IR op's data operands and results, without OneFlow's control edges (``None`` when the
    values do not fit the definition).

    >>> from tdflow.dialect.opdef import ValueDef
    >>> from tdflow.dialect.ir.core import Operation
    >>> d = OpDef("input", "oneflow", (ValueDef("in"),), (ValueDef("out"),),
    ...           ctrl_operands=(ValueDef("ctrl_inputs", arity="variadic"),),
    ...           ctrl_results=(ValueDef("ctrl_output", arity="optional"),))
    >>> x = Operation("t.x", [], ["tensor<f32>", "tensor<i1>"])
    >>> op = Operation("oneflow.input", list(x.results), ["tensor<f32>", "tensor<i1>"])
    >>> ins, outs = data_values(d, op)
    >>> [v.index for v in ins], [r.index for r in outs]
    ([0], [0])
    """
    if not (opdef.ctrl_operands or opdef.ctrl_results):
        return list(op.operands), list(op.results)
    ins, outs = operand_groups(opdef, op), result_groups(opdef, op)
    if ins is None or outs is None:
        return None
    return ([v for d in opdef.operands for v in ins[d.name]],
            [r for d in opdef.results for r in outs[d.name]])


def _groups(defs, values, sizes, wanted, what: str = "operand") -> dict[str, list] | None:
    try:
        if sizes is not None:
            sizes = check_sizes(defs, sizes, len(values), what)
        else:
            sizes = split_sizes(defs, len(values), what)
    except SegmentError:
        return None
    out, pos = {}, 0
    for d, n in zip(defs, sizes):
        out[d.name] = list(values[pos:pos + n])
        pos += n
    names = {d.name for d in wanted}
    return {k: v for k, v in out.items() if k in names} if len(wanted) != len(defs) else out


_VERIFIED_LIMIT = 65536


def discardable_attributes(opdef: OpDef, attrs) -> list[str]:
    """The names in ``attrs`` that ``opdef`` does not declare: MLIR's discardable attributes
    (OneFlow writes ``op_type_name`` and ``output_lbns`` on ops whose records lack them).

    >>> from tdflow.dialect import standard_dialect
    >>> discardable_attributes(standard_dialect().lookup("tdflow.leaky_relu"),
    ...                        {"alpha": 0.1, "note": "x"})
    ['note']
    """
    declared = _vinfo(opdef).declared
    return [name for name in attrs if name not in declared] if attrs else []


def declared_attributes(opdef: OpDef, attrs):
    """``attrs`` without the discardable ones (:func:`discardable_attributes`): what hooks,
    kernels and memo keys see. ``attrs`` itself when nothing is left out.

    >>> from tdflow.dialect import standard_dialect
    >>> declared_attributes(standard_dialect().lookup("tdflow.leaky_relu"),
    ...                     {"alpha": 0.1, "note": "x"})
    {'alpha': 0.1}
    """
    extra = discardable_attributes(opdef, attrs)
    if not extra:
        return attrs
    return {k: v for k, v in attrs.items() if k not in extra}


def missing_hooks(dialect, opdef: OpDef) -> list[str]:
    """The hook kinds ``opdef`` declares (``has_*_fn``) that no Python registers, neither its
    own nor the standard op's serving it.

    >>> from tdflow.dialect import standard_dialect
    >>> missing_hooks(standard_dialect(), standard_dialect().lookup("tdflow.relu"))
    []
    """
    if not opdef.hooks:
        return []
    hooks = dialect.hooks_of(opdef.name)
    # a served op whose standard op is a formula op has the formula's rules
    serving = dialect.hook_op(opdef.name)
    formula = serving.formula_hooks if serving is not None and serving is not opdef else ()
    return [kind for kind in opdef.hook_kinds if kind not in hooks and kind not in formula]


def results_checked(dialect, opdef: OpDef) -> bool:
    """Whether verification checks an op's result types: an inference hook (its own or a
    serving standard op's), a formula, or traits that determine them.

    >>> from tdflow.dialect import standard_dialect
    >>> results_checked(standard_dialect(), standard_dialect().lookup("tdflow.relu"))
    True
    """
    return bool(dialect.hook(opdef.name, "infer_logical_tensor_desc")
                or opdef.formula is not None or opdef.has_trait("SameOperandsAndResultType")
                or (opdef.has_trait("SameOperandsAndResultShape")
                    and opdef.has_trait("SameOperandsAndResultElementType")))


def verify_operation(dialect, op: Operation, emit) -> None:
    """Verify one op; instances identical in name, types and declared attributes to one
    already found valid are accepted at once (programs repeat the same layer over and over).
    Discardable attributes are warned about on every instance, and kept out of the memo key."""
    # The memo check runs for every op of a program: the helpers it would call are inlined.
    name = op.name
    attrs = op.attributes
    if dialect._version != dialect.registry.version:
        dialect.op_info(name)  # hooks changed: drops every memo
    info = dialect._infos.get(name)
    if info is None:
        info = dialect.op_info(name)
    plan = info.memo_plan
    if plan is None:
        plan = memo_plan(info, _vinfo(info.op).declared)
    blind = plan[1]
    if attrs and not plan[0].issuperset(attrs):
        # discardable_attributes: warned about on every op
        opdef = info.op
        extra = discardable_attributes(opdef, attrs)
        for xname in extra:
            emit(_unknown_attr(opdef, xname), severity="warning")
        attrs = {k: v for k, v in attrs.items() if k not in extra}
    # First the key by identity (hashed in C: no type's or attribute's __hash__ runs), then
    # the key by value (verify_memo.py says why both).
    verified = dialect._verified
    # identity_key(name, op, attrs, blind), built here: a call less per op, and the shapes
    # nearly every op has (one result, one or two operands) without a list comprehension
    # (a function call each in this Python)
    operands = op.operands
    res = op.results
    if len(res) == 1 and len(operands) == 1:
        ikey = (BY_ID, name, id(operands[0].type), None, id(res[0].type))
    elif len(res) == 1 and len(operands) == 2:
        ikey = (BY_ID, name, id(operands[0].type), id(operands[1].type), None,
                id(res[0].type))
    else:
        ikey = (BY_ID, name, *[id(v.type) for v in operands], None, *[id(r.type) for r in res])
    if attrs:
        tail = []
        for k, v in attrs.items():
            if type(v) is FloatAttr and k in blind:
                tail += (k, v.type)
            elif getattr(v, "holds_elements", False):
                ikey = None
                break
            else:
                tail += (k, id(v))
        if ikey is not None:
            ikey += tuple(tail)
    if ikey is not None and ikey in verified:
        return
    types = tuple([v.type for v in op.operands])
    results = tuple([r.type for r in op.results])
    key = memo_key(name, types, results, attrs, blind) if attrs else (name, types, results, ())
    if key is not None:
        try:
            if key in verified:
                _remember(verified, ikey, (types, results, tuple(attrs.values())))
                return
        except TypeError:  # an unhashable attribute value: verify without memo
            key = None
    count = [0]

    def counting_emit(*args, **kwargs) -> None:
        count[0] += 1
        emit(*args, **kwargs)

    _verify(dialect, op, attrs, counting_emit)
    if key is not None and not count[0]:
        _remember(verified, key, None)
        _remember(verified, ikey, (types, results, tuple(attrs.values())))


def _remember(verified: dict, key: tuple | None, keep) -> None:
    """Add ``key`` (``keep``: the objects whose ids it holds, kept alive with it)."""
    if key is None:
        return
    if len(verified) >= _VERIFIED_LIMIT:
        verified.clear()
    verified[key] = keep


def _verify(dialect, op: Operation, attrs, emit) -> None:
    """Every check but the discardable attributes' (``attrs``: the declared ones)."""
    opdef = dialect.ops[op.name]
    vi = _vinfo(opdef)
    name = op.name
    ok = True

    # 1. operand and result counts -----------------------------------------------------------
    operands = op.operands
    seg_name = segment_attr_name(op)
    if vi.all_single and seg_name not in attrs:
        if len(operands) != vi.n_operands:
            emit(f"'{name}' op expects {vi.n_operands} operand(s) "
                 f"({_names(vi.in_defs)}), got {len(operands)}")
            ok = False
    elif not _check_operand_segments(opdef, vi, op, emit):
        ok = False
    results = op.results
    if vi.single_results:
        if len(results) != vi.n_results:
            emit(f"'{name}' op has {vi.n_results} result(s) ({_names(vi.out_defs) or 'none'}), "
                 f"but {len(results)} {'is' if len(results) == 1 else 'are'} declared")
            ok = False
    elif not _check_result_segments(vi, op, emit):
        ok = False

    # 2. attributes ----------------------------------------------------------------------------
    for aname, value in attrs.items():
        adef = opdef.attr(aname) or vi.op_conf.get(aname)
        if adef is None:  # the segment sizes, checked with the counts
            continue
        if adef.kind == "other":
            continue
        try:
            to_value(adef.kind, value, adef.enum)
        except (TypeError, ValueError) as exc:
            expected = kind_description(adef.kind, adef.enum)
            detail = str(exc) if isinstance(exc, ValueError) else f"got {describe(value)}"
            emit(f"'{name}' op attribute '{aname}' expects {expected} ({adef.constraint}), {detail}")
            ok = False
    for adef in (*opdef.attributes, *opdef.op_conf_attrs):
        if adef.required and adef.name not in attrs:
            emit(f"'{name}' op requires attribute '{adef.name}' "
                 f"({kind_description(adef.kind, adef.enum)}, "
                 f"{adef.constraint})")
            ok = False

    # 3. operand and result types ------------------------------------------------------------
    for i, v in enumerate(operands):
        if not isinstance(v.type, TensorType):
            emit(f"'{name}' op operand #{i} must be a tensor, got {v.type}")
            ok = False
    for i, r in enumerate(results):
        if not isinstance(r.type, TensorType):
            emit(f"'{name}' op result #{i} must be a tensor, got {r.type}")
            ok = False
    if not ok:
        return
    if vi.dtypes:
        _check_dtypes(opdef, op, emit)
    data_results = results
    if vi.ctrl:  # traits and hooks see the data values only
        split = data_values(opdef, op)
        if split is None:
            return
        operands, data_results = split

    # 4. traits ----------------------------------------------------------------------------------
    if vi.same_type or vi.same_shape or vi.same_elem:
        if not _check_same(vi, op.name, operands, data_results, emit):
            return

    # 5. hooks: check_attr and inference -----------------------------------------------------------
    info = dialect.op_info(name)  # the op's hooks, cached until the registry changes
    if not opdef.foreign:
        # tdflow/Base.td's has_*_fn bits promise Python hooks: without them the results go
        # unchecked and `run` fails later, so a forgotten --hooks is an error now
        missing = info.missing
        if missing is None:
            missing = info.missing = missing_hooks(dialect, opdef)
        if missing:
            flags = ", ".join(HOOK_TO_FLAG[k] for k in missing)
            emit(f"'{name}' op declares {flags} but no Python registers its "
                 f"{'hook' if len(missing) == 1 else 'hooks'} ({', '.join(missing)}): pass the "
                 f"hooks module that registers {'it' if len(missing) == 1 else 'them'} "
                 f"(--hooks FILE.py, or load_ops(..., hooks=[...]))")
            return
    if not (info.logical is not None or info.check is not None
            or vi.same_type or opdef.formula is not None):  # a formula infers results too
        return
    types = [v.type for v in op.operands]  # all of them: the segment sizes count ctrl ones too
    speaks_oneflow = opdef.foreign and opdef.dialect == "oneflow"
    if speaks_oneflow and name in dialect.served_by:
        # the standard op's hooks compute in tdflow's element types: OneFlow's spellings
        # (si64 is its int64, i8 its bool) are read as OneFlow reads them
        types = [tdflow_type(t) for t in types]
    try:
        inferred = infer_types(info, types, attrs)
    except InferError as exc:
        what = ""
        if exc.attr and not re.search(rf"\b{re.escape(exc.attr)}\b", exc.message):
            what = f"attribute '{exc.attr}': "
        emit(f"'{name}' op {what}{exc.message}")
        return
    except Exception as exc:  # noqa: BLE001 - a bug in a hook is reported, not a crash
        emit(f"'{name}' op: one of its hooks failed with {type(exc).__name__}: {exc}")
        return
    for i, (r, t) in enumerate(zip(data_results, inferred)):
        declared = r.type
        if declared == t or t.refines(declared):
            continue
        if speaks_oneflow and declared.dtype != t.dtype and same_data_type(declared.dtype,
                                                                            t.dtype):
            t = TensorType(t.shape, declared.dtype)  # the same OneFlow DataType, as it prints
            if declared == t or t.refines(declared):
                continue
        rname = opdef.results[i].name if i < len(opdef.results) else str(i)
        if declared.dtype != t.dtype:
            emit(f"'{name}' op result #{i} ('{rname}') is declared {declared} but its element "
                 f"type is {t.dtype} (inferred {t})")
        elif not declared.compatible(t):
            emit(f"'{name}' op result #{i} ('{rname}') is declared {declared} but the operands "
                 f"give {t}")


def _names(defs) -> str:
    out = []
    for d in defs:
        suffix = "?" if d.is_optional else "..." if d.is_variadic else ""
        out.append(d.name + suffix)
    return ", ".join(out)


def _check_operand_segments(opdef: OpDef, vi: _VerifyInfo, op: Operation, emit) -> bool:
    name = op.name
    n = len(op.operands)
    seg_name = segment_attr_name(op)
    raw = op.attributes.get(seg_name)
    if raw is None:
        if vi.sized:
            example = ", ".join("1" if d.is_single else "0" for d in vi.in_defs)
            emit(f"'{name}' op requires attribute '{SEGMENT_ATTR}' (AttrSizedOperandSegments): "
                 f"one size per operand group ({_names(vi.in_defs)}), e.g. "
                 f"array<i32: {example}>")
            return False
        try:
            split_sizes(vi.in_defs, n)
        except SegmentError as exc:
            if "expects" in str(exc):
                emit(f"'{name}' op expects {describe_arity(vi.in_defs)} operands "
                     f"({_names(vi.in_defs)}), got {n}")
            else:
                emit(f"'{name}' op {exc} ({_names(vi.in_defs)})")
            return False
        return True
    sizes = segment_sizes(op)
    if sizes is None:
        emit(f"'{name}' op attribute '{seg_name}' must be a dense i32 array like "
             f"array<i32: 1, 1, 0>, got {describe(raw)}")
        return False
    try:
        check_sizes(vi.in_defs, sizes, n)
    except SegmentError as exc:
        emit(f"'{name}' op {exc} ({_names(vi.in_defs)})")
        return False
    return True


def _check_result_segments(vi: _VerifyInfo, op: Operation, emit) -> bool:
    """Result counts of an op with optional or variadic results (``resultSegmentSizes``, or
    OneFlow's ``result_segment_sizes``, when given; required with AttrSizedResultSegments)."""
    name, n = op.name, len(op.results)
    attrs = op.attributes
    seg_name = RESULT_SEGMENT_ATTR if (RESULT_SEGMENT_ATTR in attrs
                                       or OLD_RESULT_SEGMENT_ATTR not in attrs) else OLD_RESULT_SEGMENT_ATTR
    raw = attrs.get(seg_name)
    try:
        if raw is None:
            if vi.sized_results:
                example = ", ".join("1" if d.is_single else "0" for d in vi.out_defs)
                emit(f"'{name}' op requires attribute '{RESULT_SEGMENT_ATTR}' "
                     f"(AttrSizedResultSegments): one size per result group "
                     f"({_names(vi.out_defs)}), e.g. array<i32: {example}>")
                return False
            split_sizes(vi.out_defs, n, "result")
            return True
        sizes = _int_tuple(raw)
        if sizes is None:
            emit(f"'{name}' op attribute '{seg_name}' must be a dense i32 array like "
                 f"array<i32: 1, 0>, got {describe(raw)}")
            return False
        check_sizes(vi.out_defs, sizes, n, "result")
    except SegmentError as exc:
        emit(f"'{name}' op {exc} ({_names(vi.out_defs)})")
        return False
    return True


def _unknown_attr(opdef: OpDef, aname: str) -> str:
    names = [a.name for a in (*opdef.op_conf_attrs, *opdef.attributes)]
    msg = f"'{opdef.name}' op has no attribute '{aname}'"
    import difflib  # only for messages (start-up time)

    close = difflib.get_close_matches(aname, names, n=1, cutoff=0.6)
    if close:
        msg += f"; did you mean '{close[0]}'?"
    msg += f" (attributes: {', '.join(names)})" if names else " (it takes no attributes)"
    # MLIR's rule: an undeclared attribute is discardable, not an error
    return msg + "; kept as a discardable attribute"


def _check_dtypes(opdef: OpDef, op: Operation, emit) -> None:
    groups = operand_groups(opdef, op) or {}
    for d in opdef.operands:
        if d.dtypes is None:
            continue
        for v in groups.get(d.name, ()):
            if v.type.dtype not in d.dtypes:
                emit(f"'{op.name}' op operand '{d.name}' must have element type "
                     f"{' or '.join(d.dtypes)} ({d.constraint}), got {v.type}")
    for d, r in zip(opdef.results, op.results):
        if d.dtypes is not None and r.type.dtype not in d.dtypes:
            emit(f"'{op.name}' op result '{d.name}' must have element type "
                 f"{' or '.join(d.dtypes)} ({d.constraint}), got {r.type}")


def _check_same(vi: _VerifyInfo, name: str, operands, results, emit) -> bool:
    types = [v.type for v in operands] + [r.type for r in results]
    if not types:
        return True
    first = types[0]
    for t in types[1:]:
        if (vi.same_type or vi.same_elem) and t.dtype != first.dtype:
            trait = "SameOperandsAndResultType" if vi.same_type else "SameOperandsAndResultElementType"
            emit(f"'{name}' op requires the same element type for all operands and results "
                 f"({trait}), got {first} and {t}")
            return False
        if (vi.same_type or vi.same_shape) and not first.compatible(TensorType(t.shape, first.dtype)):
            trait = "SameOperandsAndResultType" if vi.same_type else "SameOperandsAndResultShape"
            emit(f"'{name}' op requires the same shape for all operands and results ({trait}), "
                 f"got {first} and {t}")
            return False
    return True
