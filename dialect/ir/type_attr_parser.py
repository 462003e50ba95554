"""Parsing types and attribute values (see :mod:`tdflow.dialect.ir.attrs` for the forms).

>>> parse_attribute("array<i64: 1, 0>")
DenseArrayAttr(type='i64', value=(1, 0))
>>> parse_type("tensor<4x?xf32>")
TensorType(shape=(4, None), dtype='f32')
"""

from __future__ import annotations

import re

from tdflow.dialect.ir.attrs import (
    FLOAT_TYPES,
    INT_TYPES_RE,
    UNIT,
    ArrayAttr,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DenseResourceAttr,
    DictAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    StringAttr,
    SymbolRefAttr,
    TypeAttr,
    element_bytes,
    float_from_bits,
    int_range,
)
from tdflow.dialect.ir.core import Resources
from tdflow.dialect.ir.diagnostics import register_source
from tdflow.dialect.ir.lexer import (
    BARE_ID,
    NUMBER,
    SCALAR_TYPE,
    SYMBOL,
    Lexer,
    signless,
)
from tdflow.dialect.types import ELEMENT_TYPES, FunctionType, TensorType

__all__ = ["TypeAttrParser", "parse_type", "parse_attribute", "MAX_NESTING"]

#: How deeply ``[...]``, ``{...}`` and ``(...)`` may nest in one type or attribute. Programs nest
#: a few levels; the bound keeps the parser and everything that walks its result recursively
#: (printing, hashing, equality, passes) far from Python's recursion limit, and turns a hostile
#: ``[[[[...`` into a located error instead of a ``RecursionError``.
MAX_NESTING = 64
#: Largest static dimension (MLIR keeps dimensions in an int64).
MAX_DIM = (1 << 63) - 1
#: Widest integer type, as in MLIR (``i16777215``).
MAX_INT_WIDTH = (1 << 24) - 1
#: Decimal integer literals longer than this are refused: converting one costs time quadratic in
#: its length (Python's own limit for ``int(str)``), and none fits a 64-bit type anyway.
MAX_DECIMAL_DIGITS = 4300
#: ``#name``/``!name``: an alias, or with a ``.`` (``#sbp.B``) a dialect attribute or type.
_HASH_ID = re.compile(r"[#!]([A-Za-z_][\w$.\-]*)")
#: What nests in the body ``<...>`` of a dialect attribute: strings are skipped whole and
#: ``->`` is not a closing ``>`` (``#sbp.parallel<[] -> [#sbp.B]>``), as in MLIR's lexer.
_BODY_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|->|[<>\[\](){}]')
_CLOSERS = {"<": ">", "[": "]", "(": ")", "{": "}"}
#: Builtin attributes tdflow keeps as text (it has no model of their contents).
_OPAQUE_BUILTINS = ("affine_map", "affine_set", "strided", "distinct")
_COMMON_SCALARS = frozenset({"i1", "i8", "i16", "i32", "i64", "si32", "si64", "ui8", "f16",
                             "bf16", "f32", "f64", "index", "none"})


class TypeAttrParser(Lexer):
    """Types (``tensor<...>``, scalars, function types) and attribute values."""

    __slots__ = ("types", "depth", "attr_aliases", "type_aliases", "resources", "resource_uses")

    def __init__(self, text: str, file: str = "<string>") -> None:
        super().__init__(text, file)
        self.types: dict[str, object] = {}  # tensor type text -> TensorType (types repeat)
        self.depth = 0  # open '[', '{' and '(' of the type or attribute being parsed
        # `#map = ...` and `!t = ...` defined at the top of the file (uses follow definitions,
        # as in MLIR; a use is replaced by the value, so printing writes the value in place).
        self.attr_aliases: dict[str, object] = {}
        self.type_aliases: dict[str, object] = {}
        # The blobs of `{-# dialect_resources: { builtin: {...} } #-}` (name -> "0x..." text),
        # filled when the section is read (it ends the file); dense_resource attributes keep a
        # reference. Each use: (attribute, position), checked against the blobs at the end.
        self.resources: dict[str, str] = Resources()
        self.resource_uses: list[tuple[DenseResourceAttr, int]] = []

    def balanced_body(self, pos: int, what: str) -> int:
        """The end of the ``<...>`` (or ``[...]``, ``(...)``) starting at ``pos``."""
        stack: list[str] = []
        for m in _BODY_TOKEN.finditer(self.text, pos):
            tok = m.group()
            if tok in _CLOSERS:
                stack.append(_CLOSERS[tok])
                if len(stack) > MAX_NESTING:
                    raise self.error(f"nesting too deep: more than {MAX_NESTING} levels in "
                                     f"{what}", pos)
            elif tok in (">", "]", ")", "}"):
                if not stack or stack.pop() != tok:
                    raise self.error(f"unbalanced '{tok}' in {what}", m.start())
                if not stack:
                    return m.end()
        raise self.error(f"unterminated {what} (expected '{stack[-1] if stack else '>'}')", pos)

    def parse_hash(self, sigil_what: str):
        """``#alias`` / ``!alias`` (its value) or a dialect attribute / type ``#sbp.S<0>``
        (its text: an :class:`OpaqueAttr`, or for a type the ``str`` of its spelling)."""
        pos = self.pos
        text = self.text
        m = _HASH_ID.match(text, pos)
        if m is None:
            raise self.expected(f"{sigil_what} name after '{text[pos]}'")
        end = m.end()
        name = m.group(1)
        is_attr = text[pos] == "#"
        if "." not in name and not text.startswith("<", end):
            table = self.attr_aliases if is_attr else self.type_aliases
            value = table.get(name)
            if value is None:
                raise self.error(f"undefined {'attribute' if is_attr else 'type'} alias "
                                 f"'{m.group()}' (an alias is defined before its first use: "
                                 f"'{m.group()} = ...' at the top of the file)", pos)
            self.pos = end
            return value
        if text.startswith("<", end):
            end = self.balanced_body(end, f"the dialect {sigil_what} '{m.group()}<...>'")
        self.pos = end
        return OpaqueAttr(text[pos:end]) if is_attr else text[pos:end]

    def _enter(self, pos: int) -> None:
        """One more level of nesting, opened at ``pos``; an error past :data:`MAX_NESTING`."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"nesting too deep: more than {MAX_NESTING} levels of '[', '{{' "
                             f"or '(' in a type or attribute", pos)

    # -- types ---------------------------------------------------------------------------
    def parse_type(self):
        """``tensor<...>``, a scalar type (``f32``, ``i64``, ``index``) or a function type."""
        self.skip()
        text, pos = self.text, self.pos
        if text.startswith("tensor<", pos):
            end = text.find(">", pos)
            if end < 0:
                raise self.error("unterminated tensor type (expected '>')", pos)
            s = text[pos:end + 1]
            t = self.types.get(s)
            if t is None:
                self._check_dims(s, pos)
                try:
                    t = TensorType.parse(s)
                except ValueError as exc:
                    raise self.error(_short(str(exc), 300), pos) from None
                self.types[s] = t
            self.pos = end + 1
            return t
        if text.startswith("(", pos):
            ins, outs = self.parse_function_type()
            return FunctionType(ins, outs)
        if text.startswith("!", pos):
            return self.parse_hash("type")
        m = SCALAR_TYPE.match(text, pos)
        if m is not None:
            t = m.group()
            if t not in _COMMON_SCALARS and t[0] in "isu":
                width = t.lstrip("su")[1:]
                if len(width) > 8 or int(width) > MAX_INT_WIDTH:
                    # MLIR's limit; it also keeps 1 << width (attribute ranges) affordable.
                    raise self.error(f"integer bitwidth is limited to {MAX_INT_WIDTH} bits", pos)
            self.pos = m.end()
            return t
        raise self.expected("a type (e.g. 'tensor<4x?xf32>', 'tensor<*xf32>', 'f32', 'i64')")

    def _check_dims(self, s: str, pos: int) -> None:
        """The tensor type ``s`` (at ``pos``) has a known element type and dimensions that are
        ``?`` or fit in int64; the messages quote at most a few dozen characters of it."""
        body = s[len("tensor<"):-1]
        parts = body.replace(" ", "").split("x")
        dtype = parts[-1]
        if dtype not in ELEMENT_TYPES:
            raise self.error(f"unknown element type '{_short(dtype)}' in a tensor type; expected "
                             f"one of {', '.join(ELEMENT_TYPES)}", pos)
        start = pos + len("tensor<")
        for part in body.split("x")[:-1]:
            if part.isdigit() and (not part.isascii() or len(part) > 19
                                   or int(part) > MAX_DIM):
                shown = part if len(part) <= 24 else part[:20] + "..."
                raise self.error(f"invalid dimension {shown} (a dimension is a decimal integer "
                                 f"from 0 to {MAX_DIM}, or '?')", start)
            start += len(part) + 1

    def parse_type_list(self, close: str) -> tuple:
        """Types separated by ``,`` up to (and consuming) ``close``."""
        types = []
        if not self.accept(close):
            while True:
                types.append(self.parse_type())
                if self.accept(close):
                    break
                if not self.accept(","):
                    raise self.expected(f"',' or '{close}' in a type list")
        return tuple(types)

    def parse_function_type(self) -> tuple[tuple, tuple]:
        """``(T, T) -> T`` or ``(T) -> (T, T)``."""
        self.expect("(", "'(' starting a function type like '(tensor<4xf32>) -> tensor<4xf32>'")
        self._enter(self.pos - 1)
        ins = self.parse_type_list(")")
        self.expect("->", "'->' in a function type")
        outs = self.parse_result_types()
        self.depth -= 1
        return ins, outs

    def parse_result_types(self) -> tuple:
        if self.accept("("):
            return self.parse_type_list(")")
        return (self.parse_type(),)

    # -- attributes ------------------------------------------------------------------------
    def parse_attr_dict(self, close: str = "}") -> dict:
        """``{name = value, flag, ...}`` after its opening brace, up to ``close``."""
        attrs: dict = {}
        if self.accept(close):
            return attrs
        while True:
            self.skip()
            start = self.pos
            m = BARE_ID.match(self.text, self.pos)
            if m is not None:
                name = m.group()
                self.pos = m.end()
            elif self.text.startswith('"', self.pos):
                name = self.string()
            else:
                raise self.expected("an attribute name")
            if name in attrs:
                raise self.error(f"duplicate attribute '{name}' in the attribute dictionary",
                                 start)
            attrs[name] = self.parse_attr() if self.accept("=") else UNIT
            if self.accept(close):
                return attrs
            if not self.accept(","):
                raise self.expected(f"',' or '{close}' in an attribute dictionary")

    def parse_attr(self):
        """One attribute value (see :mod:`tdflow.dialect.ir.attrs` for the forms)."""
        self.skip()
        text, pos = self.text, self.pos
        c = text[pos] if pos < len(text) else ""
        if c == '"':
            return StringAttr(self.string())
        if c == "[":
            self.pos += 1
            self._enter(pos)
            items = []
            if not self.accept("]"):
                while True:
                    items.append(self.parse_attr())
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.expected("',' or ']' in an array attribute")
            self.depth -= 1
            return ArrayAttr(tuple(items))
        if c == "{":
            self.pos += 1
            self._enter(pos)
            d = DictAttr(tuple(self.parse_attr_dict().items()))
            self.depth -= 1
            return d
        if c == "@":
            m = self.match(SYMBOL)
            if m is not None:
                return SymbolRefAttr(m.group(1))
            self.pos += 1
            return SymbolRefAttr(self.string("a symbol name after '@'"))
        if c == "-" or c.isdigit():
            return self.parse_number_attr()
        if c == "(" or c == "!":
            return TypeAttr(self.parse_type())
        if c == "#":
            return self.parse_hash("attribute")
        m = BARE_ID.match(text, pos)
        if m is not None:
            word = m.group()
            if word in ("true", "false"):
                self.pos = m.end()
                if self.accept(":"):
                    tpos = self.skip()
                    if self.parse_type() != "i1":
                        raise self.error("a boolean attribute has type 'i1'", tpos)
                return BoolAttr(word == "true")
            if word == "unit":
                self.pos = m.end()
                return UNIT
            if word == "array" and text.startswith("array<", pos):
                return self.parse_dense_array()
            if word == "dense" and text.startswith("dense<", pos):
                return self.parse_dense_elements()
            if word == "dense_resource" and text.startswith("dense_resource<", pos):
                return self.parse_dense_resource()
            if word.startswith("dense_") or word == "sparse":
                raise self.error(f"'{word}' attributes are not supported; write the constant as "
                                 f"dense<[...]> : tensor<...> or dense_resource<name> : "
                                 f"tensor<...>", pos)
            if word in _OPAQUE_BUILTINS and text.startswith("<", m.end()):
                self.pos = self.balanced_body(m.end(), f"'{word}<...>'")
                return OpaqueAttr(text[pos:self.pos])
            if word == "tensor" or SCALAR_TYPE.match(text, pos):
                return TypeAttr(self.parse_type())
            # An enum case by its keyword is custom-assembly syntax, not the generic form.
            raise self.error(f"expected an attribute value (true, 3, 0.5 : f32, \"text\", [..], "
                             f"array<i64: ..>, a type), found '{_short(word)}': a bare word is "
                             f"not one in MLIR's generic syntax (write an enum case as its "
                             f"integer, like 2 : i32, or its name as a string, \"{_short(word)}\")",
                             pos)
        raise self.expected("an attribute value (true, 3, 0.5 : f32, \"text\", [..], "
                            "array<i64: ..>, a type)")

    def parse_dense_elements(self) -> DenseElementsAttr:
        """``dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>``, ``dense<0.0> : tensor<4xf32>``
        (splat), ``dense<"0x...">`` (hexadecimal, kept as written), ``dense<> : tensor<0xf32>``."""
        start = self.pos
        self.pos += len("dense<")
        self.skip()
        value: tuple | str
        if self.text.startswith('"', self.pos):
            value = self.string()
            if not value.startswith("0x"):
                raise self.error("a string in dense<...> is hexadecimal data like \"0x0000803F\"",
                                 start)
            nested = None
        elif self.peek(">"):
            nested = []
        else:
            nested = self._dense_item(start)
        self.expect(">", "'>' closing dense<...>")
        self.expect(":", "':' and the tensor type of the dense<...> attribute")
        tpos = self.skip()
        t = self.parse_type()
        if not isinstance(t, TensorType) or not t.is_static:
            raise self.error(f"the type of a dense<...> attribute is a static tensor type like "
                             f"'tensor<2x2xf32>', found '{t}'", tpos)
        if nested is None:
            return DenseElementsAttr(t, value)  # type: ignore[arg-type]
        flat: list = []
        shape = self._dense_shape(nested, flat, start)
        if not (isinstance(nested, list) and shape == t.shape) and not (
                not isinstance(nested, list) and flat):
            raise self.error(f"dense<...> has shape {list(shape)} but its type is {t}", start)
        if not isinstance(nested, list) and not t.numel:
            raise self.error(f"a splat dense<...> needs a non-empty tensor type, found {t}", start)
        dt = t.dtype
        vals = []
        for lit, vpos in flat:
            if dt == "i1":
                if lit not in ("true", "false", "0", "1"):
                    raise self.error(f"expected 'true' or 'false' in dense<...> of {t}", vpos)
                vals.append(lit in ("true", "1"))
            elif lit in ("true", "false"):
                raise self.error(f"a boolean in dense<...> of {t}", vpos)
            elif dt in FLOAT_TYPES:
                v = self._float_literal(lit, dt, vpos)
                try:
                    vals.append(FloatAttr(v, dt).value)
                except OverflowError:
                    raise self.error(f"{lit} is out of range for {dt}", vpos) from None
            else:
                if "." in lit or "e" in lit.lower().replace("0x", ""):
                    raise self.error(f"expected an integer in dense<...> of {t}, found {lit}",
                                     vpos)
                v = self._int_literal(lit, vpos)
                lo, hi = int_range(dt)
                if not lo <= v <= hi:
                    raise self.error(f"{_short(lit)} is out of range for {dt}", vpos)
                vals.append(signless(v, dt))
        if vals and all(v == vals[0] for v in vals):  # MLIR keeps equal elements as a splat
            vals = vals[:1]
        return DenseElementsAttr(t, tuple(vals))

    def parse_dense_resource(self) -> DenseResourceAttr:
        """``dense_resource<name> : tensor<4xf32>``: the data is the blob ``name`` of the file's
        ``{-# dialect_resources #-}`` section (checked once the whole file is read)."""
        start = self.pos
        self.pos += len("dense_resource<")
        self.skip()
        m = self.match(BARE_ID)
        if m is not None:
            name = m.group()
        elif self.text.startswith('"', self.pos):
            name = self.string()
        else:
            raise self.expected("a blob name in dense_resource<...>")
        self.expect(">", "'>' closing dense_resource<...>")
        self.expect(":", "':' and the tensor type of the dense_resource<...> attribute")
        tpos = self.skip()
        t = self.parse_type()
        if not isinstance(t, TensorType) or not t.is_static or element_bytes(t.dtype) is None:
            raise self.error(f"the type of a dense_resource<...> attribute is a static tensor "
                             f"type of numbers like 'tensor<4xf32>', found '{t}'", tpos)
        attr = DenseResourceAttr(t, name, self.resources)
        self.resource_uses.append((attr, start))
        return attr

    def _dense_item(self, start: int):
        """A literal (``(text, position)``) or a nested list of them, inside ``dense<...>``."""
        self.skip()
        pos = self.pos
        if self.accept("["):
            self._enter(pos)
            items: list = []
            if not self.accept("]"):
                while True:
                    items.append(self._dense_item(start))
                    if self.accept("]"):
                        break
                    if not self.accept(","):
                        raise self.expected("',' or ']' in dense<...>")
            self.depth -= 1
            return items
        w = self.keyword("true", "false")
        if w is not None:
            return (w, pos)
        m = self.match(NUMBER)
        if m is None:
            if self.text.startswith("(", pos):
                raise self.error("complex elements in dense<...> are not supported", pos)
            raise self.expected("a number, 'true', 'false' or '[' in dense<...>")
        return (m.group(), pos)

    def _dense_shape(self, nested, flat: list, start: int) -> tuple:
        """The shape of a nested list (every sub-list the same length); leaves go to ``flat``."""
        if not isinstance(nested, list):
            flat.append(nested)
            return ()
        if not nested:
            return (0,)
        shapes = {self._dense_shape(x, flat, start) for x in nested}
        if len(shapes) != 1:
            raise self.error("dense<...> has nested lists of different lengths", start)
        return (len(nested), *shapes.pop())

    def parse_number_attr(self):
        start = self.pos
        m = self.match(NUMBER)
        if m is None:
            raise self.expected("a number")
        lit = m.group()
        is_float = m.group(1) is not None
        type = None
        if self.accept(":"):
            tpos = self.skip()
            type = self.parse_type()
            if not isinstance(type, str) or not (type in FLOAT_TYPES or INT_TYPES_RE.match(type)):
                raise self.error(f"expected an integer or float type for the number {lit}, "
                                 f"found '{type}'", tpos)
        if is_float or type in FLOAT_TYPES:
            type = type or "f64"
            if type not in FLOAT_TYPES:
                raise self.error(f"floating point literal {lit} cannot have integer type '{type}'",
                                 start)
            value = self._float_literal(lit, type, start)
            try:
                return FloatAttr(value, type)
            except OverflowError:
                raise self.error(f"float {lit} is out of range for type '{type}'", start) from None
        type = type or "i64"
        value = self._int_literal(lit, start)
        lo, hi = int_range(type)
        if not lo <= value <= hi:
            raise self.error(f"integer {_short(lit)} is out of range for type '{type}' "
                             f"(expected {_short(str(lo))} to {_short(str(hi))})", start)
        if type == "i1":
            return BoolAttr(bool(value))
        return IntegerAttr(signless(value, type), type)

    def _int_literal(self, lit: str, pos: int) -> int:
        """The value of an integer literal (decimal or ``0x`` hex) starting at ``pos``."""
        if "0x" in lit:
            return int(lit, 16)  # linear in the length, whatever it is
        if len(lit) > MAX_DECIMAL_DIGITS:
            raise self.error(f"integer literal with {len(lit.lstrip('-'))} digits is too long "
                             f"(at most {MAX_DECIMAL_DIGITS})", pos)
        return int(lit)

    def _float_literal(self, lit: str, type: str, pos: int) -> float:
        """The value of a float literal; ``0x...`` is the bit pattern of a ``type`` value."""
        if "0x" not in lit:
            return float(lit)  # overflow gives inf; FloatAttr then checks the type's range
        bits = int(lit, 16)
        width = 16 if type == "bf16" else {"f16": 16, "f32": 32, "f64": 64}.get(type, 64)
        if not 0 <= bits < 1 << width:
            raise self.error(f"hexadecimal float literal {_short(lit)} does not fit in "
                             f"{type} ({width} bits)", pos)
        return float_from_bits(bits, type)

    def parse_dense_array(self):
        start = self.pos
        self.pos += len("array<")
        tpos = self.skip()
        etype = self.parse_type()
        if etype not in ("i1", "i8", "i16", "i32", "i64", "f32", "f64"):
            raise self.error(f"dense array element type must be i1, i8, i16, i32, i64, f32 or "
                             f"f64; found '{etype}'", tpos)
        values: list = []
        if self.accept(":"):
            while True:
                self.skip()
                vpos = self.pos
                if etype == "i1":
                    w = self.keyword("true", "false")
                    if w is None:
                        raise self.expected("'true' or 'false' in an i1 array")
                    values.append(w == "true")
                else:
                    m = self.match(NUMBER)
                    if m is None:
                        raise self.expected(f"a number in an array<{etype}: ...>")
                    lit = m.group()
                    if etype[0] == "f":
                        values.append(self._float_literal(lit, etype, vpos))
                    else:
                        if m.group(1) is not None:
                            raise self.error(f"expected an integer in array<{etype}: ...>, "
                                             f"found {_short(lit)}", vpos)
                        v = self._int_literal(lit, vpos)
                        lo, hi = int_range(etype)
                        if not lo <= v <= hi:
                            raise self.error(f"{_short(lit)} is out of range for {etype}", vpos)
                        values.append(signless(v, etype))
                if not self.accept(","):
                    break
        self.expect(">", "'>' closing array<...>")
        try:
            return DenseArrayAttr(etype, tuple(values))
        except OverflowError:
            raise self.error(f"a value does not fit in {etype}", start) from None


def _short(lit: str, limit: int = 40) -> str:
    """A literal as quoted in messages: a huge one is shortened."""
    return lit if len(lit) <= limit else f"{lit[:limit // 2]}...({len(lit)} characters)"


def parse_type(text: str):
    """Parse a type: ``parse_type("tensor<4x?xf32>")`` → ``TensorType((4, None), "f32")``."""
    p = TypeAttrParser(text, "<type>")
    t = p.parse_type()
    if p.skip() != len(text):
        raise p.expected("end of the type")
    return t


def parse_attribute(text: str):
    """Parse one attribute value: ``parse_attribute("0.2 : f32")`` → ``FloatAttr(0.2, "f32")``."""
    p = TypeAttrParser(text, "<attribute>")
    register_source("<attribute>", text)
    a = p.parse_attr()
    if p.skip() != len(text):
        raise p.expected("end of the attribute")
    return a
