"""The body of a function in MLIR text: its operations, generic form (and the custom
``return``), and SSA names bound and resolved (forward uses linked, redefinitions and type
mismatches recorded for the verifier). :class:`~tdflow.dialect.ir.parser.Parser` builds on it.

Speed: each line holding a generic op is first matched by one regular expression (``_FAST_OP``);
the tail of types and attributes, which repeats, is parsed once and cached. Anything the fast
path does not fully understand goes through :meth:`BodyParser.parse_op`, which gives the errors.

>>> from tdflow.dialect.ir.core import Block
>>> p = BodyParser('%0 = "t.a"() : () -> tensor<2xf32>\\n}', "b.mlir"); b = Block()
>>> p.parse_body(b); [(op.name, str(op.results[0].type)) for op in b]
[('t.a', 'tensor<2xf32>')]
"""

from __future__ import annotations

import re
from bisect import bisect_right

from tdflow.dialect.ir.attrs import FloatAttr, float_attr
from tdflow.dialect.ir.core import RETURN, Block, Location, Operation, Value
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError
from tdflow.dialect.ir.fast_attrs import scalar_attr_dict
from tdflow.dialect.ir.lexer import BARE_ID, RESULT_GROUP, SSA_USE
from tdflow.dialect.ir.type_attr_parser import TypeAttrParser

__all__ = ["BodyParser"]

# The fast path: one generic op on one line, no nested braces/parens inside its pieces.
# Quantifiers are possessive (`*+`, `++`, `?+`): each piece ends at a character its class cannot
# hold, so giving characters back could never make a match; the engine does not try (a line the
# fast path declines fails at once).
_NAME = r"(?:\d++|[A-Za-z$._\-][\w$.\-]*+)"
_FAST_OP = re.compile(
    r"[ \t\r\n]*+"  # the blanks and line breaks before the op (a comment: the lexer skips it)
    rf"(?:%({_NAME})(?::(\d++))?+[ \t]*+=[ \t]*+)?+"  # 1 result name, 2 result count
    r'"([\w.$\-]++)"\('  # 3 op name
    rf"((?:%{_NAME}(?:#\d++)?+(?:[ \t]*+,[ \t]*+%{_NAME}(?:#\d++)?+)*+)?+)\)"  # 4 operands
    # 5 the rest of the line, which _REST reads. It repeats from op to op: read once per
    # distinct text (a scan to the line's end costs a fraction of _REST's character classes).
    r"([^\n]*+)",
)
# What follows an op's operands: 1 properties, 2 attributes, 3 the function type (each
# repeats: parsed once, cached), then nothing but blanks or a comment.
# Each optional group takes its own leading blanks: `[ \t]*(A)?[ \t]*(B)?[ \t]*:` would let a
# failing line of k blanks be split three ways, O(k^3) backtracking (a hang).
_REST = re.compile(
    r"(?:[ \t]*+(<\{[^{}\n]*+\}>))?(?:[ \t]*+(\{[^{}\n]*+\}))?[ \t]*+:[ \t]*+"
    r"(\([^()\n]*+\)[ \t]*+->[ \t]*+(?:\([^()\n]*+\)|[\w.]++(?:<[^<>()\n]*+>)?+))"
    r"[ \t\r]*+(?=//|\Z)",
)
# A rest of the line whose attribute dictionary (or properties) ends in a float constant with
# its type: 1 the text before the constant (up to the last `=`: the head scanned back from the
# end, not tried at each position), 2 the constant, 3 its type, 4 the text after. Rests equal
# but for 2 share a template (BodyParser._new_rest). Digits bounded: a literal of f64 stays
# finite; one too large for f32/f16/bf16 raises.
_FLOAT_REST = re.compile(
    r"([^\n]*=[ \t]*+)"  # 1
    r"(-?[0-9]{1,20}\.[0-9]{0,20}(?:[eE][+-]?[0-9]{1,2})?)(?![0-9eE])"  # 2
    r"[ \t]*+:[ \t]*+(bf16|f16|f32|f64)"  # 3
    r"([ \t]*+\}[^\n]*+)",  # 4
)
# The bare name of the attribute the constant belongs to, at the end of group 1.
_FLOAT_NAME = re.compile(r"([A-Za-z_][\w$.]*)[ \t]*=[ \t]*\Z")
_OPERAND_REFS = re.compile(rf"%({_NAME})(?:#(\d+))?")
_new_loc = Location.__new__


def _bounded_put(cache: dict, key, value):
    """``cache[key] = value``, emptying ``cache`` first when it is full (all-distinct texts,
    e.g. every op its own constant: bound the memory); returns ``value``."""
    if len(cache) >= 8192:
        cache.clear()
    cache[key] = value
    return value


class _Fallback(Exception):
    """The fast path declines; the general parser takes over (and reports any error)."""


class BodyParser(TypeAttrParser):
    """Operations and SSA names of function bodies, over one text (see the module notes)."""

    __slots__ = ("tails", "ftypes", "types", "refs", "rests", "floats", "diags", "scope", "forward",
                 "block", "placeholder_locs", "forward_use_locs", "terminator", "line_hint")

    def __init__(self, text: str, file: str = "<string>") -> None:
        super().__init__(text, file)
        # Fast path: a function type's text -> (operand types, result types); an attribute
        # dictionary's text (or properties' and attributes') -> attributes.
        self.tails: dict = {}
        # the function types' texts apart: ops with their own constants churn `tails`
        self.ftypes: dict = {}
        self.types: dict = {}  # each distinct type of the fast path's function types, once
        self.refs: dict = {}  # an operand list's text -> its (name, number) pairs
        # the rest of an op's line -> its pieces (_REST's groups, where they end, the match)
        self.rests: dict = {}
        # a rest's text but its last float constant -> {op name: its shape} (_new_rest)
        self.floats: dict = {}
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
        self.line_hint = 1  # the fast path's last line (1-based): where it looks first

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
                        op.stamp = None  # no longer the operands it was parsed with
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
        fast_ops = self.fast_ops
        pos = self.pos
        while True:
            pos, stop = fast_ops(pos, block)  # the blanks before each op included
            self.pos = pos
            pos = self.skip()
            if pos >= n:
                raise self.expected("'}' closing the function body")
            c = text[pos]
            if c == "}":
                self.pos = pos + 1
                return
            if (c == "%" or c == '"') and stop is None:  # after a comment
                after, stop = fast_ops(pos, block)
                if after != pos:
                    pos = after
                    continue
                self.pos = pos
            self.parse_op(block)
            pos = self.pos

    def fast_ops(self, pos: int, block: Block) -> tuple[int, re.Match | None]:
        """Add to ``block`` the ops from ``pos`` on that ``_FAST_OP`` matches, one after the
        other; return where they end and the match of the op that stopped them (``None``: the
        text there did not match), which the general parser reads (and reports any error of).

        One call runs over a whole function body of one-line generic ops: this loop runs once
        per op of a program, so what it reads of the parser is in locals."""
        text = self.text
        fast = _FAST_OP.match
        terminator = self.terminator
        refs_cache = self.refs
        rests = self.rests
        scope = self.scope
        file = self.file
        starts = self._line_starts
        n_starts = len(starts)
        line = self.line_hint
        append_new = block.append_new
        try:
            while True:
                m = fast(text, pos)
                if m is None:
                    return pos, None
                res, count, name, operands_text, rest = m.groups()
                if name == terminator and name != RETURN:
                    return pos, m  # "oneflow.return" is the function's terminator: parse_op
                base = m.start(5)  # the positions in `_REST`'s match are from here
                # What this rest of the line makes of an op of this name: its operand and
                # result types, its attributes and its stamp (Operation.stamp), read once.
                pieces = rests.get(rest)
                shape = pieces[5].get(name) if pieces is not None else None
                if shape is not None:
                    ins, outs, cached_attrs, stamp = shape
                    rest_end = pieces[3]
                    attrs = {} if cached_attrs is None else dict(cached_attrs)
                else:
                    got = self._new_rest(base, rest, name, pieces)
                    if got is None:
                        return pos, m
                    ins, outs, attrs, stamp, rest_end = got
                if res is not None and (1 if count is None else int(count)) != len(outs):
                    return pos, m
                if operands_text:
                    if "," in operands_text or "#" in operands_text:
                        refs = refs_cache.get(operands_text)
                        if refs is None:
                            refs = _bounded_put(refs_cache, operands_text,
                                                _OPERAND_REFS.findall(operands_text))
                    else:  # one operand, `%name` (group 4 without ',' and '#')
                        refs = ((operands_text[1:], ""),)
                    if len(refs) != len(ins):
                        return pos, m
                    # No fallback past this point: resolving names has side effects.
                    if len(refs) == 1:
                        (oname, oidx), = refs
                        entry = scope.get(oname)
                        if entry is not None and not oidx:
                            v = entry[0][0]
                            t = ins[0]
                            vt = v.type
                            if vt is not t:
                                stamp = None  # not the written type object: no stamp
                                if vt != t:
                                    self._check_type(t, v, oname, 0,
                                                     self._operand_pos(m, oname))
                            operands = (v,)
                        else:
                            stamp = None  # a forward or `#n` use: no stamp
                            operands = (self.use(oname, int(oidx or 0), ins[0],
                                                 self._operand_pos(m, oname)),)
                    else:
                        operands = []
                        for (oname, oidx), t in zip(refs, ins):
                            entry = scope.get(oname)
                            if entry is not None and not oidx:
                                v = entry[0][0]
                                vt = v.type
                                if vt is not t:
                                    stamp = None
                                    if vt != t:
                                        self._check_type(t, v, oname, 0,
                                                         self._operand_pos(m, oname))
                                operands.append(v)
                            else:
                                stamp = None
                                operands.append(self.use(oname, int(oidx or 0), t,
                                                         self._operand_pos(m, oname)))
                        operands = tuple(operands)
                elif ins:
                    return pos, m
                else:
                    operands = ()
                start = m.start(1) - 1 if res is not None else m.start(3) - 1  # '%' or '"'
                pos = base + rest_end  # a comment after the op is left to the lexer
                # The line: ops come in source order, so walk on from the previous op's line
                # (a step or two) rather than bisect every line start for each.
                if starts[line - 1] <= start:
                    while line < n_starts and starts[line] <= start:
                        line += 1
                else:
                    line = bisect_right(starts, start)
                # Location(file, line, col) without the call to its __init__
                loc = _new_loc(Location)
                loc.file = file
                loc.line = line
                loc.col = start - starts[line - 1] + 1
                op = append_new(name, operands, outs, attrs, loc, stamp)
                if res is not None:
                    if res in scope or self.forward:
                        self.define(res, op.results, start)
                    else:  # the common case of define(), inlined
                        results = op.results
                        scope[res] = (results, start)
                        if len(results) == 1:
                            results[0].name = res
        finally:
            self.line_hint = line

    def _new_rest(self, base: int, rest: str, name: str, pieces: tuple | None):
        """``(operand types, result types, attributes, stamp, where the rest ends)`` of a
        fast-path op of ``name`` whose rest of the line (from ``base``) missed the caches
        (``pieces``: ``rests``' entry, if any), or ``None``: the fast path declines.

        A rest that differs from one read before only in its last float constant (every
        ``leaky_relu`` its own ``alpha``: 19% of the ops of the 100k-op benchmark) is read from
        that one's template (``floats``): the constant is the only piece read, and the rest
        is not kept in ``rests`` (distinct texts would churn it). Such an op takes no stamp:
        its constant is its own, which the verifier and printer see per op."""
        f = _FLOAT_REST.match(rest) if pieces is None else None
        if f is not None:
            head, num, ftype, tail = f.groups()
            tkey = (head, ftype, tail)
            template = self.floats.get(tkey)
            shape = template.get(name) if template is not None else None
            if shape is not None:
                ins, outs, cached_attrs, fname, off, tstamp = shape
                try:
                    a = float_attr(float(num), ftype)
                except OverflowError:  # the general parser words the error
                    return None
                attrs = dict(cached_attrs)
                attrs[fname] = a  # the same key: its place in the dictionary is kept
                # The stamp: the template's and the constant's text, when that text is how
                # the printer spells the value (format_float: "%.6e" when it reads back
                # to the value); the printer then puts it in the template's line.
                # The literal (its grammar, _FLOAT_REST's) is "d.dddddde+dd" with d nonzero
                # when it has 12 characters besides its sign, "." and "e" where those are;
                # f64: seven digits read back to themselves through a double, all of them.
                stamp = None
                if (len(num) - (num[0] == "-") == 12 and num[-4] == "e" and num[-11] == "."
                        and num[-12] != "0"):
                    if ftype == "f64" or (ftype == "f32" and f"{a.value:.6e}" == num):
                        stamp = (tstamp, num)
                return ins, outs, attrs, stamp, len(rest) + off
        if pieces is None:
            r = _REST.match(rest)
            if r is None:
                return None
            pieces = _bounded_put(self.rests, rest, (*r.groups(), r.end(), r, {}))
        props, attr_text, type_text, rest_end, r, shapes = pieces
        shape = self._shape(base, r, props, attr_text, type_text)
        if shape is None:
            return None
        shapes[name] = shape
        ins, outs, cached_attrs, stamp = shape
        # The constant must lie in the properties or attributes, not in a type or a comment
        # after them (where a value equal to the attribute's would pass the test below).
        fm = (_FLOAT_NAME.search(head) if f is not None and cached_attrs is not None
              and len(head) < r.end(2 if attr_text is not None else 1) else None)
        if fm is not None:
            # A template only where this op's constant is what the template would make of
            # its text (then the others', which differ only there, are too): a nonzero
            # value (no sign of zero to compare) of the literal's type. (The constant is the
            # dictionary's last value: `_REST` admits no brace inside, not even in a string.)
            fname = fm.group(1)
            a = cached_attrs.get(fname)
            if (type(a) is FloatAttr and a.type == ftype and a.value != 0.0
                    and a.value == float_attr(float(num), ftype).value):
                template = self.floats.get(tkey)
                if template is None:
                    template = _bounded_put(self.floats, tkey, {})
                template[name] = (ins, outs, cached_attrs, fname, rest_end - len(rest),
                                  object())
        return ins, outs, {} if cached_attrs is None else dict(cached_attrs), stamp, rest_end

    def _shape(self, base: int, r: re.Match, props, attr_text, type_text) -> tuple | None:
        """``(operand types, result types, attributes or None, stamp)`` of a fast-path op
        whose rest of the line ``_REST`` matched as ``r`` (from ``base``), or ``None``: the
        fast path declines. The stamp is a new object: the ops of this name and rest of the
        line share it (Operation.stamp), unless an operand turns out not to be a value of the
        written type object."""
        ftypes = self.ftypes
        ftype = ftypes.get(type_text)
        if ftype is None:
            try:
                ftype = _bounded_put(ftypes, type_text, self._interned(
                    self._sub(base + r.start(3), base + r.end(3), self.parse_function_type)))
            except _Fallback:
                return None
        if props is None and attr_text is None:
            return (*ftype, None, object())
        key = attr_text if props is None else (props, attr_text)
        cached_attrs = self.tails.get(key)
        if cached_attrs is None:
            # ops that differ only in their attribute values: scalars read without the lexer
            cached_attrs = None if props is not None else scalar_attr_dict(attr_text)
            if cached_attrs is None:
                try:
                    cached_attrs = self._sub(
                        base + (r.start(1) if props is not None else r.start(2)),
                        base + (r.end(2) if attr_text is not None else r.end(1)),
                        self._parse_attrs)
                except _Fallback:
                    return None
            _bounded_put(self.tails, key, cached_attrs)
        return (*ftype, cached_attrs, object())

    def _interned(self, ftype: tuple) -> tuple:
        """A function type's operand and result types, each the one object this parser made
        for every equal type, so that the checks of a use against its definition (and the
        verifier's memo) compare types by identity."""
        types = self.types
        try:
            return (tuple([types.setdefault(t, t) for t in ftype[0]]),
                    tuple([types.setdefault(t, t) for t in ftype[1]]))
        except TypeError:  # an unhashable type: as parsed
            return ftype

    def _parse_attrs(self) -> dict:
        """``<{props}> {attrs}`` after an operand list (fast path, cached)."""
        attrs: dict = {}
        if self.accept("<{"):
            attrs = self.parse_attr_dict("}>")
        if self.accept("{"):
            more = self.parse_attr_dict()
            if any(k in attrs for k in more):
                raise _Fallback
            attrs.update(more)
        return attrs

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
