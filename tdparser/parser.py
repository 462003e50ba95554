"""The parser of ``tablegen.lark`` (its LALR table run by :mod:`.lalr`) and the Transformer
that builds :mod:`.ast` nodes.

The Transformer runs inside the LALR parser (no parse tree is built), fed by :mod:`.lexer`.

>>> from .preprocessor import Preprocessor
>>> stmts = parse_tokens(Lexer(Preprocessor()).tokens_of_text("def X;", "x.td"))
>>> type(stmts[0]).__name__
'Def'
"""

from __future__ import annotations

import os

from . import ast as A
from .errors import TdError
from .lalr import SHIPPED, LalrDriver, load_shipped
from .lexer import Lexer, unescape  # noqa: F401  (Lexer: doctest)
from .limits import MAX_BITS, check_count

#: The grammar; ``tablegen_lark.json`` ships its LALR table (:mod:`.grammar_table`).
GRAMMAR = os.path.join(os.path.dirname(__file__), "tablegen.lark")


def _loc(tok):
    return tok


def _first_loc(node):
    return getattr(node, "loc", node)


def _start_loc(node):
    """The first token of a value (llvm-tblgen locates a def at the start of its name)."""
    while isinstance(node, (A.FieldAccess, A.ListSlice, A.BitSlice)):
        node = node.base
    while isinstance(node, A.Paste):
        node = node.lhs
        while isinstance(node, (A.FieldAccess, A.ListSlice, A.BitSlice)):
            node = node.base
    return getattr(node, "loc", node)


class ToAst:
    """One method per grammar rule (or alias), each returning an AST node or a plain tuple;
    :mod:`.lalr` calls them as Lark calls a Transformer's (children filtered the same way)."""

    # -- statements
    def start(self, c):
        return c

    def class_def(self, c):
        name = c[0]
        targs = c[1] if len(c) == 4 else ()
        return A.ClassDef(name.value, targs, c[-2], c[-1], name)

    def template_args(self, c):
        return tuple(c)

    def template_arg(self, c):
        return A.TemplateArg(c[0], c[1].value, c[2] if len(c) > 2 else None, c[1])

    def parents(self, c):
        return tuple(c)

    def class_ref(self, c):
        return A.ClassRef(c[0].value, c[1] if len(c) > 1 else (), c[0])

    def arg_list(self, c):
        return tuple(c)

    def arg(self, c):
        if len(c) == 1:
            return A.Arg(None, c[0])
        return A.Arg(c[0], c[1])

    def body(self, c):
        return tuple(c)

    def field_decl(self, c):
        is_field = c[0].type == "FIELD" if hasattr(c[0], "type") else False
        if is_field:
            c = c[1:]
        return A.FieldDecl(is_field, c[0], c[1].value, c[2] if len(c) > 2 else None, c[1])

    def body_let(self, c):
        if len(c) == 4:
            return A.BodyLet(c[1].value, c[2], c[3], c[1])
        return A.BodyLet(c[1].value, None, c[2], c[1])

    def bit_list(self, c):
        return c[0]

    def def_stmt(self, c):
        kw = c[0]
        if len(c) == 4:
            return A.Def(c[1], c[2], c[3], kw, _start_loc(c[1]))
        return A.Def(None, c[1], c[2], kw, kw)

    def name(self, c):
        return c[0]

    def defm_stmt(self, c):
        kw = c[0]
        if isinstance(c[1], A.ClassRef):
            return A.Defm(None, tuple(c[1:]), kw, kw)
        return A.Defm(c[1], tuple(c[2:]), kw, _start_loc(c[1]))

    def defset_stmt(self, c):
        return A.Defset(c[0], c[1].value, tuple(c[2:]), c[1])

    def deftype_stmt(self, c):
        return A.Deftype(c[0].value, c[1], c[0])

    def defvar_stmt(self, c):
        return A.Defvar(c[0].value, c[1], c[0])

    def assert_stmt(self, c):
        return A.Assert(c[1], c[2], _first_loc(c[1]))

    def dump_stmt(self, c):
        return A.Dump(c[1], c[0])

    def multiclass_def(self, c):
        name = c[1]
        targs = c[2] if len(c) == 5 else ()
        body = c[-1]
        if not isinstance(body, tuple):  # `multiclass B : A;` (the `;`): only parents
            if not c[-2]:
                raise body.error("expected '{' in multiclass definition")
            body = None
        return A.Multiclass(name.value, targs, c[-2], body, name)

    def mc_body(self, c):
        return tuple(c)

    def mc_no_body(self, c):
        return c[0]

    def foreach_stmt(self, c):
        return A.Foreach(c[1].value, c[2], c[3], c[0])

    def if_stmt(self, c):
        return A.If(c[1], c[2], c[3] if len(c) > 3 else None, c[0])

    def let_stmt(self, c):
        return A.Let(tuple(c[1:-1]), c[-1], c[0])

    def let_item(self, c):
        if len(c) == 3:
            return A.LetItem(c[0].value, c[1], c[2], c[0])
        return A.LetItem(c[0].value, None, c[1], c[0])

    def block(self, c):
        return tuple(c)

    # -- types
    def type(self, c):
        t = c[0]
        kind = "int" if t.type == "INT_KW" else "string" if t.type == "STRING_KW" else (
            "code" if t.type == "CODE_KW" else t.value)
        return A.TypeRef(kind, None, t)

    def bits_type(self, c):
        t = c[1]
        n = _int(t)
        if n < 0:  # llvm-tblgen reads it as unsigned and crashes
            raise t.error(f"expected a non-negative width in bits<n> type, got {n}")
        n &= 0xFFFFFFFF  # llvm-tblgen keeps the width in 32 bits: bits<4294967296> is bits<0>
        e = check_count(n, MAX_BITS, "bits in a bits<n> type", t)
        if e is not None:
            raise e
        return A.TypeRef("bits", n, c[0])

    def list_type(self, c):
        return A.TypeRef("list", c[0], c[0].loc)

    def class_type(self, c):
        return A.TypeRef("class", c[0].value, c[0])

    # -- values
    def int_lit(self, c):
        t = c[0]
        return A.Int(_int(t), t)

    def bin_lit(self, c):
        t = c[0]
        digits = t.value[2:]
        e = check_count(len(digits), MAX_BITS, "bits in a binary literal", t)
        if e is not None:
            raise e
        if len(digits) > 64:
            # llvm-tblgen reads the value into 64 bits, then sets bit i from `1 << i`, which
            # on x86 shifts by i mod 64: mimic that instead of the digits written.
            v = int(digits, 2)
            if v >> 64:
                raise t.error("Number out of range")
            digits = "".join("1" if v >> (i & 63) & 1 else "0"
                             for i in reversed(range(len(digits))))
        return A.BinLit(digits, t)

    def string_lit(self, c):
        parts = [unescape(t.value[1:-1], t.error) for t in c]
        return A.Str("".join(parts), False, c[0])

    def code_lit(self, c):
        return A.Str(c[0].value, True, c[0])

    def unset(self, c):
        return A.Unset(c[0])

    def true_lit(self, c):
        return A.Bool(True, c[0])

    def false_lit(self, c):
        return A.Bool(False, c[0])

    def ident(self, c):
        return A.Ident(c[0].value, c[0])

    def anon_inst(self, c):
        return A.AnonInst(c[0].value, c[1] if len(c) > 1 else (), c[0])

    def bits_lit(self, c):
        # `{` has no token of its own in the tree; point at the first item when there is one.
        items = c[0] if c else ()
        return A.BitsLit(items, _first_loc(items[0]) if items else None)

    def list_lit(self, c):
        items = ()
        et = None
        for x in c[1:]:
            if isinstance(x, tuple):
                items = x
            else:
                et = x
        return A.ListLit(items, et, c[0])

    def value_list(self, c):
        return tuple(c)

    def list_first(self, c):
        return [c[0]]

    def list_append(self, c):
        # In place: a list literal of n elements is n reductions, and copying a tuple at each
        # would make it quadratic (10^5 elements took 20 s).
        c[0].append(c[1])
        return c[0]

    def list_items(self, c):
        return tuple(c[0])

    def dag_lit(self, c):
        op, op_name = c[0]
        args = c[1] if len(c) > 2 else ()
        return A.DagLit(op, op_name, args, _first_loc(op) if op is not None else None)

    def dag_args(self, c):
        return tuple(c)

    def dag_arg(self, c):
        if len(c) == 2:
            return (c[0], c[1].value)
        x = c[0]
        if getattr(x, "type", None) == "VARNAME":
            return (None, x.value)
        return (x, None)

    def bang(self, c):
        op = c[0]
        ty = None
        args = ()
        for x in c[1:-1]:
            if isinstance(x, A.TypeRef):
                ty = x
            else:
                args = x
        return A.Bang(op.value, ty, args, op, c[-1])

    def cond(self, c):
        return A.Cond(tuple(c[1:-1]), c[0])

    def cond_clause(self, c):
        return (c[0], c[1])

    def bit_slice(self, c):
        return A.BitSlice(c[0], c[1], _first_loc(c[0]))

    def list_slice(self, c):
        return A.ListSlice(c[0], c[2], c[1])

    def field_access(self, c):
        return A.FieldAccess(c[0], c[1].value, c[1])

    def paste(self, c):
        return A.Paste(c[0], c[1] if len(c) > 1 else None, _first_loc(c[0]))

    def range_list(self, c):
        return tuple(c)

    def range_piece(self, c):
        return A.Range(c[0], None, _first_loc(c[0]))

    def range_dots(self, c):
        return A.Range(c[0], c[1], _first_loc(c[0]))

    def range_neg(self, c):
        t = c[1]
        if not t.value.startswith("-"):
            raise t.error("expected integer value as end of range")
        n = -_int(t)  # int64 negation, as llvm-tblgen: -INT64_MIN stays negative
        return A.Range(c[0], A.Int(n - (1 << 64) if n >> 63 else n, t), _first_loc(c[0]))


def _int(t) -> int:
    """The value of integer token ``t`` as llvm-tblgen's lexer reads it: a negative decimal
    must fit in int64, anything else in uint64 (then it wraps into int64, so
    ``18446744073709551615`` is -1); beyond that it is "Number out of range".

    >>> from .lexer import Tok
    >>> [_int(Tok("INT", v, "a.td", 1, 1)) for v in ("7", "-7", "0x10", "9223372036854775808")]
    [7, -7, 16, -9223372036854775808]
    """
    v = t.value
    neg = v.startswith("-")
    body = v.lstrip("+-")
    try:
        if body.startswith("0x"):
            n = int(body, 16)
        elif body.startswith("0b"):
            n = int(body[2:], 2)
        else:
            n = int(body, 10)
    except ValueError:
        raise t.error("Invalid number") from None
    if neg:
        if n > 1 << 63:
            raise t.error("Number out of range")
        return -n
    if n >> 64:
        raise t.error("Number out of range")
    return n - (1 << 64) if n >> 63 else n


_PARSER = None


def _parser():
    """The Lark parser of the grammar (built, or from the cache dir): only when the shipped
    table was made from another grammar text."""
    global _PARSER
    if _PARSER is None:
        # Not Lark's cache=: it unpickles an untrusted file. grammar_cache keeps the table in
        # tdflow's cache dir, under its switches, and loads it with a restricted unpickler.
        from .grammar_cache import Feed, load_parser

        _PARSER = load_parser(GRAMMAR, lexer=Feed, transformer=None)
    return _PARSER


def _cache_path():
    """The grammar cache file, or ``None`` when caching is off or the cache dir is refused."""
    from .grammar_cache import cache_path

    return cache_path()


def _table() -> dict:
    """The driver's table: the shipped one when it was made from this grammar, else Lark's."""
    with open(GRAMMAR, encoding="utf-8") as fh:
        table = load_shipped(SHIPPED, fh.read())
    if table is None:
        from .grammar_cache import table_from_lark

        table = table_from_lark(_parser())
    return table


_DRIVER = None


def parse_tokens(tokens) -> list:
    """Parse a token stream into a list of statement nodes."""
    global _DRIVER
    if _DRIVER is None:
        _DRIVER = LalrDriver(_table(), ToAst(), _syntax_error)
    return _DRIVER.parse(tokens, [None])


_NAMES = {
    "_SEMI": "';'", "_COMMA": "','", "_COLON": "':'", "_EQUAL": "'='", "_LT": "'<'",
    "_GT": "'>'", "_LBRACE": "'{'", "_RBRACE": "'}'", "LSQB": "'['", "_RSQB": "']'",
    "_LPAR": "'('", "RPAR": "')'", "ID": "identifier", "_IN": "'in'", "_THEN": "'then'",
}


def _syntax_error(tok, expected) -> TdError:
    exp = sorted(expected)
    if "_SEMI" in exp:
        msg = "expected ';' after declaration"
    elif len(exp) == 1 and exp[0] in _NAMES:
        msg = f"expected {_NAMES[exp[0]]}"
    elif "BANG" in exp and "ID" in exp:
        msg = "Unknown or reserved token when parsing a value"
    else:
        msg = "Unexpected token" + (f" '{tok.value}'" if getattr(tok, "value", "") else "")
        shown = [_NAMES.get(x, x.strip("_").lower()) for x in exp][:6]
        if shown:
            msg += "; expected one of " + ", ".join(shown)
    return TdError(msg, tok.file, tok.line, tok.column, tok.stack)
