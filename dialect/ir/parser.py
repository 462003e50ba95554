"""Parse MLIR text into a :class:`~tdflow.dialect.ir.core.Module`.

Accepted (DESIGN.md, "Program text"):

- every op in MLIR's generic form: ``%0 = "tdflow.relu"(%x) <{props}> {attrs} :
  (tensor<4xf32>) -> tensor<4xf32>``, ``%0:2 = ...`` / ``%0#1`` for several results, trailing
  ``loc(...)`` (a ``loc("file":line:col)`` becomes the op's location);
- ``module { ... }`` (optional: a bare list of functions is a module too), ``"builtin.module"``;
- ``func.func [private] @f(%x: T {arg attrs}, ...) -> T | (T, T) [attributes {...}] { ... }`` and
  the generic ``"func.func"() <{function_type = ..., sym_name = "f"}> ({ ^bb0(...): ... })``;
- ``return %a, %b : T, T`` and ``"func.return"(...)``; ``//`` comments;
- ``dense_resource<name> : T`` constants with the file's ``{-# dialect_resources: { builtin:
  { name: "0x..." } } #-}`` section (as mlir-opt prints it), kept in ``module.resources``.

Syntax errors raise :class:`~tdflow.dialect.ir.diagnostics.DiagnosticError` saying what was found
and what was expected. Name-resolution problems do not stop parsing: a use of a name defined
later is linked to its definition (the verifier reports the dominance error), a name never defined
becomes a placeholder value with ``owner=None`` (reported by the verifier), and duplicate
definitions or a use whose written type differs from the definition are recorded in
``module.parse_diagnostics`` (the verifier reports them with everything else).

Speed: each line holding a generic op is first matched by one regular expression; attribute
dicts and function types, which repeat, are parsed once and cached. Anything the fast path does
not fully understand goes through the general recursive-descent parser, which gives the errors.

>>> m = parse_module('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\\n'
...                  '  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>\\n'
...                  '  return %0 : tensor<4xf32>\\n}')
>>> [op.name for op in m["f"].body]
['tdflow.relu', 'func.return']
"""

from __future__ import annotations

import gc
import re
from bisect import bisect_right

from tdflow.dialect.ir.attrs import (
    ArrayAttr,
    DictAttr,
    StringAttr,
    TypeAttr,
    blob_bytes,
    element_bytes,
)
from tdflow.dialect.ir.core import (
    FUNC_KINDS,
    RETURN,
    Block,
    FuncOp,
    Location,
    Module,
    Operation,
    Value,
)
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError, register_source
from tdflow.dialect.ir.lexer import BARE_ID, RESULT_GROUP, SSA_ID, SSA_USE, SYMBOL
from tdflow.dialect.ir.source import check_text, decode_source, read_source
from tdflow.dialect.ir.type_attr_parser import TypeAttrParser, parse_attribute, parse_type
from tdflow.dialect.types import FunctionType

__all__ = ["parse_module", "parse_file", "parse_type", "parse_attribute", "Parser"]

# The fast path: one generic op on one line, no nested braces/parens inside its pieces.
_NAME = r"(?:\d+|[A-Za-z$._\-][\w$.\-]*)"
_FAST_OP = re.compile(
    rf"(?:%({_NAME})(?::(\d+))?[ \t]*=[ \t]*)?"  # 1 result name, 2 result count
    r'"([\w.$\-]+)"\('  # 3 op name
    rf"((?:%{_NAME}(?:#\d+)?(?:[ \t]*,[ \t]*%{_NAME}(?:#\d+)?)*)?)\)"  # 4 operands
    # 5 the tail: properties, attributes and function type (it repeats: parsed once, cached).
    # Each optional group takes its own leading blanks: `[ \t]*(A)?[ \t]*(B)?[ \t]*:` would let
    # a failing line of k blanks be split three ways, O(k^3) backtracking (a hang).
    r"((?:[ \t]*<\{[^{}\n]*\}>)?(?:[ \t]*\{[^{}\n]*\})?[ \t]*:[ \t]*\([^()\n]*\)[ \t]*->[ \t]*"
    r"(?:\([^()\n]*\)|[\w.]+(?:<[^<>()\n]*>)?))"
    r"[ \t\r]*(?=\n|//|\Z)",
)
_BLOCK_LABEL = re.compile(r"\^[\w$.\-]+")
_MODULE_WORD = re.compile(r"module(?![\w$.])")
_ALIAS_DEF = re.compile(r"([#!])([A-Za-z_][\w$.\-]*)[ \t]*=")
_GENERIC_FUNC = re.compile(r'"(func\.func|oneflow\.job)"')
_OPERAND_REFS = re.compile(rf"%({_NAME})(?:#(\d+))?")


class _Fallback(Exception):
    """The fast path declines; the general parser takes over (and reports any error)."""


class Parser(TypeAttrParser):
    """A recursive-descent parser over one text. Use :func:`parse_module`."""

    __slots__ = ("tails", "diags", "scope", "forward", "block", "placeholder_locs",
                 "forward_use_locs", "terminator")

    def __init__(self, text: str, file: str = "<string>") -> None:
        super().__init__(text, file)
        # Fast path: the text after an op's operand list -> (operand types, result types, attrs).
        self.tails: dict[str, tuple[tuple, tuple, dict]] = {}
        self.diags: list[Diagnostic] = []
        # Per function body: name -> (values, position of the definition).
        self.scope: dict[str, tuple[tuple[Value, ...], int]] = {}
        # Per function body: name -> {result index: (placeholder, position of the first use)}
        # (keyed by index so that a hostile '%z#0 ... %z#99999' stays linear).
        self.forward: dict[str, dict[int, tuple[Value, int]]] = {}
        self.block: Block | None = None
        self.placeholder_locs: dict[Value, Location | None] = {}
        self.forward_use_locs: dict[Operation, Location] = {}
        self.terminator = RETURN

    # -- module and functions --------------------------------------------------------------
    def parse_module(self) -> Module:
        """Aliases, then ``module {...}`` (several at top level are merged into one module, in
        order), ``"builtin.module"() ({...})``, or a bare list of functions."""
        self.skip()
        module = Module(loc=self.loc(self.pos))
        n_modules = 0
        while True:
            self.parse_alias_defs()
            pos = self.skip()
            if pos >= len(self.text):
                break
            if self.text.startswith("{-#", pos):
                self.parse_file_metadata()
                continue
            if self.keyword("module"):
                self.parse_custom_module(module, pos, n_modules)
            elif self.text.startswith('"builtin.module"', pos):
                self.pos += len('"builtin.module"')
                self.parse_generic_module(module, pos, n_modules)
            elif n_modules:
                raise self.expected("'module' or end of input")
            else:
                self.parse_funcs(module, None)
                continue
            n_modules += 1
        self.resolve_locs()
        self.check_resources()
        module.resources = self.resources
        module.parse_diagnostics = self.diags
        module.placeholder_locs = self.placeholder_locs
        module.forward_use_locs = self.forward_use_locs
        return module

    def _module_header(self, module: Module, name: str | None, attrs: dict, pos: int,
                       n_modules: int) -> None:
        """Merge one top-level module's name and attributes into ``module``."""
        if n_modules == 0:
            module.loc = self.loc(pos)
            module.name = name
        for k, v in attrs.items():
            old = module.attributes.get(k)
            if old is not None and old != v:
                raise self.error(f"module attribute '{k}' is {v} here but {old} in an earlier "
                                 f"module (modules in one file are merged)", pos)
            module.attributes[k] = v

    def parse_custom_module(self, module: Module, pos: int, n_modules: int) -> None:
        m = self.match(SYMBOL)
        attrs = {}
        if self.keyword("attributes"):
            self.expect("{")
            attrs = self.parse_attr_dict()
        self._module_header(module, m.group(1) if m else None, attrs, pos, n_modules)
        self.expect("{", "'{' opening the module body")
        self.parse_funcs(module, "}")
        loc = self.skip_loc()
        if loc is not None and n_modules == 0:
            module.loc = loc

    def parse_generic_module(self, module: Module, pos: int, n_modules: int) -> None:
        self.expect("(")
        self.expect(")")
        attrs: dict = {}
        if self.accept("<{"):
            attrs = self.parse_attr_dict("}>")
        self.expect("(", "'(' before the module's region")
        self.expect("{")
        self.match(_BLOCK_LABEL)
        self.accept(":")
        parsed = Module()
        self.parse_funcs(parsed, "}")
        self.expect(")")
        attrs.update(self.parse_region_op_tail())
        name = attrs.pop("sym_name", None)
        self._module_header(module, name.value if isinstance(name, StringAttr) else None,
                            attrs, pos, n_modules)
        for f in parsed.funcs:
            module.add(f)
        loc = self.skip_loc()
        if loc is not None and n_modules == 0:
            module.loc = loc

    def parse_alias_defs(self) -> None:
        """``#name = attr``, ``#loc3 = loc(...)`` and ``!name = type`` definitions."""
        text = self.text
        while True:
            pos = self.skip()
            if not (text.startswith("#", pos) or text.startswith("!", pos)):
                return
            m = _ALIAS_DEF.match(text, pos)
            if m is None:
                raise self.expected("an alias definition like '#map = ...' or '!t = ...'")
            name = m.group(2)
            self.pos = m.end()
            if m.group(1) == "!":
                if name in self.type_aliases:
                    raise self.error(f"redefinition of type alias '!{name}'", pos)
                self.type_aliases[name] = self.parse_type()
            elif self.peek("loc("):
                self.define_loc_alias(name, pos)
            else:
                if name in self.attr_aliases:
                    raise self.error(f"redefinition of attribute alias '#{name}'", pos)
                self.attr_aliases[name] = self.parse_attr()

    def parse_file_metadata(self) -> None:
        """``{-# dialect_resources: { builtin: { name: "0x04000000...", ... } } #-}``: the blobs
        of ``dense_resource`` attributes (each the hex of a 4-byte alignment, then the data)."""
        self.pos += len("{-#")
        while not self.accept("#-}"):
            self.skip()
            kpos = self.pos
            m = self.match(BARE_ID)
            if m is None:
                raise self.expected("'dialect_resources' or '#-}' in the file metadata")
            if m.group() != "dialect_resources":
                raise self.error(f"file metadata '{m.group()}' is not supported (tdflow reads "
                                 f"'dialect_resources', the blobs of dense_resource constants)",
                                 kpos)
            self.expect(":", "':' after 'dialect_resources'")
            self.expect("{", "'{' opening the dialect resources")
            while not self.accept("}"):
                self.skip()
                dpos = self.pos
                d = self.match(BARE_ID)
                if d is None:
                    raise self.expected("a dialect name like 'builtin'")
                if d.group() != "builtin":
                    raise self.error(f"resources of dialect '{d.group()}' are not supported "
                                     f"(tdflow reads 'builtin' blobs, the data of "
                                     f"dense_resource constants)", dpos)
                self.expect(":", "':' after the dialect name")
                self.expect("{", "'{' opening the dialect's resources")
                while not self.accept("}"):
                    self.parse_blob()
                    if not self.peek("}"):
                        self.expect(",", "',' or '}' between resources")
                if not self.peek("}"):
                    self.expect(",", "',' or '}' between dialects")
            if not self.peek("#-}"):
                self.expect(",", "',' or '#-}' in the file metadata")

    def parse_blob(self) -> None:
        """``name: "0x..."``: one blob of the builtin dialect's resources."""
        self.skip()
        npos = self.pos
        m = self.match(BARE_ID)
        if m is not None:
            name = m.group()
        elif self.text.startswith('"', npos):
            name = self.string()
        else:
            raise self.expected("a resource name")
        self.expect(":", f"':' after the resource name '{name}'")
        self.skip()
        vpos = self.pos
        if not self.text.startswith('"', vpos):
            raise self.expected(f"the blob of '{name}' as a hex string like \"0x04000000...\"")
        value = self.string()
        try:
            blob_bytes(value)
        except ValueError as exc:
            raise self.error(f"blob '{name}': {exc}", vpos) from None
        if name in self.resources:
            raise self.error(f"resource '{name}' is defined twice", npos)
        self.resources[name] = value

    def check_resources(self) -> None:
        """Every ``dense_resource`` names a blob of the file holding its type's bytes."""
        for attr, pos in self.resource_uses:
            text = self.resources.get(attr.name)
            if text is None:
                raise self.error(f"dense_resource<{attr.name}>: the file defines no blob "
                                 f"'{attr.name}' (add it to a '{{-# dialect_resources: {{ builtin: "
                                 f"{{ {attr.name}: \"0x04000000...\" }} }} #-}}' section at the "
                                 f"end of the file)", pos)
            have = len(blob_bytes(text))
            want = attr.type.numel * element_bytes(attr.type.dtype)
            if have != want:
                raise self.error(f"dense_resource<{attr.name}> : {attr.type} needs {want} bytes "
                                 f"of data, but blob '{attr.name}' holds {have} (after its "
                                 f"4-byte alignment)", pos)

    def parse_funcs(self, module: Module, close: str | None) -> None:
        while True:
            self.parse_alias_defs()
            pos = self.skip()
            if close is not None and self.accept(close):
                return
            if self.pos >= len(self.text):
                if close is None:
                    return
                raise self.expected(f"'{close}' closing the module")
            kind = self.keyword(*FUNC_KINDS)
            if kind is not None:
                module.add(self.parse_custom_func(kind))
                continue
            m = _GENERIC_FUNC.match(self.text, pos)
            if m is not None:
                self.pos = m.end()
                module.add(self.parse_generic_func(m.group(1)))
            elif close is None and (_MODULE_WORD.match(self.text, pos)
                                    or self.text.startswith("{-#", pos)):
                return
            else:
                raise self.expected("a function ('func.func @name(...) {...}')")

    def _begin_body(self, block: Block, kind: str) -> None:
        self.scope = {}
        self.forward = {}
        self.block = block
        # The terminator as this kind of function spells it ("oneflow.return" in a job).
        self.terminator = FUNC_KINDS[kind]

    def parse_custom_func(self, kind: str) -> FuncOp:
        start = self.pos - len(kind)
        loc = self.loc(start)
        visibility = self.keyword("private", "public", "nested")
        self.skip()
        m = self.match(SYMBOL)
        if m is not None:
            name = m.group(1)
        elif self.accept("@"):
            name = self.string("a function name after '@'")
        else:
            raise self.expected("a function name like '@main'")
        self.expect("(", "'(' starting the argument list")
        block = Block(arg_locs=[])
        arg_attrs: list[dict] = []
        arg_positions = []
        if not self.accept(")"):
            while True:
                self.skip()
                apos = self.pos
                am = self.match(SSA_ID)
                if am is None:
                    if self.pos < len(self.text) and self.text[self.pos] in "tfi(":
                        raise self.error("function declarations without a body (argument "
                                         "types without names) are not supported; write "
                                         "'%name: type'", apos)
                    raise self.expected("an argument like '%x: tensor<4xf32>'")
                self.expect(":", "':' and the argument's type")
                t = self.parse_type()
                a = block.add_arg(t, am.group(1), self.loc(apos))
                arg_positions.append((am.group(1), a, apos))
                arg_attrs.append(self.parse_attr_dict() if self.accept("{") else {})
                aloc = self.skip_loc()
                if aloc is not None:
                    block.arg_locs[-1] = aloc
                if self.accept(")"):
                    break
                if not self.accept(","):
                    raise self.expected("',' or ')' in the argument list")
        results: tuple = ()
        res_attrs: list[dict] = []
        if self.accept("->"):
            if self.accept("("):
                results = self.parse_result_type_list(res_attrs)
            else:
                results = (self.parse_type(),)
        f = FuncOp(name, (), results, loc=loc, body=block)
        f.kind = kind
        f.visibility = visibility
        if any(arg_attrs):
            f.arg_attrs = arg_attrs
        if any(res_attrs):
            f.res_attrs = res_attrs
        if self.keyword("attributes"):
            self.expect("{")
            f.attributes = self.parse_attr_dict()
        self.skip()
        if not self.accept("{"):
            if visibility == "private" and not self.text.startswith("(", self.pos):
                raise self.error(f"function declarations (a '{kind}' without a body) are not "
                                 f"supported: tdflow runs every function it verifies", start)
            raise self.expected("'{' opening the function body")
        if self.peek("^"):  # an entry block label without arguments is tolerated
            lpos = self.pos
            self.match(_BLOCK_LABEL)
            if self.peek("("):
                raise self.error("the entry block of 'func.func @name(...)' takes the function's "
                                 "arguments; remove the block argument list", lpos)
            self.expect(":", "':' after the block label")
        self._begin_body(block, kind)
        for n, a, apos in arg_positions:
            self.define(n, (a,), apos)
        self.parse_body(block)
        floc = self.skip_loc()
        if floc is not None:
            f.loc = floc
        return f

    def parse_result_type_list(self, res_attrs: list[dict]) -> tuple:
        """``(T {attrs}, T)`` after ``(``; each result's attributes go to ``res_attrs``."""
        types = []
        if not self.accept(")"):
            while True:
                types.append(self.parse_type())
                res_attrs.append(self.parse_attr_dict() if self.accept("{") else {})
                if self.accept(")"):
                    break
                if not self.accept(","):
                    raise self.expected("',' or ')' in the result type list")
        return tuple(types)

    def parse_region_op_tail(self) -> dict:
        """``{attrs} : () -> ()`` after the region of a generic ``"builtin.module"`` or
        ``"func.func"``; returns the attributes (older MLIR prints them there)."""
        attrs = self.parse_attr_dict() if self.accept("{") else {}
        for token in (":", "(", ")", "->", "(", ")"):
            self.expect(token)
        return attrs

    def parse_generic_func(self, kind: str) -> FuncOp:
        start = self.pos - len(kind) - 2
        self.expect("(")
        if not self.accept(")"):
            raise self.error(f"'{kind}' takes no operands", self.pos)
        props: dict = {}
        if self.accept("<{"):
            props = self.parse_attr_dict("}>")
        self.expect("(", "'(' before the function's region")
        self.expect("{", "'{' opening the function's region")
        # The entry block's arguments are the function's; they are checked against
        # `function_type` once the attributes after the region (older MLIR puts them there)
        # are known.
        block = Block(arg_locs=[])
        arg_positions = []
        self.skip()
        if self.text.startswith("^", self.pos):
            bm = self.match(_BLOCK_LABEL)
            if self.accept("("):
                if not self.accept(")"):
                    while True:
                        self.skip()
                        apos = self.pos
                        am = self.match(SSA_ID)
                        if am is None:
                            raise self.expected("a block argument like '%arg0: tensor<4xf32>'")
                        self.expect(":")
                        t = self.parse_type()
                        a = block.add_arg(t, am.group(1), self.loc(apos))
                        arg_positions.append((am.group(1), a, apos))
                        aloc = self.skip_loc()
                        if aloc is not None:
                            block.arg_locs[-1] = aloc
                        if self.accept(")"):
                            break
                        if not self.accept(","):
                            raise self.expected("',' or ')' in the block arguments")
            self.expect(":", f"':' after the block label '{bm.group() if bm else '^bb0'}'")
        self._begin_body(block, kind)
        for n, a, apos in arg_positions:
            self.define(n, (a,), apos)
        self.parse_body(block)
        self.expect(")", "')' closing the function's region")
        props.update(self.parse_region_op_tail())
        loc = self.skip_loc() or self.loc(start)
        name = props.pop("sym_name", None)
        ftype = props.pop("function_type", None)
        if not isinstance(name, StringAttr):
            raise self.error("'func.func' needs a 'sym_name' string attribute", start)
        if not (isinstance(ftype, TypeAttr) and isinstance(ftype.value, FunctionType)):
            raise self.error("'func.func' needs a 'function_type' attribute like "
                             "'(tensor<4xf32>) -> tensor<4xf32>'", start)
        ins = ftype.value.inputs
        if tuple(a.type for a in block.args) != tuple(ins):
            raise self.error(f"the entry block arguments ({', '.join(str(a.type) for a in block.args)}) "
                             f"do not match the function type {ftype.value}", start)
        f = FuncOp(name.value, (), ftype.value.results, loc=loc, body=block)
        f.kind = kind
        vis = props.pop("sym_visibility", None)
        if vis is not None:
            f.visibility = vis.value if isinstance(vis, StringAttr) else str(vis)
        aa = props.pop("arg_attrs", None)
        if isinstance(aa, ArrayAttr):
            f.arg_attrs = [d.as_dict() if isinstance(d, DictAttr) else {} for d in aa.value]
        ra = props.pop("res_attrs", None)
        if isinstance(ra, ArrayAttr):
            f.res_attrs = [d.as_dict() if isinstance(d, DictAttr) else {} for d in ra.value]
        f.attributes = props
        return f

    # -- function bodies -----------------------------------------------------------------
    def define(self, name: str, values: tuple, pos: int) -> None:
        """Bind ``%name`` to ``values``; report redefinitions; resolve earlier forward uses."""
        scope = self.scope
        prev = scope.get(name)
        if prev is not None:
            self.diags.append(Diagnostic(
                f"redefinition of SSA value '%{name}'", self.loc(pos),
                [("previously defined here", self.loc(prev[1]))]))
        scope[name] = (values, pos)
        if len(values) == 1:  # name hints, for messages
            values[0].name = name
        else:
            for i, v in enumerate(values):
                v.name = f"{name}#{i}"
        if self.forward:
            pending = self.forward.pop(name, None)
            if pending:
                for idx, (placeholder, upos) in pending.items():
                    if idx >= len(values):
                        self.diags.append(Diagnostic(
                            f"'%{name}#{idx}' does not exist: '%{name}' has {len(values)} "
                            f"result(s)", self.loc(upos)))
                        self.placeholder_locs[placeholder] = None  # reported here already
                        continue
                    v = values[idx]
                    self._check_type(placeholder.type, v, name, idx, upos)
                    # Link the earlier use to this definition; the verifier reports dominance.
                    uloc = self.placeholder_locs.pop(placeholder, None)
                    for op, n in placeholder.users.items():
                        if uloc is not None:
                            self.forward_use_locs.setdefault(op, uloc)
                        op.operands = tuple(v if o is placeholder else o for o in op.operands)
                        v.users[op] = v.users.get(op, 0) + n
                    placeholder.users.clear()

    def _check_type(self, written, v: Value, name: str, idx: int, upos: int) -> None:
        t = v.type
        if written is t or written == t:
            return
        ref = f"%{name}" if idx == 0 else f"%{name}#{idx}"
        self.diags.append(Diagnostic(
            f"type mismatch: '{ref}' is used as {written} but defined as {t}", self.loc(upos),
            [(f"'{ref}' defined here", v.loc)]))

    def use(self, name: str, idx: int, written, pos: int) -> Value:
        """The value ``%name#idx`` used at ``pos`` with written type ``written``."""
        entry = self.scope.get(name)
        if entry is not None:
            values = entry[0]
            if idx >= len(values):
                self.diags.append(Diagnostic(
                    f"'%{name}#{idx}' does not exist: '%{name}' has {len(values)} result(s)",
                    self.loc(pos)))
                ph = Value(written, None, idx, f"{name}#{idx}")
                self.placeholder_locs[ph] = None  # reported here already
                return ph
            v = values[idx]
            t = v.type
            if written is not t and written != t:
                self._check_type(written, v, name, idx, pos)
            return v
        pending = self.forward.setdefault(name, {})
        seen = pending.get(idx)
        if seen is not None:
            ph = seen[0]
            if ph.type != written:
                self.diags.append(Diagnostic(
                    f"type mismatch: '%{name}' is used as {written} here and as {ph.type} "
                    f"before", self.loc(pos)))
            return ph
        ph = Value(written, None, idx, name if idx == 0 else f"{name}#{idx}")
        pending[idx] = (ph, pos)
        self.placeholder_locs[ph] = self.loc(pos)
        return ph

    def parse_body(self, block: Block) -> None:
        """Operations up to and including the closing ``}`` of a function body."""
        if self._line_starts is None:
            self.loc(0)
        text = self.text
        n = len(text)
        fast = _FAST_OP.match
        while True:
            pos = self.skip()
            if pos >= n:
                raise self.expected("'}' closing the function body")
            c = text[pos]
            if c == "}":
                self.pos = pos + 1
                return
            if c == "%" or c == '"':
                m = fast(text, pos)
                if m is not None:
                    try:
                        self.fast_op(m, block)
                        continue
                    except _Fallback:
                        self.pos = pos
            self.parse_op(block)

    def fast_op(self, m: re.Match, block: Block) -> None:
        res, count, name, operands_text, tail = m.groups()
        if name == self.terminator and name != RETURN:
            raise _Fallback  # "oneflow.return" is the function's terminator: parse_op maps it
        info = self.tails.get(tail)
        if info is None:
            info = self._sub(m.start(5), m.end(5), self._parse_tail)
            if len(self.tails) >= 8192:  # all-distinct tails (e.g. constants): bound the memory
                self.tails.clear()
            self.tails[tail] = info
        ins, outs, cached_attrs = info
        if res is not None and (int(count) if count is not None else 1) != len(outs):
            raise _Fallback
        refs = _OPERAND_REFS.findall(operands_text) if operands_text else ()
        if len(refs) != len(ins):
            raise _Fallback
        # No fallback past this point: resolving names has side effects.
        start = m.start()
        operands = []
        scope = self.scope
        for (oname, oidx), t in zip(refs, ins):
            entry = scope.get(oname)
            if entry is not None and not oidx:
                v = entry[0][0]
                vt = v.type
                if vt is not t and vt != t:
                    self._check_type(t, v, oname, 0, self._operand_pos(m, oname))
                operands.append(v)
            else:
                operands.append(self.use(oname, int(oidx or 0), t, self._operand_pos(m, oname)))
        self.pos = m.end()
        starts = self._line_starts
        line = bisect_right(starts, start)
        op = Operation(name, operands, outs, dict(cached_attrs) if cached_attrs else {},
                       Location(self.file, line, start - starts[line - 1] + 1))
        block.append(op)
        if res is not None:
            if res in scope or self.forward:
                self.define(res, op.results, start)
            else:  # the common case of define(), inlined
                results = op.results
                scope[res] = (results, start)
                if len(results) == 1:
                    results[0].name = res

    def _parse_tail(self) -> tuple[tuple, tuple, dict]:
        """``<{props}> {attrs} : (T) -> T`` after an operand list (fast path, cached)."""
        attrs: dict = {}
        if self.accept("<{"):
            attrs = self.parse_attr_dict("}>")
        if self.accept("{"):
            more = self.parse_attr_dict()
            if any(k in attrs for k in more):
                raise _Fallback
            attrs.update(more)
        self.expect(":")
        ins, outs = self.parse_function_type()
        return ins, outs, attrs

    def _operand_pos(self, m: re.Match, name: str) -> int:
        base = m.start(4)
        i = self.text.find("%" + name, base, m.end(4))
        return i if i >= 0 else base

    def _sub(self, start: int, end: int, fn):
        """Run ``fn`` on ``text[start:end]`` (in place); decline the fast path on any error."""
        saved = self.pos
        self.pos = start
        try:
            out = fn()
        except DiagnosticError:
            raise _Fallback from None
        finally:
            # An error may leave nesting levels open; the general parser starts from none.
            end_pos, self.pos, self.depth = self.pos, saved, 0
        if end_pos != end:
            raise _Fallback
        return out

    def parse_value_list(self, pattern: re.Pattern, default: int, what: str,
                         close: str | None = None,
                         after: str = "") -> list[tuple[str, int, int]]:
        """``%a, %b#1, ...``: ``(name, number, position)`` per value, the number being the
        pattern's second group (``#1`` of a use, ``:2`` of a result group) or ``default``.

        With ``close`` the list must end in it (``after`` says what was expected instead);
        without, it ends at the first value not followed by ``,``.
        """
        values = []
        while True:
            self.skip()
            pos = self.pos
            m = self.match(pattern)
            if m is None:
                raise self.expected(what)
            values.append((m.group(1), int(m.group(2) or default), pos))
            if close is None:
                if not self.accept(","):
                    return values
            elif self.accept(close):
                return values
            elif not self.accept(","):
                raise self.expected(after)

    def parse_op(self, block: Block) -> None:
        """One operation, general form (also the custom ``return``)."""
        text = self.text
        start = self.skip()
        groups: list[tuple[str, int, int]] = []
        if text.startswith("%", start):
            groups = self.parse_value_list(RESULT_GROUP, 1, "a result name like '%0'",
                                           "=", "'=' after the result names")
        self.skip()
        opos = self.pos
        if text.startswith('"', opos):
            name = self.string("an operation name")
        else:
            word = self.keyword("return", "func.return", self.terminator)
            if word is not None:
                if groups:
                    raise self.error("'return' has no results", start)
                return self.parse_custom_return(block, start)
            bm = BARE_ID.match(text, opos)
            if bm is not None:
                raise self.error(f"custom syntax for '{bm.group()}' is not supported; write the "
                                 f"operation in generic form, e.g. "
                                 f"'%0 = \"{bm.group()}\"(%x) : (tensor<4xf32>) -> tensor<4xf32>'",
                                 opos)
            raise self.expected("an operation (a quoted name like \"tdflow.relu\", or 'return')")
        if not name:
            raise self.error("empty operation name", opos)
        if name == self.terminator:
            name = RETURN
        self.expect("(", "'(' starting the operand list")
        uses: list[tuple[str, int, int]] = []
        if not self.accept(")"):
            uses = self.parse_value_list(SSA_USE, 0, "an operand like '%0'",
                                         ")", "',' or ')' in the operand list")
        if self.peek("["):
            raise self.error(f"'{name}': successor blocks are not supported (tdflow functions "
                             f"have a single block)")
        attrs: dict = {}
        if self.accept("<{"):
            attrs = self.parse_attr_dict("}>")
        if self.peek("("):
            raise self.error(f"'{name}': operations with regions are not supported (tdflow "
                             f"functions are one block of region-free operations; only "
                             f"'func.func', 'oneflow.job' and 'builtin.module' hold regions)")
        if self.accept("{"):
            apos = self.pos - 1
            more = self.parse_attr_dict()
            for k in more:
                if k in attrs:
                    raise self.error(f"attribute '{k}' is given both as a property and as an "
                                     f"attribute", apos)
            attrs.update(more)
        self.skip()
        if not self.text.startswith(":", self.pos):
            raise self.expected(f"':' and the function type of '{name}', like "
                                f"': (tensor<4xf32>) -> tensor<4xf32>'")
        self.pos += 1
        tpos = self.skip()
        ins, outs = self.parse_function_type()
        if len(ins) != len(uses):
            raise self.error(f"'{name}' has {len(uses)} operand(s) but its type lists "
                             f"{len(ins)} operand type(s)", tpos)
        nres = sum(g[1] for g in groups)
        if groups and nres != len(outs):
            raise self.error(f"'{name}' defines {len(outs)} result(s) but {nres} name(s) are "
                             f"bound to them", start)
        loc = self.skip_loc() or self.loc(start)
        operands = [self.use(n, i, t, p) for (n, i, p), t in zip(uses, ins)]
        op = block.append(Operation(name, operands, outs, attrs, loc))
        k = 0
        for gname, gcount, gpos in groups:
            self.define(gname, op.results[k:k + gcount], gpos)
            k += gcount

    def parse_custom_return(self, block: Block, start: int) -> None:
        uses = []
        self.skip()
        if self.text.startswith("%", self.pos):
            uses = self.parse_value_list(SSA_USE, 0, "a value like '%0'")
            self.expect(":", "':' and the types of the returned values")
            tpos = self.skip()
            types = []
            while True:
                types.append(self.parse_type())
                if not self.accept(","):
                    break
            if len(types) != len(uses):
                raise self.error(f"'return' has {len(uses)} value(s) but {len(types)} type(s)",
                                 tpos)
        else:
            types = []
        loc = self.skip_loc() or self.loc(start)
        operands = [self.use(n, i, t, p) for (n, i, p), t in zip(uses, types)]
        block.append(Operation(RETURN, operands, (), {}, loc))


def parse_module(text: str | bytes, filename: str = "<string>") -> Module:
    """Parse program text into a module; raises ``DiagnosticError`` on syntax errors.

    ``text`` may be ``bytes`` (what a file holds): a byte that is not UTF-8 is a located error.
    Run :func:`tdflow.dialect.ir.verifier.verify_module` on the result: name-resolution problems
    are reported there.

    >>> parse_module(b'func.func @f() {\\n  return\\n}\\n', "b.mlir").funcs[0].name
    'f'
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = decode_source(bytes(text), filename)
    else:
        check_text(text, filename)
    register_source(filename, text)
    # Parsing allocates ~10 objects per op and frees none: the cyclic GC would rescan the growing
    # heap over and over (half the parse time on big programs), so pause it.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return Parser(text, filename).parse_module()
    finally:
        if enabled:
            gc.enable()


def parse_file(path) -> Module:
    """Parse the file at ``path`` (locations name it); ``OSError`` if it cannot be read."""
    return parse_module(read_source(path), str(path))
