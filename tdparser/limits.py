"""Caps that keep hostile input from exhausting memory or time, and their located errors.

llvm-tblgen has no such caps: it hangs or is killed on ``foreach i = 0...100000000``,
``!range(0, 1000000000000)`` or ``bits<100000000>``. tdflow stops with a located
:class:`~.errors.TdError` instead. Each cap is far beyond real descriptions: LLVM's largest
targets have about 130,000 records, lists of a few thousand elements and ``bits<>`` of a few
hundred.

>>> check_count(3, MAX_ITEMS, "list elements", None)
>>> check_count(MAX_ITEMS + 1, MAX_ITEMS, "list elements", None).message[:38]
'too many list elements: 1000001 (tdflo'
"""

from __future__ import annotations

from tdflow.core.errors import position

from .errors import TdError

#: Records (defs, including anonymous ones) in one program.
MAX_RECORDS = 1_000_000
#: Elements of one list or dag, iterations of one ``foreach``, values of one range.
MAX_ITEMS = 1_000_000
#: Width of one ``bits<n>`` type or value.
MAX_BITS = 1 << 16
#: Characters in one string value.
MAX_STRING = 1 << 27

_WHY = ("tdflow's limit is {cap:,}, far beyond real target descriptions (LLVM's largest have "
        "about 130,000 records); llvm-tblgen runs out of memory or time on such input")


def located(msg: str, loc) -> TdError:
    """A :class:`TdError` at ``loc`` (a token, or anything with file/line/column), if any."""
    if loc is None:
        return TdError(msg)
    return TdError(msg, *position(loc))


def check_count(n: int, cap: int, what: str, loc) -> TdError | None:
    """The error for ``n`` ``what`` over ``cap`` (None when within it); callers raise it."""
    if n <= cap:
        return None
    return located(f"too many {what}: {n} ({_WHY.format(cap=cap)})", loc)


def too_deep(loc) -> TdError:
    """The error for input nested deeper than the evaluator's recursion allows."""
    from .deep import RECURSION_LIMIT

    return located("nesting too deep: evaluating this ran out of tdflow's recursion depth "
                   f"({RECURSION_LIMIT:,} frames; llvm-tblgen crashes on input nested this "
                   "deeply); split the value with defvar", loc)


def deep_guard(rec, fn):
    """``fn()``; running out of recursion depth is a "nesting too deep" error at ``rec``.

    >>> class R: locs = ()
    >>> deep_guard(R(), lambda: 7)
    7
    """
    try:
        return fn()
    except RecursionError:
        raise too_deep(rec.locs[0] if rec.locs else None) from None
