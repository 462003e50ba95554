"""Text form of scalar expressions, as ``tdflow.fused_elementwise`` carries them in ``expr``.

``fuse-elementwise`` composes the formulas of the ops it fuses into one expression and keeps it
in a string attribute, spelled as the expression's ``repr`` (``add(exp(in0), mul(in1, 2.0))``)
so the IR stays printable and re-parsable. This module reads that text back with a small
recursive-descent parser (no ``eval``). It lives in the dialect, next to the expression IR,
because the fused op's hooks (:mod:`tdflow.dialect.hooks.elementwise`) read the expression to
check the op and infer its result type; lowering's passes and kernels import it from here.

>>> from tdflow.dialect.formula.expr import Input, exp
>>> e = exp(Input(0)) + Input(1) * 2.0
>>> parse_expr(format_expr(e)) == e
True
>>> parse_expr("where(gt(in0, 0), in0, mul(in0, 0.25))")
where(gt(in0, 0), in0, mul(in0, 0.25))
>>> parse_expr("cast(mod(in0, 3), f32)")
cast(mod(in0, 3), f32)
>>> parse_expr("mul(in0, @alpha)")  # an attribute not bound yet
mul(in0, @alpha)
>>> parse_expr("frob(in0)")
Traceback (most recent call last):
...
ValueError: unknown function 'frob' at offset 0 in 'frob(in0)'
"""

from __future__ import annotations

import re

from .expr import (
    BINARY_OPS,
    CAST_DTYPES,
    UNARY_OPS,
    Attr,
    Binary,
    Cast,
    Const,
    Expr,
    Input,
    Select,
    Unary,
)

__all__ = ["format_expr", "parse_expr"]

_TOKEN = re.compile(r"\s*(?:(?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|inf|nan)"
                    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<attr>@[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<punct>[(),]))")
#: Deepest expression text read back: far beyond fused formulas (fuse-elementwise stops
#: composing at MAX_FUSED_DEPTH), and shallow enough that every tree walk stays within
#: Python's recursion limit.
MAX_TEXT_DEPTH = 400
_FUNCTIONS = UNARY_OPS | BINARY_OPS | {"where", "cast"}

Token = tuple[str, str, int]  # (kind, text, offset)


def format_expr(expr: Expr) -> str:
    """The text of ``expr`` (its ``repr``); :func:`parse_expr` reads it back.

    >>> from tdflow.dialect.formula.expr import Input
    >>> format_expr(Input(0) > 0)
    'gt(in0, 0)'
    """
    return repr(expr)


def parse_expr(text: str) -> Expr:
    """Parse the text of an expression; ``ValueError`` saying where it went wrong.

    >>> parse_expr("max(in0, in1)")
    max(in0, in1)
    """
    tokens = _tokenize(text)
    pos, expr = _parse(tokens, 0, text)
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos][1]!r} at offset {tokens[pos][2]} in {text!r}")
    return expr


def _tokenize(text: str) -> list[Token]:
    out, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if m is None:
            raise ValueError(f"unexpected character {text[i:].lstrip()[:1]!r} in {text!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind), m.start(kind)))
        i = m.end()
    return out


def _number(s: str) -> Const:
    if s in ("inf", "nan"):
        return Const(float(s))
    if re.fullmatch(r"[-+]?\d+", s):
        return Const(int(s))
    return Const(float(s))


def _parse(tokens: list[Token], pos: int, text: str, depth: int = 0) -> tuple[int, Expr]:
    if pos >= len(tokens):
        raise ValueError(f"unexpected end of expression {text!r}")
    kind, tok, off = tokens[pos]
    if depth > MAX_TEXT_DEPTH:
        raise ValueError(f"expression nested deeper than {MAX_TEXT_DEPTH} at offset {off}")
    if kind == "num":
        return pos + 1, _number(tok)
    if kind == "attr":  # an unbound attribute (a formula before its kernel is built)
        return pos + 1, Attr(tok[1:])
    if kind != "name":
        raise ValueError(f"unexpected {tok!r} at offset {off} in {text!r}")
    if tok in ("True", "False"):
        return pos + 1, Const(tok == "True")
    if re.fullmatch(r"in\d+", tok):
        return pos + 1, Input(int(tok[2:]))
    if pos + 1 >= len(tokens) or tokens[pos + 1][1] != "(":
        raise ValueError(f"expected '(' after {tok!r} at offset {off} in {text!r}")
    if tok not in _FUNCTIONS:
        raise ValueError(f"unknown function {tok!r} at offset {off} in {text!r}")
    pos += 2
    args: list[Expr | str] = []
    while True:
        if tok == "cast" and len(args) == 1:
            if pos >= len(tokens):
                raise ValueError(f"unexpected end of expression {text!r}")
            _, dt, o = tokens[pos]
            if dt not in CAST_DTYPES:
                raise ValueError(f"bad cast type {dt!r} at offset {o} in {text!r}")
            args.append(dt)
            pos += 1
        else:
            pos, arg = _parse(tokens, pos, text, depth + 1)
            args.append(arg)
        if pos >= len(tokens):
            raise ValueError(f"unexpected end of expression {text!r}")
        sep = tokens[pos][1]
        pos += 1
        if sep == ")":
            break
        if sep != ",":
            raise ValueError(f"expected ',' or ')' at offset {tokens[pos - 1][2]} in {text!r}")
    want = 1 if tok in UNARY_OPS else 3 if tok == "where" else 2
    if len(args) != want:
        raise ValueError(f"{tok}() takes {want} arguments, got {len(args)} in {text!r}")
    if tok in UNARY_OPS:
        return pos, Unary(tok, args[0])  # type: ignore[arg-type]
    if tok == "where":
        return pos, Select(*args)  # type: ignore[arg-type]
    if tok == "cast":
        return pos, Cast(args[0], args[1])  # type: ignore[arg-type]
    return pos, Binary(tok, args[0], args[1])  # type: ignore[arg-type]
