"""``--verify-diagnostics``: the diagnostics a program says it expects, checked against those
it produces (MLIR's ``SourceMgrDiagnosticVerifierHandler``, as mlir-opt 19 has it).

A comment ``expected-<kind>[-re] [@+N|@-N|@above|@below] {{text}}`` (kind ``error``,
``warning``, ``note`` or ``remark``; the space before ``@`` is optional) expects a diagnostic of
that kind on its own line, N lines below or above it, or on the nearest line above or below that
holds no such comment. The ``{{...}}`` runs to the last ``}}`` of the line, which must end it.
``text`` is a substring of the message; with ``-re``, the parts of it inside nested ``{{ }}``
are regular expressions (``expected-error-re {{value {{[0-9]+}} unknown}}``), the rest literal.

Each produced diagnostic (and each of its notes) must match an expectation at its line; every
expectation must be matched. Problems are reported in mlir-opt's words, as errors:

>>> from tdflow.dialect.ir.core import Location
>>> text = '// expected-error @+1 {{undefined}}\\n"x.y"(%a) : (i32) -> ()\\n'
>>> exp = parse_expectations(text, "t.mlir")
>>> [(e.kind, e.line, e.text) for e in exp]
[('error', 2, 'undefined')]
>>> check([Diagnostic("use of undefined value '%a'", Location("t.mlir", 2, 7))], exp)
[]
>>> [str(d) for d in check([], parse_expectations(text, "t.mlir"))]
['t.mlir:1:4: error: expected error "undefined" was not produced']
>>> [str(d) for d in check([Diagnostic("boom", Location("t.mlir", 2, 1))], [])]
['t.mlir:2:1: error: unexpected error: boom']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tdflow.dialect.ir.core import Location
from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError

__all__ = ["Expected", "parse_expectations", "check"]

# MLIR 19's pattern (mlir/lib/IR/Diagnostics.cpp), anchored at the end of the line like it.
_DESIGNATOR = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|above|below))? *\{\{(.*)\}\}$")


@dataclass
class Expected:
    """One ``expected-*`` comment: the kind and text it expects at ``line``; ``loc`` is where
    the comment's ``expected-`` starts (where a missing diagnostic is reported)."""

    kind: str
    line: int
    text: str
    loc: Location
    pattern: re.Pattern | None = None
    matched: bool = field(default=False)

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _regex(text: str, where: Location) -> re.Pattern:
    """``-re`` text: literal except inside ``{{ }}`` (FileCheck's convention, as MLIR's)."""
    parts = []
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            parts.append(re.escape(text[pos:]))
            break
        end = text.find("}}", start + 2)
        if end < 0:
            raise DiagnosticError([Diagnostic("found start of regex with no end '}}'", where)])
        parts.append(re.escape(text[pos:start]))
        parts.append(f"(?:{text[start + 2:end]})")
        pos = end + 2
    try:
        return re.compile("".join(parts))
    except re.error as exc:
        raise DiagnosticError([Diagnostic(f"invalid regex: {exc}", where)]) from None


def parse_expectations(text: str, file: str) -> list[Expected]:
    """Every ``expected-*`` comment of ``text`` (read as the file ``file``), in source order.

    >>> src = "// expected-note@below {{a}}\\n// expected-error @below {{b}}\\nop\\nx // expected-warning@above {{c}}\\n"
    >>> [(e.kind, e.line) for e in parse_expectations(src, "f")]
    [('note', 3), ('error', 3), ('warning', 3)]
    """
    out: list[Expected] = []
    below: list[Expected] = []
    last_plain = 0  # the last line without a designator (0: none yet)
    for number, line in enumerate(text.split("\n"), start=1):
        m = _DESIGNATOR.search(line)
        if m is None:
            for e in below:  # an @below expectation is for the next line without one
                e.line = number
            below.clear()
            last_plain = number
            continue
        kind, is_re, _, offset, body = m.groups()
        loc = Location(file, number, m.start() + 1)
        e = Expected(kind, number, body, loc, _regex(body, loc) if is_re else None)
        if offset == "above":
            e.line = last_plain
        elif offset == "below":
            below.append(e)
        elif offset:
            e.line = number + int(offset)
        out.append(e)
    return out


def _flatten(diags: list[Diagnostic]) -> list[Diagnostic]:
    flat = []
    for d in diags:
        flat.append(d)
        flat.extend(_flatten(list(d.notes)))
    return flat


def check(diags: list[Diagnostic], expected: list[Expected]) -> list[Diagnostic]:
    """The mismatches between produced ``diags`` and the ``expected`` ones, as error
    diagnostics: unexpected ones (at the diagnostic), near misses of the wrong kind and missing
    ones (at the ``expected-`` comment). Empty when everything matched."""
    problems = []
    for d in _flatten(diags):
        near = None
        hit = False
        for e in expected:
            if e.line != d.loc.line or e.loc.file != d.loc.file or not e.matches(d.message):
                continue
            if e.kind == d.severity:
                e.matched = hit = True
                break
            near = e
        if hit:
            continue
        if near is not None:
            problems.append(Diagnostic(f"'{d.severity}' diagnostic emitted when expecting a "
                                       f"'{near.kind}'", near.loc))
        else:
            problems.append(Diagnostic(f"unexpected {d.severity}: {d.message}", d.loc))
    for e in expected:
        if not e.matched:
            problems.append(Diagnostic(f'expected {e.kind} "{e.text}" was not produced', e.loc))
    return problems
