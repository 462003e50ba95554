"""Tokens of TableGen, with the preprocessor and ``include`` handled inline as llvm-tblgen does.

The lexer is one compiled regular expression; each match becomes a small :class:`Tok` that
Lark's LALR parser consumes directly (no per-character Python work).

>>> from .preprocessor import Preprocessor
>>> [t.type for t in Lexer(Preprocessor()).tokens_of_text('def X;', 'x.td')]
['DEF', 'ID', '_SEMI']
"""

from __future__ import annotations

import re

from tdflow.core.errors import SourceLoc

from .errors import IncludeChain, TdError

KEYWORDS = {
    "assert": "ASSERT", "bit": "BIT", "bits": "BITS", "class": "_CLASS", "code": "CODE_KW",
    "dag": "DAG", "def": "DEF", "defm": "DEFM", "defset": "_DEFSET", "deftype": "_DEFTYPE",
    "defvar": "_DEFVAR", "dump": "DUMP", "else": "_ELSE", "false": "FALSE", "field": "FIELD",
    "foreach": "FOREACH", "if": "IF", "in": "_IN", "int": "INT_KW", "let": "LET",
    "list": "_LIST", "multiclass": "MULTICLASS", "string": "STRING_KW", "then": "_THEN",
    "true": "TRUE",
}

PUNCT = {
    ";": "_SEMI", ",": "_COMMA", ":": "_COLON", "=": "_EQUAL", "<": "_LT", ">": "_GT",
    "{": "_LBRACE", "}": "_RBRACE", "[": "LSQB", "]": "_RSQB", "(": "_LPAR",
    ")": "RPAR",
    ".": "_DOT", "...": "_ELLIPSIS", "#": "_PASTE", "?": "QMARK", "-": "_MINUS",
}

BANG_OPS = frozenset(
    "add and cast con cond dag div empty eq exists filter find foldl foreach ge getdagarg "
    "getdagname getdagop getop gt head if interleave isa le listconcat listremove listsplat "
    "logtwo lt mul ne not or range repr setdagarg setdagname setdagop setop shl size sra srl "
    "strconcat sub subst substr tail tolower toupper xor".split()
)

# Whitespace and line comments before a token. Each character of it can be matched one way
# only, so a failing match backtracks linearly: not `[ \t\r\n]+` inside the `*` (a run of n
# blanks then splits 2**n ways), and a comment always runs to the end of its line (else
# `// a // b` splits at every `//`). Python 3.10 has no possessive quantifiers to say this.
# As in llvm-tblgen, a line comment (and a string) also ends at a carriage return.
_SKIP = r"(?:[ \t\r\n]|//[^\n\r]*(?![^\n\r]))*"

_TOKEN_RE = re.compile(
    _SKIP + r"""   # whitespace and line comments before the token
    (?:(?P<eof>\Z)
      | (?P<block>/\*)
      | (?P<code>\[\{)
      | (?P<string>"[^"\\\n\r]*(?:\\.[^"\\\n\r]*)*")
      | (?P<pp>\#(?:ifdef|ifndef|else|endif|define)\b)
      | (?P<var>\$[a-zA-Z_][a-zA-Z_0-9]*)
      | (?P<id>[a-zA-Z_][a-zA-Z_0-9]*
          | [0-9]+(?:[a-zA-Z_](?<![xb])|x(?![0-9a-fA-F])|b(?![01]))[a-zA-Z_0-9]*)
      | (?P<hex>0x[0-9a-fA-F]+)
      | (?P<bin>0b[01]+)
      | (?P<int>[-+]?[0-9]+)
      | (?P<bang>![a-zA-Z]+)
      | (?P<punct>\.\.\.|[;,:=<>{}\[\]().\#?\-]))
    """,
    re.VERBOSE,
)
_SKIP_RE = re.compile(_SKIP)
_BLOCK_RE = re.compile(r"/\*|\*/")
_DIRECTIVE_RE = re.compile(r"^[ \t]*#(ifdef|ifndef|else|endif|define)\b", re.MULTILINE)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'"}


class Tok:
    """A token: Lark reads ``type``; the evaluator reads ``value``, ``file``, ``line``, ``column``."""

    __slots__ = ("type", "value", "file", "line", "column", "stack")

    def __init__(self, type, value, file, line, column, stack=()):
        self.type = type
        self.value = value
        self.file = file
        self.line = line
        self.column = column
        self.stack = stack

    # Lark borrows these for its end-of-input token.
    start_pos = end_pos = 0

    @property
    def end_line(self):
        return self.line

    @property
    def end_column(self):
        return self.column

    def __repr__(self):
        return f"Tok({self.type}, {self.value!r}, {self.line}:{self.column})"

    def error(self, message: str) -> TdError:
        return TdError(message, self.file, self.line, self.column, self.stack)


def unescape(body: str, tok_err) -> str:
    if "\\" not in body:
        return body
    out = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c == "\\" and i + 1 < n:
            e = body[i + 1]
            if e not in _ESCAPES:
                raise tok_err("invalid escape in string literal")
            out.append(_ESCAPES[e])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Lexer:
    """Turns files into :class:`Tok` streams, following ``include`` and the preprocessor."""

    def __init__(self, pre):
        self.pre = pre

    def tokens_of_file(self, path: str) -> list:
        """All tokens of ``path`` and what it includes. A lexical error becomes an ``ERROR``
        token at its place, so the parser reports errors in source order as llvm-tblgen does."""
        return self._follow(lambda out: self._lex(self.pre.read(path, ()), path, (), out))

    def tokens_of_text(self, text: str, file: str) -> list:
        """The tokens of source ``text`` named ``file`` (what it includes is read from disk)."""

        def first(out):
            self.pre.open_text(file)
            return self._lex(text, file, (), out)

        return self._follow(first)

    def _follow(self, first) -> list:
        """Run ``first(out)``'s lexer and, at each ``include``, the included file's lexer.

        Includes are followed with an explicit stack of per-file lexers rather than by
        recursion, so include chains as deep as llvm-tblgen's work (it accepts 100,000 nested
        files)."""
        out: list = []
        pre = self.pre
        try:
            files = [first(out)]
            while files:
                try:
                    inc_path, stack = next(files[-1])
                except StopIteration:
                    files.pop()
                    pre.close()
                    continue
                files.append(self._lex(pre.read(inc_path, stack), inc_path, stack, out))
        except TdError as e:
            out.append(Tok("ERROR", e, e.file, e.line, e.col, e.include_stack))
        return out

    def _lex(self, text: str, file: str, stack, out: list):  # noqa: C901
        """Append the tokens of ``text`` to ``out``; a generator that yields ``(path, stack)``
        at each ``include`` for the caller to lex that file before resuming this one."""
        pre = self.pre
        append = out.append
        match = _TOKEN_RE.match
        pos = 0
        line = 1
        line_start = 0
        # llvm-tblgen counts lines at "\n" but columns from the last "\n" or "\r"; only files
        # with a "\r" pay for looking for one.
        cr = "\r" in text
        n = len(text)
        conds: list = []
        pending_include = None
        while pos < n:
            m = match(text, pos)
            if m is None:
                start = _SKIP_RE.match(text, pos).end()
                nl = text.count("\n", pos, start)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, start) + 1
                if cr:
                    line_start = max(line_start, text.rfind("\r", pos, start) + 1)
                pos = start
                col = pos - line_start + 1
                if text[pos] == '"':
                    msg = ("End of line in string literal"
                           if "\n" in text[pos:] or "\r" in text[pos:]
                           else "End of file in string literal")
                    raise TdError(msg, file, line, col + 1, stack)
                if text[pos] == "\0":  # llvm-tblgen's words (it goes on; tdflow stops here)
                    raise TdError("NUL character is invalid in source; treated as space", file,
                                  line, col, stack)
                raise TdError("Unexpected character", file, line, col, stack)
            kind = m.lastgroup
            end = m.end()
            start = m.start(kind)
            if start != pos:
                nl = text.count("\n", pos, start)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, start) + 1
                if cr:
                    line_start = max(line_start, text.rfind("\r", pos, start) + 1)
                pos = start
            if kind == "eof":
                break
            col = pos - line_start + 1
            if kind == "block":
                depth = 1
                p = end
                while depth:
                    bm = _BLOCK_RE.search(text, p)
                    if bm is None:
                        raise TdError("Unterminated comment!", file, line, col, stack)
                    depth += 1 if bm.group() == "/*" else -1
                    p = bm.end()
                nl = text.count("\n", pos, p)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, p) + 1
                if cr:
                    line_start = max(line_start, text.rfind("\r", pos, p) + 1)
                pos = p
                continue
            if kind == "pp":
                if text[line_start:pos].strip():
                    raise TdError("Unexpected token at top level", file, line, col, stack)
                pos, line, line_start = pre.directive(self, text, m, file, line, line_start, stack,
                                                      conds)
                continue
            if pending_include is not None:
                if kind != "string":
                    raise TdError("Expected filename after include", file, line, col, stack)
                inc = m.group(kind)[1:-1]
                where = SourceLoc(file, line, col)
                yield pre.resolve_include(inc, file, where, stack), IncludeChain(stack, where)
                pending_include = None
                pos = end
                continue
            if kind == "id":
                v = m.group(kind)
                t = KEYWORDS.get(v)
                if t is None:
                    if v == "include":
                        pending_include = (line, col)
                        pos = end
                        continue
                    append(Tok("ID", v, file, line, col, stack))
                else:
                    append(Tok(t, v, file, line, col, stack))
            elif kind == "punct":
                v = m.group(kind)
                append(Tok(PUNCT[v], v, file, line, col, stack))
            elif kind == "string":
                v = m.group(kind)
                append(Tok("STRING", v, file, line, col, stack))
            elif kind == "int":
                append(Tok("INT", m.group(kind), file, line, col, stack))
            elif kind == "var":
                append(Tok("VARNAME", m.group(kind)[1:], file, line, col, stack))
            elif kind == "code":
                e = text.find("}]", end)
                if e < 0:
                    raise TdError("Unterminated code block", file, line, col, stack)
                append(Tok("CODE", text[end:e], file, line, col, stack))
                end = e + 2
                nl = text.count("\n", pos, end)
                if nl:
                    line += nl
                    line_start = text.rfind("\n", pos, end) + 1
                if cr:
                    line_start = max(line_start, text.rfind("\r", pos, end) + 1)
            elif kind == "hex":
                append(Tok("INT", m.group(kind), file, line, col, stack))
            elif kind == "bin":
                append(Tok("BININT", m.group(kind), file, line, col, stack))
            elif kind == "bang":
                v = m.group(kind)[1:]
                if v == "cond":
                    append(Tok("COND", v, file, line, col, stack))
                elif v in BANG_OPS:
                    append(Tok("BANG", v, file, line, col, stack))
                else:
                    raise TdError("Unknown operator", file, line, col, stack)
            pos = end
        if pending_include is not None:
            raise TdError("Expected filename after include", file, line, pos - line_start + 1,
                          stack)
        if conds:
            f, ln, c = conds[-1][1]
            raise TdError("Reached EOF without matching #endif", file, line,
                          pos - line_start + 1, stack,
                          notes=(("The latest preprocessor control is here",
                                  SourceLoc(f, ln, c)),))
