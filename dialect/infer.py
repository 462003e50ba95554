"""Result-type inference through the hooks, with per-op metadata cached for the hot path.

:meth:`Dialect.infer_result_types <tdflow.dialect.dialect.Dialect.infer_result_types>` is what
eager calls and the ``infer-shapes`` pass use; this module holds its machinery.
"""

from __future__ import annotations

from typing import Any

from tdflow.core.errors import TdflowError

from .attr_convert import to_value
from .attr_normalize import normalize_attrs
from .element_types import FLOAT_DTYPES, INT_DTYPES
from .hooks._shape import broadcast_shapes as pair_broadcast
from .hooks._shape import fmt as _fmt
from .hooks.context import HookError, InferContext
from .opdef import OpDef
from .segments import SegmentError, group_flat
from .types import TensorType

SEGMENT_ATTR = "operandSegmentSizes"
RESULT_SEGMENT_ATTR = "resultSegmentSizes"
_CACHE_LIMIT = 8192


class InferError(TdflowError, ValueError):
    """An op instance its definition or hooks reject: names the op, and the attribute or
    operand at fault when known. ``message`` is the text without the op name."""

    def __init__(self, op: str, message: str, *, attr: str | None = None,
                 operand: str | None = None) -> None:
        super().__init__(f"'{op}': {message}")
        self.op = op
        self.message = message
        self.attr = attr
        self.operand = operand


class OpInfo:
    """Everything the hot path needs about one op, computed once per dialect and registry state."""

    __slots__ = ("op", "hook_op", "defaults", "kinds", "enums", "required", "operand_names",
                 "all_single", "check", "logical", "dtype", "fallback", "op_conf", "in_defs",
                 "ruled", "missing", "memo_plan")

    def __init__(self, op: OpDef, hooks: dict, hook_op: OpDef | None = None) -> None:
        self.op = op
        # The op the hooks were written for: a served op (oneflow.softmax) runs the standard
        # op's hooks (tdflow.softmax's), which may look themselves up by name, so they see the
        # standard op; its operands, results and attributes are the same (op_shape).
        self.hook_op = op if hook_op is None else hook_op
        self.defaults = {a.name: a.default for a in op.attributes
                         if a.default_text is not None}
        self.kinds = {a.name: a.kind for a in op.attributes}
        # attributes the record says how to normalize (TDF_AxisAttr, ...): hooks see them
        # normalized (attr_normalize.normalize_attrs); a served op by the serving op's rules
        self.ruled = any(a.rule is not None for a in self.hook_op.attributes)
        self.enums = {a.name: a.enum for a in op.attributes if a.enum is not None}
        # OneFlow's op_conf_attrs (op_name, device_tag, ...): checked by the verifier, not
        # given to hooks.
        self.op_conf = frozenset(a.name for a in op.op_conf_attrs)
        self.required = tuple(a.name for a in op.attributes if a.required)
        self.operand_names = op.operand_names
        # OneFlow's ctrl operands follow the data ones (and count in the segment sizes); they
        # are grouped, then dropped: hooks see data operands only.
        self.in_defs = op.operands + op.ctrl_operands
        self.all_single = all(d.is_single for d in self.in_defs)
        self.check = hooks.get("check_attr")
        self.logical = hooks.get("infer_logical_tensor_desc")
        self.dtype = hooks.get("infer_data_type")
        # Without hooks, `SameOperandsAndResultType` still determines the results (MLIR ops).
        self.fallback = (op.has_trait("SameOperandsAndResultType")
                         or op.has_trait("SameOperandsAndResultShape")
                         and op.has_trait("SameOperandsAndResultElementType"))
        # the verifier's op_verify.missing_hooks, computed there on first use
        self.missing: list[str] | None = None
        # the verifier's memo: (declared attribute names, those whose float values it leaves
        # out of its key), verify_memo.memo_plan, computed there on first use
        self.memo_plan: tuple | None = None


def typed_attrs(info: OpInfo, attrs: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
    """Attributes as typed Python values with defaults filled in, and the segment sizes."""
    typed = dict(info.defaults)
    sizes = None
    if attrs:
        kinds = info.kinds
        for name, value in attrs.items():
            kind = kinds.get(name)
            if kind is None:
                if name == SEGMENT_ATTR or name == "operand_segment_sizes":  # OneFlow's spelling
                    sizes = tuple(getattr(value, "value", value))
                    continue
                if name in (RESULT_SEGMENT_ATTR, "result_segment_sizes") or name in info.op_conf:
                    continue
                known = ", ".join(kinds) or "none"
                raise InferError(info.op.name, f"unknown attribute '{name}' (attributes: {known})",
                                 attr=name)
            if value is None:
                continue  # explicit None: take the default
            try:
                typed[name] = to_value(kind, value, info.enums.get(name) if info.enums else None)
            except (TypeError, ValueError) as exc:
                raise InferError(info.op.name, f"attribute '{name}': {exc}", attr=name) from None
    for name in info.required:
        if name not in typed:
            raise InferError(info.op.name, f"missing required attribute '{name}' "
                                           f"({info.kinds[name]})", attr=name)
    return typed, sizes


def group_inputs(info: OpInfo, input_types, sizes) -> dict[str, list[TensorType]]:
    if isinstance(input_types, dict):
        out = {}
        for d in info.op.operands:
            v = input_types.get(d.name)
            out[d.name] = [] if v is None else list(v) if isinstance(v, (list, tuple)) else [v]
        return out
    if info.all_single and sizes is None:
        names = info.operand_names
        if len(input_types) != len(names) or None in input_types:
            raise InferError(info.op.name, f"expected {len(names)} operand(s) "
                                           f"({', '.join(names)}), got {len(input_types)}")
        return {n: [t] for n, t in zip(names, input_types)}
    try:
        groups = group_flat(info.in_defs, list(input_types), sizes)
    except SegmentError as exc:
        raise InferError(info.op.name, str(exc)) from None
    if len(info.in_defs) != len(info.op.operands):
        for d in info.op.ctrl_operands:
            groups.pop(d.name, None)
    return groups


def infer_types(info: OpInfo, input_types, attrs: dict[str, Any] | None) -> list[TensorType]:
    """:meth:`Dialect.infer_result_types <tdflow.dialect.dialect.Dialect.infer_result_types>`
    without its result cache: what the verifier runs for an (op, types, attributes) it has not
    seen (its own memo holds the ones it has).

    >>> from tdflow.dialect import standard_dialect
    >>> infer_types(standard_dialect().op_info("tdflow.relu"), [TensorType((2,), "f32")], {})
    [TensorType(shape=(2,), dtype='f32')]
    """
    typed, sizes = typed_attrs(info, attrs)
    return run_inference(info, group_inputs(info, input_types, sizes), typed)


def run_inference(info: OpInfo, inputs: dict[str, list[TensorType]],
                  attrs: dict[str, Any]) -> list[TensorType]:
    """Run check_attr, logical tensor desc and data type hooks; the inferred result types."""
    op = info.op
    try:
        if info.ruled:
            attrs = normalize_attrs(op, attrs, inputs, info.hook_op)
        ctx = InferContext(info.hook_op, inputs, attrs)
        if info.check is not None:
            info.check(ctx)
        if info.logical is not None:
            info.logical(ctx)
            if info.dtype is not None:
                info.dtype(ctx)
            elif info.fallback:
                first = _first_input(ctx)
                for name, i in ctx.output_names():
                    ctx.set_output_dtype(name, first.dtype, i)
        elif op.formula is not None or info.hook_op.formula is not None:
            # the formula (its own, or the serving standard op's) gives shapes and dtypes; a
            # data type hook the op declares (what the formula cannot say, e.g. where's) then
            # decides the dtypes
            fop = op if op.formula is not None else info.hook_op
            types = formula_result_types(fop, [ctx.input(n, i) for n, i in ctx.input_names()],
                                         attrs)
            if info.dtype is None:
                return types
            for (name, i), t in zip(ctx.output_names(), types):
                ctx.set_output_shape(name, t.shape, i)
            info.dtype(ctx)
        elif info.fallback:
            first = _first_input(ctx)
            return [first] * len(op.results)
        elif op.declares("infer_logical_tensor_desc"):  # declared: its Python was not loaded
            raise HookError(f"no infer_logical_tensor_desc hook is registered for '{op.name}', "
                            f"which declares has_logical_tensor_desc_infer_fn: pass the hooks "
                            f"module that registers it (--hooks FILE.py, or "
                            f"load_ops(..., hooks=[...]))")
        else:
            raise HookError(f"no infer_logical_tensor_desc hook is registered for '{op.name}' "
                            f"(declare has_logical_tensor_desc_infer_fn and register one with "
                            f"@infer_logical_tensor_desc(\"{op.name}\"))")
        return ctx.output_types()
    except HookError as exc:
        raise InferError(op.name, exc.message, attr=exc.attr, operand=exc.operand) from None
    except TdflowError:
        raise  # already a diagnostic
    except Exception as exc:  # noqa: BLE001 - a bug in a hook: located, never a raw traceback
        raise InferError(op.name, hook_failure(exc)) from exc


def hook_failure(exc: BaseException) -> str:
    """What a hook's own exception says, located in the hook's code: the hook function (its
    file and the line that failed) and, when the error came from deeper, where it was raised
    (``tests/dialect/test_hooks.py`` shows the messages on a user's hooks file).
    """
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    text = f"failed with {type(exc).__name__}: {exc}"
    if not frames:
        return f"its hook {text}"
    hook, last = frames[0], frames[-1]
    where = f"its hook {hook.name} ({hook.filename}:{hook.lineno}) {text}"
    if last is not hook:
        where += f" (raised in {last.name} at {last.filename}:{last.lineno})"
    return where


_FORMULA_RESULTS: dict[tuple, tuple[OpDef, Any, tuple]] = {}
_ABSENT = object()


def formula_result_types(op: OpDef, inputs: list[TensorType],
                         attrs: dict[str, Any]) -> list[TensorType]:
    """Results of a formula op without inference hooks: the operands' broadcast shape (numpy's
    rule) and the element types the formula computes. Operand 0's type must be one the formula
    admits, as its kernel does.

    They depend on the operand types and the type-deciding attributes only, so they are
    memoized on those: ops that differ only in a constant (every ``leaky_relu`` its own
    ``alpha``) infer once. Errors are not memoized (each op reports its own).

    >>> from tdflow.dialect import standard_dialect
    >>> op = standard_dialect().lookup("tdflow.broadcast_add")
    >>> formula_result_types(op, [TensorType((4, 1), "f32"), TensorType((3,), "f32")], {})
    [TensorType(shape=(4, 3), dtype='f32')]
    """
    from .formula.dtypes import type_deciding_attrs

    checked = op.formula
    try:
        key = (id(op), tuple(inputs),
               tuple([(k, attrs.get(k, _ABSENT)) for k in type_deciding_attrs(checked)]))
        hit = _FORMULA_RESULTS.get(key)
    except TypeError:  # an unhashable attribute value (a list): no memo
        key = hit = None
    if hit is not None and hit[0] is op and hit[1] is checked:
        return list(hit[2])
    types = _formula_result_types(op, checked, inputs, attrs)
    if key is not None:
        bounded_put(_FORMULA_RESULTS, key, (op, checked, tuple(types)))
    return types


def _formula_result_types(op: OpDef, checked, inputs: list[TensorType],
                          attrs: dict[str, Any]) -> list[TensorType]:
    from .formula.dtypes import formula_dtypes, result_dtypes

    check_operands(op, inputs)
    admitted = formula_dtypes(checked)
    if inputs and inputs[0].dtype not in admitted:
        name = op.operands[0].name
        if set(admitted) == set(FLOAT_DTYPES):  # the words a float-only hook used
            raise HookError(f"'{name}' must be a floating-point tensor "
                            f"({', '.join(FLOAT_DTYPES)}), got {inputs[0].dtype}", operand=name)
        if set(admitted) == set(INT_DTYPES + FLOAT_DTYPES):  # ... and a number-only one
            raise HookError(f"'{name}' must be a number tensor "
                            f"({', '.join(INT_DTYPES + FLOAT_DTYPES)}), got {inputs[0].dtype}",
                            operand=name)
        order = ("i1",) + INT_DTYPES + FLOAT_DTYPES
        raise HookError(f"operand '{name}' has element type {inputs[0].dtype}; "
                        f"the formula admits {'|'.join(d for d in order if d in admitted)}",
                        operand=name)
    shape = _broadcast_named([o.name for o in op.operands], [t.shape for t in inputs])
    dtypes = result_dtypes(checked, [t.dtype for t in inputs], attrs)
    return [TensorType(shape, dt) for dt in dtypes]


def _broadcast_named(names: list[str], shapes: list) -> tuple | None:
    """numpy's broadcast of the operands' shapes, an error naming the operands that clash
    (``shapes [4, 8] of 'x' and [3, 8] of 'y' do not broadcast: dim 0 is 4 vs 3``)."""
    if len(names) != len(shapes) or not shapes:
        return broadcast_shapes(shapes)
    order = list(range(len(names)))
    if len(order) >= 3:  # a selecting first operand (where's condition) after what it selects
        order = order[1:] + order[:1]
    names, shapes = [names[i] for i in order], [shapes[i] for i in order]
    shape, seen = shapes[0], names[0]
    for name, other in zip(names[1:], shapes[1:]):
        shape = pair_broadcast(shape, other, names=(seen, name))
        seen = f"{seen} and {name}"
    return shape


def check_operands(op: OpDef, inputs: list[TensorType]) -> None:
    """What a formula op's record says of its operands beyond the formula: each operand's
    type constraint (``TensorOf<[I1, I8]>``), and MLIR's operand traits
    ``SameOperandsElementType`` (OneFlow's ``broadcast_*`` ops take one element type) and
    ``SameOperandsShape`` (a gradient op's operands are not broadcast). Raises ``HookError``
    naming the operand at fault.

    >>> from tdflow.dialect import standard_dialect
    >>> op = standard_dialect().lookup("tdflow.broadcast_add")
    >>> check_operands(op, [TensorType((2,), "f32"), TensorType((2,), "i32")])
    Traceback (most recent call last):
    ...
    tdflow.dialect.hooks.context.HookError: 'y' has element type i32 but 'x' has f32; they must match
    """
    names = [o.name for o in op.operands]
    for d, t in zip(op.operands, inputs):
        if d.dtypes is not None and t.dtype not in d.dtypes:
            raise HookError(f"operand '{d.name}' has element type {t.dtype}; {op.name} takes "
                            f"{'|'.join(d.dtypes)} ({d.constraint})", operand=d.name)
    if len(inputs) < 2 or len(names) < len(inputs):
        return
    first = inputs[0]
    if op.has_trait("SameOperandsElementType"):
        for name, t in zip(names[1:], inputs[1:]):
            if t.dtype != first.dtype:
                raise HookError(f"'{name}' has element type {t.dtype} but '{names[0]}' has "
                                f"{first.dtype}; they must match", operand=name)
    if op.has_trait("SameOperandsShape") and first.shape is not None:
        for name, t in zip(names[1:], inputs[1:]):
            if t.shape is None:
                continue
            same = len(t.shape) == len(first.shape) and all(
                a is None or b is None or a == b for a, b in zip(t.shape, first.shape))
            if not same:
                raise HookError(f"'{name}' has shape {_fmt(t.shape)} but '{names[0]}' has "
                                f"{_fmt(first.shape)}; they must match", operand=name)


def broadcast_shapes(shapes: list) -> tuple | None:
    """numpy's broadcast of ``shapes``, where a dim may be unknown (``None``) and a shape
    unranked (``None``); raises ``HookError`` for shapes that do not broadcast.

    >>> broadcast_shapes([(4, 1), (None, 3)]), broadcast_shapes([(2,), None])
    ((4, 3), None)
    """
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise HookError(f"operand shapes {' and '.join(str(list(s)) for s in shapes)} do "
                            f"not broadcast")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _first_input(ctx: InferContext) -> TensorType:
    for name, i in ctx.input_names():
        return ctx.input(name, i)
    raise HookError("cannot infer result types without operands")


def holds_constant(attrs) -> bool:
    """Whether an attribute is a tensor constant (``dense<...>``, ``dense_resource<...>``).
    Memos keyed by attributes skip such ops: the key would pin the constant, and a blob's
    attribute its module's whole blob table (a process that runs many models would keep all
    their weights), while each constant op is unique anyway.

    >>> holds_constant({"axis": 1}), holds_constant(None)
    (False, False)
    """
    return bool(attrs) and any(getattr(v, "holds_elements", False) for v in attrs.values())


def cache_key(op_name: str, input_types, attrs) -> tuple | None:
    """A hashable key for the result cache, or ``None`` when the arguments are not hashable
    or hold a constant (:func:`holds_constant`)."""
    if isinstance(input_types, dict) or holds_constant(attrs):
        return None
    try:
        key = (op_name, tuple(input_types), tuple(attrs.items()) if attrs else ())
        hash(key)
    except TypeError:
        return None
    return key


def bounded_put(cache: dict, key, value) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
