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

import re

from tdflow.dialect.ir.attrs import StringAttr, blob_bytes, element_bytes
from tdflow.dialect.ir.core import FUNC_KINDS, Module
from tdflow.dialect.ir.diagnostics import register_source
from tdflow.dialect.ir.func_parser import FuncParser
from tdflow.dialect.ir.lexer import BARE_ID, BLOCK_LABEL, SYMBOL
from tdflow.dialect.ir.source import check_text, decode_source, read_source
from tdflow.dialect.ir.type_attr_parser import parse_attribute, parse_type

from tdflow.core.gc_pause import gc_paused

__all__ = ["parse_module", "parse_file", "parse_type", "parse_attribute", "Parser"]

_MODULE_WORD = re.compile(r"module(?![\w$.])")
_ALIAS_DEF = re.compile(r"([#!])([A-Za-z_][\w$.\-]*)[ \t]*=")
_GENERIC_FUNC = re.compile(r'"(func\.func|oneflow\.job)"')


class Parser(FuncParser):
    """A recursive-descent parser over one text: modules, aliases, resources and functions
    (:class:`~tdflow.dialect.ir.func_parser.FuncParser`, whose bodies are
    :class:`~tdflow.dialect.ir.body_parser.BodyParser`'s). Use :func:`parse_module`."""

    __slots__ = ()

    # -- modules ---------------------------------------------------------------------------
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
        self.match(BLOCK_LABEL)
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
    with gc_paused():
        return Parser(text, filename).parse_module()


def parse_file(path) -> Module:
    """Parse the file at ``path`` (locations name it); ``OSError`` if it cannot be read."""
    return parse_module(read_source(path), str(path))
