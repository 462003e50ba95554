"""Print a :class:`~tdflow.dialect.ir.core.Module` as MLIR text.

Operations always print in MLIR's generic form; ``func.func`` and ``return`` print in their
custom form unless ``generic=True`` (then the whole module is what ``mlir-opt
--mlir-print-op-generic`` would accept). Op results are numbered ``%0, %1, ...`` per function
(``%0:2`` and ``%0#1`` for several results); function arguments keep their names when they
have valid, unique ones, else ``%arg0, %arg1, ...``; a module with ``value_names`` set (an
imported ONNX model) keeps its single results' names too. Printing then parsing gives an equal
module.

>>> from tdflow.dialect.ir.parser import parse_module
>>> m = parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {'
...                  '  %y = "tdflow.leaky_relu"(%x) {alpha = 0.2 : f32} : (tensor<2xf32>) -> tensor<2xf32>'
...                  '  return %y : tensor<2xf32> }')
>>> print(print_module(m), end="")
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "tdflow.leaky_relu"(%x) {alpha = 2.000000e-01 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

from __future__ import annotations

import re

from tdflow.dialect.ir.attrs import (
    ArrayAttr,
    DictAttr,
    StringAttr,
    TypeAttr,
    UnitAttr,
    attr_name,
    blob_text,
    escape_string,
)
from tdflow.dialect.ir.core import (
    FUNC_KINDS,
    RETURN,
    FuncOp,
    Location,
    Module,
    NameLoc,
    Operation,
    Value,
)
from tdflow.dialect.types import FunctionType

__all__ = ["print_module", "print_func", "print_op", "print_type"]

_ARG_NAME = re.compile(r"[A-Za-z_$.\-][\w$.\-]*\Z")
_DIGITS = re.compile(r"\d+\Z")
_SYMBOL = re.compile(r"[A-Za-z_][\w$.]*\Z")


def print_type(t) -> str:
    """MLIR spelling of a type; a function type as a single result is parenthesised."""
    return str(t)


def _symbol(name: str) -> str:
    return "@" + (name if _SYMBOL.match(name) else escape_string(name))


def _loc_str(loc: Location) -> str:
    if isinstance(loc, NameLoc):
        return f" loc({escape_string(loc.file)})"
    return f" loc({escape_string(loc.file)}:{loc.line}:{loc.col})" if loc.line > 0 else ""


class _Printer:
    __slots__ = ("generic", "locs", "out", "types", "attrs", "op_names", "value_names",
                 "attr_names", "type_lists", "sigs", "attr_dicts", "stamped")

    def __init__(self, generic: bool, locs: bool, value_names: bool = False,
                 as_parsed: bool = False) -> None:
        self.value_names = value_names
        self.generic = generic
        self.locs = locs
        self.out: list[str] = []
        # Per-print caches keyed by id(): every key object stays alive during the print.
        self.types: dict[int, str] = {}
        self.attrs: dict[int, str] = {}
        self.op_names: dict[str, str] = {}
        self.attr_names: dict[str, str] = {}  # name -> as printed (bare or quoted)
        # (id(T), id(T), ...) of an op's operand or result types -> "T, T, ..."
        self.type_lists: dict[tuple, str] = {}
        # (id(T), ..., id(R)) of a one-result op's operand types and result type -> its
        # " : (T, ...) -> R"; a function-typed result never enters (op_line prints it)
        self.sigs: dict[tuple, str] = {}
        # (name, id(value)[, name, id(value)]) of an op's attributes -> " {...}" as printed
        self.attr_dicts: dict[tuple, str] = {}
        # Of a module unchanged since parsing (as_parsed): a parser's stamp (Operation.stamp)
        # -> the quoted op name and the line after the operands of the one-result ops that
        # carry it, as the first of them printed (the same name, types and attribute objects);
        # a float template's mark (Operation.stamp) -> the name and that line around the
        # constant, whose text each op's stamp carries
        self.stamped: dict | None = {} if as_parsed and not locs else None

    def type_str(self, t) -> str:
        s = self.types.get(id(t))
        if s is None:
            s = str(t)
            self.types[id(t)] = s
        return s

    def attr_dict(self, attrs: dict, cache: bool = True) -> str:
        """``{...}``; ``cache=False`` for temporary attribute objects (an id may be reused)."""
        memo = self.attrs if cache else {}
        names = self.attr_names
        parts = []
        for k, v in attrs.items():
            n = names.get(k)
            if n is None:
                n = names[k] = attr_name(k)
            if isinstance(v, UnitAttr):
                parts.append(n)
                continue
            s = memo.get(id(v))
            if s is None:
                s = str(v)
                memo[id(v)] = s
            parts.append(f"{n} = {s}")
        return "{" + ", ".join(parts) + "}"

    def type_list(self, values) -> str:
        """``T, T, ...``: the types of ``values`` (operands or results) joined. Programs repeat
        the same few signatures; keyed by the types' ids (they stay alive during the print)."""
        key = tuple([id(v.type) for v in values])
        s = self.type_lists.get(key)
        if s is None:
            s = self.type_lists[key] = ", ".join([self.type_str(v.type) for v in values])
        return s

    def results_type(self, types) -> str:
        if len(types) == 1 and not isinstance(types[0], FunctionType):
            return self.type_str(types[0])
        return "(" + ", ".join([self.type_str(t) for t in types]) + ")"

    # -- functions -------------------------------------------------------------------------
    def func(self, f: FuncOp) -> None:
        ops = f.body.ops  # walked twice (names, then lines): the block's iterator once
        names = self.name_values(f, ops)
        args = f.body.args
        if self.generic:
            props = {}
            if f.arg_attrs and any(f.arg_attrs):
                props["arg_attrs"] = ArrayAttr(tuple(DictAttr(tuple(d.items()))
                                                     for d in f.arg_attrs))
            props["function_type"] = TypeAttr(f.function_type)
            if f.res_attrs and any(f.res_attrs):
                props["res_attrs"] = ArrayAttr(tuple(DictAttr(tuple(d.items()))
                                                     for d in f.res_attrs))
            props["sym_name"] = StringAttr(f.name)
            if f.visibility:
                props["sym_visibility"] = StringAttr(f.visibility)
            head = f'"{f.kind}"() <{self.attr_dict(props, cache=False)}> ({{\n'
            self.out.append(head)
            if args:
                self.out.append("^bb0(" + ", ".join(
                    f"{names[a]}: {self.type_str(a.type)}" for a in args) + "):\n")
            self.body(f, names, ops)
            tail = "}) "
            if f.attributes:
                tail += self.attr_dict(f.attributes) + " "
            self.out.append(tail + ": () -> ()" + (_loc_str(f.loc) if self.locs else "") + "\n")
            return
        vis = f"{f.visibility} " if f.visibility else ""
        arg_texts = []
        for i, a in enumerate(args):
            s = f"{names[a]}: {self.type_str(a.type)}"
            if f.arg_attrs and f.arg_attrs[i]:
                s += " " + self.attr_dict(f.arg_attrs[i])
            arg_texts.append(s)
        head = f"{f.kind} {vis}{_symbol(f.name)}({', '.join(arg_texts)})"
        if f.res_attrs and any(f.res_attrs):
            head += " -> (" + ", ".join(
                self.type_str(t) + (f" {self.attr_dict(d)}" if d else "")
                for t, d in zip(f.result_types, f.res_attrs)) + ")"
        elif f.result_types:
            head += " -> " + self.results_type(f.result_types)
        if f.attributes:
            head += " attributes " + self.attr_dict(f.attributes)
        self.out.append(head + " {\n")
        self.body(f, names, ops)
        self.out.append("}" + (_loc_str(f.loc) if self.locs else "") + "\n")

    def name_values(self, f: FuncOp, ops: tuple | None = None) -> dict[Value, str]:
        if ops is None:
            ops = f.body.ops
        names: dict[Value, str] = {}
        used: set[str] = set()
        args = f.body.args
        for a in args:  # keep valid, unique, non-numeric argument names
            n = a.name
            if n and _ARG_NAME.match(n) and not _DIGITS.match(n) and n not in used:
                names[a] = "%" + n
                used.add(n)
        i = 0
        for a in args:
            if a not in names:
                while f"arg{i}" in used:
                    i += 1
                names[a] = f"%arg{i}"
                used.add(f"arg{i}")
        n = 0
        if self.value_names:  # a named result keeps its name when no other value has it
            for op in ops:
                for r in op.results[:1] if len(op.results) == 1 else ():
                    if r.name and _ARG_NAME.match(r.name) and not _DIGITS.match(r.name) \
                            and r.name not in used:
                        names[r] = "%" + r.name
                        used.add(r.name)
        # Without value names no result is named yet: one-result ops (nearly all) take the
        # next number without a lookup first.
        named = self.value_names
        for op in ops:
            results = op.results
            if len(results) == 1:
                if not named or results[0] not in names:
                    names[results[0]] = f"%{n}"
                    n += 1
            elif results:
                for j, r in enumerate(results):
                    names[r] = f"%{n}#{j}"
                n += 1
        return names

    def body(self, f: FuncOp, names: dict[Value, str], ops: tuple | None = None) -> None:
        out = self.out
        generic = self.generic
        locs = self.locs
        type_str = self.type_str
        # The terminator as the function's kind spells it (`oneflow.return` in a job).
        ret = FUNC_KINDS.get(f.kind, RETURN)
        custom_ret = "return" if ret == RETURN else ret
        # The common op (one result, not a function type, not the terminator) printed inline,
        # its lookups in locals: ~2.5 µs per op, once per op of a program. Its signature
        # " : (ins) -> out" cached by the ids of its types (they stay alive during the print).
        sigs = self.sigs
        types_get = self.types.get
        op_names = self.op_names
        attr_dict = self.attr_dict
        dicts = self.attr_dicts
        dicts_get = dicts.get
        get = names.get
        append = out.append
        stamped = self.stamped
        stamped_get = stamped.get if stamped is not None else None
        for op in (f.body.ops if ops is None else ops):
            results = op.results
            if stamped_get is not None:
                stamp = op.stamp
                if stamp is not None:
                    if type(stamp) is tuple:
                        # a float template's op (BodyParser._new_rest): its line, but its
                        # constant's text (how this printer spells it) put in
                        pieces = stamped_get(stamp[0])
                        if pieces is not None:
                            pieces = (pieces[0], f"{pieces[1]}{stamp[1]}{pieces[2]}")
                        else:
                            pieces = stamped_get(stamp)
                    else:
                        pieces = stamped_get(stamp)
                    if pieces is not None:  # only the operand and result names to print
                        operands = op.operands
                        n = len(operands)
                        if n == 1:
                            v = operands[0]
                            ops = get(v) or _use(names, v)
                        elif n == 2:
                            ops = (f"{get(operands[0]) or _use(names, operands[0])}, "
                                   f"{get(operands[1]) or _use(names, operands[1])}")
                        else:
                            ops = ", ".join([get(v) or _use(names, v) for v in operands])
                        append(f"  {names[results[0]]} = {pieces[0]}({ops}){pieces[1]}")
                        continue
            name = op.name
            if len(results) == 1 and name != RETURN:
                operands = op.operands
                t = results[0].type
                n = len(operands)
                # one or two operands (nearly every op) without a list comprehension: a
                # function call each in this Python
                if n == 1:
                    v = operands[0]
                    key = (id(v.type), id(t))
                elif n == 2:
                    key = (id(operands[0].type), id(operands[1].type), id(t))
                else:
                    key = (*[id(v.type) for v in operands], id(t))
                sig = sigs.get(key)
                if sig is None:
                    if isinstance(t, FunctionType):
                        append(self.op_line(op, names) + "\n")
                        continue
                    sig = sigs[key] = (f" : ({self.type_list(operands)}) -> "
                                       f"{types_get(id(t)) or type_str(t)}")
                qname = op_names.get(name)
                if qname is None:  # quoted, with '"', '\\' and control characters escaped
                    qname = op_names[name] = escape_string(name)
                attrs = op.attributes
                if n == 1:
                    ops = get(v) or _use(names, v)
                elif n == 2:
                    ops = (f"{get(operands[0]) or _use(names, operands[0])}, "
                           f"{get(operands[1]) or _use(names, operands[1])}")
                else:
                    ops = ", ".join([get(v) or _use(names, v) for v in operands]) if n else ""
                if attrs:
                    # a dictionary of one or two entries (most are) printed once per distinct
                    # (name, value object) pairs: the parser shares the values of equal texts
                    na = len(attrs)
                    if na == 1:
                        (k, a), = attrs.items()
                        akey = (k, id(a))
                    elif na == 2:
                        (k, a), (k2, a2) = attrs.items()
                        akey = (k, id(a), k2, id(a2))
                    else:
                        akey = None
                    adict = dicts_get(akey) if akey is not None else None
                    if adict is None:
                        adict = " " + attr_dict(attrs)
                        if akey is not None:
                            dicts[akey] = adict
                else:
                    adict = ""
                if locs:
                    append(f"  {names[results[0]]} = {qname}({ops}){adict}{sig}"
                           f"{_loc_str(op.loc)}\n")
                else:  # the line and its break in one string: no concatenation after
                    append(f"  {names[results[0]]} = {qname}({ops}){adict}{sig}\n")
                    stamp = op.stamp if stamped is not None else None
                    if stamp is not None:
                        # a float template's: the line around its constant, which must
                        # appear in it once (another value could print the same)
                        if type(stamp) is tuple and adict.count(stamp[1]) == 1:
                            before, _, after = adict.partition(stamp[1])
                            stamped[stamp[0]] = (qname, before, f"{after}{sig}\n")
                        else:
                            stamped[stamp] = (qname, f"{adict}{sig}\n")
                continue
            if op.name == RETURN and not generic and not op.attributes:
                if op.operands:
                    vals = ", ".join([_use(names, v) for v in op.operands])
                    tys = ", ".join([type_str(v.type) for v in op.operands])
                    line = f"  {custom_ret} {vals} : {tys}"
                else:
                    line = f"  {custom_ret}"
                out.append(line + (_loc_str(op.loc) if locs else "") + "\n")
                continue
            line = self.op_line(op, names)
            if op.name == RETURN and ret != RETURN:
                line = line.replace('"func.return"', f'"{ret}"', 1)
            out.append(line + "\n")

    def op_line(self, op: Operation, names: dict[Value, str]) -> str:
        results = op.results
        if len(results) == 1 and not isinstance(results[0].type, FunctionType):
            # the common case (one result), once per op of a program: lookups inlined
            operands = op.operands
            if operands:
                get = names.get
                ops = ", ".join([get(v) or _use(names, v) for v in operands])
                ins = (self.type_lists.get(tuple([id(v.type) for v in operands]))
                       or self.type_list(operands))
            else:
                ops = ins = ""
            name = self.op_names.get(op.name)
            if name is None:  # quoted, with '"', '\\' and control characters escaped
                name = self.op_names[op.name] = escape_string(op.name)
            attrs = op.attributes
            attrs = " " + self.attr_dict(attrs) if attrs else ""
            t = results[0].type
            outs = self.types.get(id(t)) or self.type_str(t)
            loc = _loc_str(op.loc) if self.locs else ""
            return f"  {names[results[0]]} = {name}({ops}){attrs} : ({ins}) -> {outs}{loc}"
        type_str = self.type_str
        if not results:
            head = "  "
        elif len(results) == 1:
            head = f"  {names[results[0]]} = "
        else:
            head = f"  {names[results[0]].partition('#')[0]}:{len(results)} = "
        operands = op.operands
        if operands:
            get = names.get
            ops = ", ".join([get(v) or _use(names, v) for v in operands])
            ins = self.type_list(operands)
        else:
            ops = ins = ""
        if not results:
            outs = "()"
        elif len(results) == 1 and not isinstance(results[0].type, FunctionType):
            outs = type_str(results[0].type)
        else:
            outs = "(" + self.type_list(results) + ")"
        attrs = f" {self.attr_dict(op.attributes)}" if op.attributes else ""
        loc = _loc_str(op.loc) if self.locs else ""
        name = self.op_names.get(op.name)
        if name is None:  # quoted, with '"', '\\' and control characters escaped
            name = self.op_names[op.name] = escape_string(op.name)
        return f"{head}{name}({ops}){attrs} : ({ins}) -> {outs}{loc}"


def _use(names: dict[Value, str], v: Value) -> str:
    s = names.get(v)
    if s is None:  # a value not defined in this function (the verifier reports it)
        s = f"%{v.name}" if v.name else "%<<undefined>>"
    return s


def print_module(module: Module, generic: bool = False, locs: bool = False,
                 as_parsed: bool = False) -> str:
    """The module as text. ``generic=True`` also prints ``func.func``/``return`` generically;
    ``locs=True`` adds ``loc("file":line:col)`` trailers. ``as_parsed=True`` promises that
    nothing changed the module since the parser made it (``tdflow opt`` without passes): an
    op is then printed from the text of the first op of its parser's stamp
    (``Operation.stamp``: the same name, types and attributes); the text is the same."""
    p = _Printer(generic, locs, getattr(module, "value_names", False), as_parsed)
    wrap = bool(module.attributes) or module.name is not None
    if wrap:
        name = f" {_symbol(module.name)}" if module.name is not None else ""
        attrs = f" attributes {p.attr_dict(module.attributes)}" if module.attributes else ""
        p.out.append(f"module{name}{attrs} {{\n")
    for i, f in enumerate(module.funcs):
        if i:
            p.out.append("\n")
        p.func(f)
    if wrap:
        p.out.append("}\n")
    if module.resources:  # as mlir-opt prints them: after the module
        blobs = ",\n".join(f"      {attr_name(k)}: {blob_text(v)}"
                           for k, v in module.resources.items())
        p.out.append(f"\n{{-#\n  dialect_resources: {{\n    builtin: {{\n{blobs}\n    }}\n  }}\n#-}}\n")
    return "".join(p.out)


def print_func(func: FuncOp, generic: bool = False) -> str:
    """One function as text."""
    p = _Printer(generic, False)
    p.func(func)
    return "".join(p.out)


def print_op(op: Operation) -> str:
    """One operation in generic form, with values named by their hints (for messages)."""
    p = _Printer(True, False)
    names: dict[Value, str] = {}
    for v in (*op.operands, *op.results):
        names[v] = f"%{v.name}" if v.name else "%?"
    if len(op.results) > 1:
        for j, r in enumerate(op.results):
            names[r] = f"%{op.results[0].name or '?'}#{j}"
    return p.op_line(op, names).strip()


def value_names(func: FuncOp) -> dict[Value, str]:
    """The names the printer gives ``func``'s values (``%x``, ``%0``, ``%3#1``): what tools
    that show a program beside its text (``tdflow view``) call them.

    >>> from tdflow.dialect.ir import parse_module
    >>> m = parse_module('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\\n'
    ...     '  %0 = "tdflow.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\\n  return %0 : tensor<2xf32>\\n}')
    >>> sorted(value_names(m.funcs[0]).values())
    ['%0', '%x']
    """
    return _Printer(False, False, True).name_values(func)
