"""The ODS reader: TableGen records -> :class:`~tdflow.dialect.opdef.OpDef`.

Op records are found by shape, not by name:

* OneFlow's convention (``OneFlow_BaseOp``, ``TDF_Op``): ``input``/``output``/``attrs`` dags.
  When a record also has MLIR's ``arguments``/``results`` (OneFlow's are ``!con(input, ...,
  attrs)``), OneFlow's fields win.
* MLIR's ``Op``: ``arguments`` (operands and attributes; an argument is an attribute when its
  record derives from ``Attr``) and ``results``.

>>> from tdflow.tdparser import parse_file                   # doctest: +SKIP
>>> ops = read_ops(parse_file("ops.td", ["dialect/include"]))  # doctest: +SKIP
>>> ops[0].name                                               # doctest: +SKIP
'tdflow.relu'
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from tdflow.tdparser.errors import TdError
from tdflow.tdparser.records import Dag, DefRef, Record, RecordKeeper

from tdflow.core.valueclass import replace

from .attr_kinds import KIND_BY_ATTR, SCALAR_KINDS, DefaultError, EnumInfo, parse_default
from .opdef import (
    FLAG_TO_HOOK,
    OPTIONAL,
    RULE_KINDS,
    SINGLE,
    VARIADIC,
    AttrDef,
    AttrRule,
    OpDef,
    SourceLocation,
    TraitDef,
    ValueDef,
)

# Element type def name -> dtype, for constraints like TensorOf<[F32, F64]> (records without
# Base.td's `tdfDtype` field, e.g. MLIR's own F32).
_DTYPE_BY_TYPE = {
    "F16": "f16", "BF16": "bf16", "F32": "f32", "F64": "f64", "I1": "i1", "I8": "i8",
    "I32": "i32", "I64": "i64", "SI32": "i32", "SI64": "i64", "SI8": "i8", "I16": "i16",
    "UI8": "ui8", "UI16": "ui16", "UI32": "ui32", "UI64": "ui64",
}


def is_op_record(rec: Record) -> bool:
    """True for an op definition of either convention."""
    if rec.is_class:
        return False
    f = rec.fields
    if isinstance(f.get("input"), Dag) and isinstance(f.get("output"), Dag):
        return True
    return rec.isa("Op") and isinstance(f.get("arguments"), Dag) and isinstance(
        f.get("results"), Dag)


def read_ops(rk: RecordKeeper, default_dialect: str = "tdflow",
             file_hint: str | None = None, search_dirs: Iterable[str] = ()) -> list[OpDef]:
    """Every op record of ``rk`` as an :class:`OpDef`, in definition order.

    Raises :class:`TdError` at the op's location for a default that does not parse or a
    malformed operand list.
    """
    reader = _Reader(rk, default_dialect, file_hint, tuple(search_dirs))
    ops: list[OpDef] = []
    seen: dict[str, OpDef] = {}
    for rec in rk.defs.values():
        if not is_op_record(rec):
            continue
        op = reader.op(rec)
        prev = seen.get(op.name)
        if prev is not None:
            raise defined_twice(prev, op)
        seen[op.name] = op
        ops.append(op)
    if reader.formula_jobs:
        ops = reader.attach_formulas(ops)
    return ops


def defined_twice(first: OpDef, second: OpDef) -> TdError:
    """The error for two definitions of one qualified op name (in one file or two libraries),
    at the second, naming both."""
    where = f" ({first.location})" if first.location else ""
    loc = second.location
    return TdError(f"op '{second.name}' is defined twice: by {first.record}{where} and by "
                   f"{second.record}", *((loc.file, loc.line, loc.col) if loc else ()))


class _Reader:
    def __init__(self, rk: RecordKeeper, default_dialect: str, file_hint: str | None,
                 search_dirs: tuple[str, ...]) -> None:
        self.rk = rk
        self.default_dialect = default_dialect
        self.file_hint = file_hint
        self.search_dirs = search_dirs
        self._kind_cache: dict[str, str] = {}
        self._enum_cache: dict[str, EnumInfo | None] = {}
        self._sources: dict[str, str | None] = {}
        self.formula_jobs: list[tuple[OpDef, str]] = []  # (op, formula text), in load order

    # -- records -------------------------------------------------------------------------
    def rec(self, value) -> Record | None:
        if isinstance(value, DefRef):
            return self.rk.defs.get(value.name) or self.rk.classes.get(value.name)
        return None

    def location(self, rec: Record) -> SourceLocation | None:
        loc = rec.loc
        if loc is None:
            return None
        file = loc.file
        if not os.path.isabs(file) and not os.path.exists(file):
            # llvm-tblgen's JSON names files by base name; find the real path for carets.
            cands = ([os.path.dirname(self.file_hint)] if self.file_hint else []) + [
                os.path.join(d, "tdflow") for d in self.search_dirs] + list(self.search_dirs)
            for d in cands:
                p = os.path.join(d, file)
                if os.path.isfile(p):
                    file = p
                    break
        return SourceLocation(file, loc.line, loc.col or 1)

    def error(self, rec: Record, message: str) -> TdError:
        loc = self.location(rec)
        if loc is None:
            return TdError(message)
        return TdError(message, loc.file, loc.line, loc.col)

    # -- ops -----------------------------------------------------------------------------
    def op(self, rec: Record) -> OpDef:
        f = rec.fields
        oneflow = isinstance(f.get("input"), Dag) and isinstance(f.get("output"), Dag)
        drec = self.rec(f.get("opDialect"))
        mnemonic, dialect = op_name_parts(rec, drec, self.default_dialect)
        _check_names(self, rec, drec, mnemonic, dialect)
        operands: list[ValueDef] = []
        attrs: list[AttrDef] = []
        op_conf: list[AttrDef] = []
        ctrl_in: list[ValueDef] = []
        ctrl_out: list[ValueDef] = []
        if oneflow:
            for value, name in f["input"].args:
                operands.append(self.value_def(rec, value, name, "input"))
            results = [self.value_def(rec, v, n, "output") for v, n in f["output"].args]
            # OneFlow_UserBaseOp's user_op_attrs (op_type_name, input_sizes, output_sizes) are
            # arguments of `oneflow.user` like its attrs
            for dag_name in ("user_op_attrs", "attrs"):
                attr_dag = f.get(dag_name)
                if isinstance(attr_dag, Dag):
                    for value, name in attr_dag.args:
                        attrs.append(self.attr_def(rec, value, name))
            conf_dag = f.get("op_conf_attrs")  # OneFlow_BaseOp: op_name, device_tag, ...
            if isinstance(conf_dag, Dag):
                op_conf = [self.attr_def(rec, value, name) for value, name in conf_dag.args]
            # OneFlow_Op & co: control edges, after the data ones in `arguments`/`results`
            for field_name, where, out in (("ctrl_input", "ctrl_input", ctrl_in),
                                           ("ctrl_output", "ctrl_output", ctrl_out)):
                ctrl_dag = f.get(field_name)
                if isinstance(ctrl_dag, Dag):
                    out.extend(self.value_def(rec, v, n, where) for v, n in ctrl_dag.args)
        else:
            # MLIR's ODS lets operands and results go unnamed (Toy's `(outs F64Tensor)`: its
            # C++ reaches them by index); they are named by position, `operand0`, `result0`.
            for value, name in f["arguments"].args:
                arec = self.rec(value)
                if arec is not None and (arec.isa("Attr") or arec.isa("Property")):
                    attrs.append(self.attr_def(rec, value, name))
                else:
                    operands.append(self.value_def(rec, value, name or f"operand{len(operands)}",
                                                   "arguments"))
            results = [self.value_def(rec, v, n or f"result{i}", "results")
                       for i, (v, n) in enumerate(f["results"].args)]
        _check_unique(self, rec, operands + ctrl_in, results + ctrl_out, attrs)
        hooks = tuple(flag for flag in FLAG_TO_HOOK if f.get(flag) == 1)
        opdef = OpDef(
            mnemonic=mnemonic,
            dialect=dialect,
            operands=tuple(operands),
            results=tuple(results),
            attributes=tuple(attrs),
            op_conf_attrs=tuple(op_conf),
            ctrl_operands=tuple(ctrl_in),
            ctrl_results=tuple(ctrl_out),
            traits=tuple(self.traits(f.get("traits"))),
            hooks=hooks,
            summary=_text(f.get("summary")),
            description=_text(f.get("description")),
            location=self.location(rec),
            record=rec.name,
            # tdflow/Base.td's `Op` declares `formula` (unset unless given); MLIR's does not
            foreign="formula" not in f,
        )
        sig = f.get("signature")
        if isinstance(sig, str) and sig.strip():
            opdef = replace(opdef, signatures=self.signature_lines(opdef, sig))
        grad = f.get("grad")
        if isinstance(grad, str) and grad.strip():
            opdef = replace(opdef, grad_code=grad, grad_loc=self.code_start(
                opdef, "grad", grad))
        code = f.get("formula")
        if isinstance(code, str) and code.strip():
            if not opdef.has_trait("Elementwise"):
                raise self.error(rec, f"op '{opdef.name}' has a formula but not the "
                                      f"Elementwise trait; add Elementwise to its traits (a "
                                      f"formula is an elementwise op's scalar math)")
            self.formula_jobs.append((opdef, code))  # checked together, see attach_formulas
        return opdef

    def attach_formulas(self, ops: list[OpDef]) -> list[OpDef]:
        """``ops`` with each ``formula`` parsed and checked (errors located inside the code
        block, every op's at once); checked formulas of an unchanged library come from the
        formula cache, which spares importing and running the parser."""
        from .formula import cache
        from .formula.locate import code_field_start
        from .formula.syntax import Formula

        headers = []
        for opdef, code in self.formula_jobs:
            loc = opdef.location
            file = loc.file if loc else (self.file_hint or "<unknown>")
            line, col = code_field_start(self._source(file), "formula", code,
                                         loc.line if loc else 1)
            headers.append(Formula(body=(), file=file, line=line, col=col, text=code))
        key = cache.key_of(self.formula_jobs)
        checked = cache.load(key, headers)
        if checked is None:
            checked, errors = self._check_formulas(headers)
            if errors:
                first, *rest = sorted(errors, key=lambda e: (e.file, e.line, e.col))
                first.others = rest
                raise first
            cache.store(key, checked)
        by_name = {opdef.name: replace(opdef, formula=c)
                   for (opdef, _), c in zip(self.formula_jobs, checked)}
        return [by_name.get(op.name, op) for op in ops]

    def _check_formulas(self, headers: list) -> tuple[list, list[TdError]]:
        from .formula.check import check_formula
        from .formula.parse import parse_formula

        checked, errors = [], []
        for (opdef, code), h in zip(self.formula_jobs, headers):
            try:
                checked.append(check_formula(parse_formula(code, file=h.file, line=h.line,
                                                           col=h.col), opdef))
            except TdError as e:
                errors.extend(e.all_errors())
        return checked, errors

    def code_start(self, opdef: OpDef, field: str, code: str) -> tuple[str, int, int]:
        """(file, line, col) where a code field's text starts (the record's line if unknown)."""
        from .formula.locate import code_field_start

        loc = opdef.location
        file = loc.file if loc else (self.file_hint or "<unknown>")
        line, col = code_field_start(self._source(file), field, code, loc.line if loc else 1)
        return file, line, col

    def signature_lines(self, opdef: OpDef, code: str
                        ) -> tuple[tuple[str, SourceLocation | None], ...]:
        """The ``signature`` field's non-blank lines, each with its place in the ``.td`` file
        (the functional API parses them; the record's place when the text cannot be found)."""
        from .formula.locate import locate_code_field

        loc = opdef.location
        where = None
        if loc is not None:
            source = self._source(loc.file)
            where = locate_code_field(source, "signature", code, loc.line) if source else None
        out = []
        for i, line in enumerate(code.split("\n")):
            text = line.strip()
            if not text:
                continue
            if where is None:
                out.append((text, loc))
                continue
            col = (where[1] if i == 0 else 1) + len(line) - len(line.lstrip())
            out.append((text, SourceLocation(loc.file, where[0] + i, col)))
        return tuple(out)

    def _source(self, file: str) -> str | None:
        # one read per file, however many formulas it holds
        if file not in self._sources:
            try:
                with open(file, encoding="utf-8", errors="replace", newline="") as fh:
                    self._sources[file] = fh.read()
            except OSError:
                self._sources[file] = None
        return self._sources[file]

    def value_def(self, op: Record, value, name: str | None, where: str) -> ValueDef:
        if not name:
            raise self.error(op, f"op '{op.name}': every entry of '{where}' needs a $name")
        rec = self.rec(value)
        if rec is None:
            return ValueDef(name, str(value) if value is not None else "?", SINGLE, None)
        arity = SINGLE
        if rec.isa("Variadic") or rec.isa("VariadicOfVariadic"):
            arity = VARIADIC
        elif rec.isa("Optional"):
            arity = OPTIONAL
        base = rec
        while arity != SINGLE and self.rec(base.get("baseType")) is not None:
            base = self.rec(base.get("baseType"))
            if not (base.isa("Variadic") or base.isa("Optional")):
                break
        summary = _text(base.get("summary"))
        constraint = base.name if not base.anonymous else (summary or base.name)
        return ValueDef(name, constraint, arity, self.dtypes(base), summary)

    def dtypes(self, rec: Record) -> tuple[str, ...] | None:
        allowed = rec.get("allowedTypes")
        if not isinstance(allowed, list):
            return None
        out: list[str] = []
        for item in allowed:
            t = self.rec(item)
            if t is None:
                return None
            dt = t.get("tdfDtype") if isinstance(t.get("tdfDtype"), str) else _DTYPE_BY_TYPE.get(t.name)
            if dt is None:
                sub = self.dtypes(t)  # AnyFloat = AnyTypeOf<[...]>
                if sub is None:
                    return None  # AnyType or something tdflow does not model: anything goes
                out.extend(sub)
            else:
                out.append(dt)
        return tuple(dict.fromkeys(out))

    def attr_def(self, op: Record, value, name: str | None) -> AttrDef:
        if not name:
            raise self.error(op, f"op '{op.name}': every attribute needs a $name")
        rec = self.rec(value)
        if rec is None:
            return AttrDef(name, "other", str(value), required=True)
        optional = bool(rec.get("isOptional"))
        default_text = rec.get("defaultValue")
        default_text = default_text if isinstance(default_text, str) else None
        base = rec
        seen = 0
        rule = _rule(rec)
        while self.rec(base.get("baseAttr")) is not None and seen < 32:
            base = self.rec(base.get("baseAttr"))
            rule = rule or _rule(base)
            seen += 1
        kind = self.attr_kind(base)
        enum = self.attr_enum(base) if kind in ("enum", "enum_array") else None
        default = None
        if default_text is not None:
            try:
                default = parse_default(kind, default_text, enum)
            except DefaultError as exc:
                raise self.error(op, f"op '{op.get('opName') or op.name}': bad default for "
                                     f"attribute '{name}' ({base.name}): {exc}") from None
        return AttrDef(
            name=name,
            kind=kind,
            # an anonymous base (TypeAttrOf<FunctionType>) is named by its summary, as operands are
            constraint=base.name if not base.anonymous else (_text(base.get("summary")) or base.name),
            default=default,
            default_text=default_text,
            required=default_text is None and not optional,
            optional=optional,
            enum=enum,
            rule=rule,
        )

    def attr_kind(self, base: Record) -> str:
        cached = self._kind_cache.get(base.name)
        if cached is not None:
            return cached
        # Enums by shape first: OneFlow's OneFlow_DataType is an I32EnumAttr, while the
        # KIND_BY_ATTR entry of that name is Base.td's type-valued one.
        kind = "enum" if self.enum_info(base) is not None else None
        if kind is None and base.isa("TypedArrayAttrBase"):
            elem = self.rec(base.get("elementAttr"))
            if elem is not None and self.enum_info(elem) is not None:
                kind = "enum_array"
        kind = kind or KIND_BY_ATTR.get(base.name)
        if kind is None and base.isa("TypedArrayAttrBase"):
            elem = self.rec(base.get("elementAttr"))
            ek = self.attr_kind(elem) if elem is not None else "other"
            kind = f"{ek}_array" if ek in SCALAR_KINDS else ("shape_array" if ek == "shape" else "other")
        kind = kind or "other"
        self._kind_cache[base.name] = kind
        return kind

    def attr_enum(self, base: Record) -> EnumInfo | None:
        """The cases of an ``enum`` attribute, or of an ``enum_array``'s elements."""
        info = self.enum_info(base)
        if info is None and base.isa("TypedArrayAttrBase"):
            elem = self.rec(base.get("elementAttr"))
            info = self.enum_info(elem) if elem is not None else None
        return info

    def enum_info(self, rec: Record) -> EnumInfo | None:
        """An integer enum (MLIR's ``EnumAttrInfo`` over ``I32EnumAttrCase``/``I64EnumAttrCase``
        records: ``enumerants``, each with ``str`` and ``value``), else ``None``. Bit enums
        (values that combine cases) stay unmodelled."""
        if rec.name in self._enum_cache:
            return self._enum_cache[rec.name]
        info = None
        cases_field = rec.get("enumerants")
        if rec.isa("EnumAttrInfo") and isinstance(cases_field, list):
            cases = []
            for item in cases_field:
                case = self.rec(item)
                if case is None or case.isa("BitEnumAttrCaseBase") or not case.isa(
                        "IntEnumAttrCaseBase"):
                    cases = None
                    break
                name, value = case.get("str"), case.get("value")
                if not isinstance(name, str) or not isinstance(value, int):
                    cases = None
                    break
                cases.append((name, value))
            vtype = self.rec(rec.get("valueType"))
            width = vtype.get("bitwidth") if vtype is not None else None
            if cases is not None:
                cname = rec.get("className")
                info = EnumInfo(cname if isinstance(cname, str) and cname else rec.name,
                                tuple(cases), f"i{width}" if isinstance(width, int) else "i32")
        self._enum_cache[rec.name] = info
        return info

    def traits(self, value, depth: int = 0) -> list[TraitDef]:
        out: list[TraitDef] = []
        if not isinstance(value, list) or depth > 16:
            return out
        for item in value:
            rec = self.rec(item)
            if rec is None:
                continue
            if rec.isa("TraitList") and isinstance(rec.get("traits"), list):
                if not rec.anonymous:
                    out.append(TraitDef(rec.name))
                out.extend(self.traits(rec.get("traits"), depth + 1))
                continue
            out.append(_trait_def(rec))
        seen: set[TraitDef] = set()
        return [t for t in out if not (t in seen or seen.add(t))]


_PARAM_TRAIT = re.compile(r"^(?:::)?([\w:]+?)<(.*)>::Impl$")


def _trait_def(rec: Record) -> TraitDef:
    if not rec.anonymous:
        return TraitDef(rec.name)
    iface = rec.get("cppInterfaceName")
    if isinstance(iface, str) and iface:
        return TraitDef(iface)
    trait = rec.get("trait")
    if isinstance(trait, str):
        m = _PARAM_TRAIT.match(trait)
        if m:
            args = tuple(a.strip() for a in m.group(2).split(",") if a.strip())
            return TraitDef(m.group(1).rsplit("::", 1)[-1], args)
        return TraitDef(trait.removesuffix("::Impl").removesuffix("::Trait"))
    sup = [s for s in rec.superclasses if s not in ("Trait", "NativeTrait", "NativeOpTrait")]
    return TraitDef(sup[-1] if sup else rec.name)


def _rule(rec: Record) -> AttrRule | None:
    """The normalization a ``TDF_NormalizedAttr`` wrapper declares (Base.td), or ``None``."""
    kind = rec.get("normalizeAs")
    if not isinstance(kind, str) or kind not in RULE_KINDS:
        return None
    operand, extra, minimum, note = (rec.get(f) for f in (
        "normalizeOperand", "normalizeExtra", "normalizeMinimum", "normalizeNote"))
    # an axis's minimum is the least rank counted (default 0); axes and perm have none
    minimum = minimum if kind in ("pair", "dims", "axis") and isinstance(minimum, int) else None
    return AttrRule(kind, operand if isinstance(operand, str) else "",
                    extra if isinstance(extra, int) else 0,
                    None if kind == "axis" and not minimum else minimum,
                    note if isinstance(note, str) else "")


def _check_unique(reader: _Reader, rec: Record, operands, results, attrs) -> None:
    seen: dict[str, str] = {}
    for what, items in (("operand", operands), ("result", results), ("attribute", attrs)):
        for item in items:
            if item.name in seen:
                raise reader.error(rec, f"op '{rec.name}': {what} '{item.name}' has the same "
                                        f"name as {seen[item.name]} '{item.name}'")
            seen[item.name] = what


# MLIR's rule for op and dialect names. They become Python identifiers and attribute names
# (Builder methods, `tdflow gen-hooks` modules), so a name that is not one is a load error.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_NAME_RULE = "letters, digits, '_' and '.', not starting with a digit"


def _check_names(reader: _Reader, rec: Record, drec: Record | None, mnemonic: str,
                 dialect: str) -> None:
    if not _NAME.fullmatch(mnemonic):
        raise reader.error(rec, f"op '{rec.name}': the mnemonic {mnemonic!r} is not an MLIR "
                                f"op name ({_NAME_RULE})")
    if not _NAME.fullmatch(dialect):
        where = drec if drec is not None and drec.loc is not None else rec
        raise reader.error(where, f"op '{rec.name}': the dialect name {dialect!r} is not an "
                                  f"MLIR dialect name ({_NAME_RULE})")


def op_name_parts(rec: Record, drec: Record | None, default_dialect: str) -> tuple[str, str]:
    """(mnemonic, dialect) of an op record: its ``opName`` (else one made from the def's name)
    and the ``name`` of its ``opDialect`` record ``drec`` (else ``default_dialect``).

    >>> op_name_parts(Record("My_LeakyReluOp"), None, "tdflow")
    ('leaky_relu', 'tdflow')
    """
    mnemonic = rec.fields.get("opName")
    if not isinstance(mnemonic, str) or not mnemonic:
        mnemonic = _mnemonic_from_def(rec.name)
    dialect = default_dialect
    if drec is not None and isinstance(drec.get("name"), str):
        dialect = drec.get("name")
    return mnemonic, dialect


def _mnemonic_from_def(name: str) -> str:
    """``OneFlow_LeakyReluOp`` -> ``leaky_relu`` (used only when ``opName`` is missing)."""
    base = name.split("_", 1)[1] if "_" in name and name.split("_", 1)[0][:1].isupper() else name
    base = base.removesuffix("Op")
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", base).lower()


def _text(value) -> str:
    if not isinstance(value, str):
        return ""
    import textwrap  # only when records are read (start-up time)

    return textwrap.dedent(value).strip()
