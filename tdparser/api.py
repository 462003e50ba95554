"""Entry points: parse and resolve TableGen files or text into a :class:`RecordKeeper`.

>>> rk = parse_string('class C<int n> { int N = n; } def X : C<3>;')
>>> rk["X"]["N"], rk["X"].superclasses
(3, ('C',))
"""

from __future__ import annotations

import gc
import os
import sys

from .convert import to_keeper
from .errors import TdError
from .evaluator import Evaluator
from .lexer import Lexer
from .parser import parse_tokens
from .preprocessor import Preprocessor
from .records import RecordKeeper


def _run(pre: Preprocessor, tokens) -> RecordKeeper:
    ev = Evaluator()
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    gc_was_on = gc.isenabled()
    gc.disable()  # the evaluator allocates many small long-lived objects; ~15% faster
    try:
        stmts = parse_tokens(tokens)
        try:
            ev.run(stmts)
        except TdError as e:
            if ev.errors:
                first = ev.errors[0]
                first.others.extend(ev.errors[1:] + [e])
                raise first from None
            raise
        if ev.errors:
            first = ev.errors[0]
            first.others.extend(ev.errors[1:])
            raise first
    except RecursionError:
        main = pre.files[0] if pre.files else "<unknown>"
        raise TdError("nesting too deep (recursion limit reached)", main, 1, 1) from None
    except TdError:
        raise
    except Exception as exc:  # never leak an internal error as anything but TdError
        main = pre.files[0] if pre.files else "<unknown>"
        raise TdError(f"internal error: {type(exc).__name__}: {exc}", main, 1, 1) from exc
    finally:
        sys.setrecursionlimit(old)
        if gc_was_on:
            gc.enable()
    return to_keeper(ev, pre.files)


def _build(path, include_dirs, defines) -> RecordKeeper:
    path = os.fspath(path)
    pre = Preprocessor(include_dirs, defines)
    return _run(pre, Lexer(pre).tokens_of_file(path))


def parse_file(path, include_dirs=(), defines=(), *, use_cache=True) -> RecordKeeper:
    """Parse and resolve ``path`` as ``llvm-tblgen -I... -D... path`` would.

    ``RecordKeeper.files`` lists every file read, ``path`` first. With ``use_cache`` the
    result comes from (and goes to) the on-disk cache when :mod:`.cache` is available.
    """
    include_dirs = tuple(os.fspath(d) for d in include_dirs)
    defines = tuple(defines)
    if use_cache:
        try:
            from .cache import load_or_build
        except ImportError:
            load_or_build = None
        if load_or_build is not None:
            return load_or_build(os.fspath(path), include_dirs, defines,
                                 lambda: _build(path, include_dirs, defines))
    return _build(path, include_dirs, defines)


def parse_string(text, filename="<string>", include_dirs=(), defines=()) -> RecordKeeper:
    """Parse and resolve TableGen source ``text`` (``filename`` is used in messages)."""
    pre = Preprocessor(include_dirs, defines)
    pre.files.append(filename)
    pre.texts[filename] = text
    return _run(pre, Lexer(pre).tokens_of_text(text, filename))
