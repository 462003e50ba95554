"""Entry points: parse and resolve TableGen files or text into a :class:`RecordKeeper`.

>>> rk = parse_string('class C<int n> { int N = n; } def X : C<3>;')
>>> rk["X"]["N"], rk["X"].superclasses
(3, ('C',))
"""

from __future__ import annotations

import os

from tdflow.core.gc_pause import gc_paused

from .convert import to_keeper
from .deep import run_deep
from .errors import TdError
from .evaluator import Evaluator
from .lexer import Lexer
from .limits import too_deep
from .parser import parse_tokens
from .preprocessor import Preprocessor
from .records import RecordKeeper


def _run(pre: Preprocessor, lex, render=to_keeper, release=True):
    """Lex (``lex()`` gives the tokens), parse, evaluate and convert (``render(evaluator,
    files)``: the records by default); every failure becomes a located :class:`TdError`.
    Without ``release`` the finished evaluation is left as it is (see :func:`json_of_file`).
    Runs in :func:`.deep.run_deep`'s thread, so deep input recurses on a large stack and too
    deep input is a RecursionError, reported as "nesting too deep"."""
    ev = Evaluator()
    # the evaluator allocates many small long-lived objects; ~15% faster without the GC
    with gc_paused():
        try:
            stmts = parse_tokens(lex())
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
            out = render(ev, pre.files)
            if release:
                ev.release()  # freed now, not by the cycle collector while the output is written
            return out
        except TdError as e:
            if not e.line:  # an error raised where no location was at hand: the main file
                e.file, e.line, e.col = _main(pre), 1, 1
            raise
        except RecursionError:
            # The evaluator turns this into a located error at the innermost statement or value;
            # what is left came from elsewhere (the lexer or the conversion of the records).
            e = too_deep(None)
            e.file, e.line, e.col = _main(pre), 1, 1
            raise e from None
        except MemoryError:
            raise TdError("out of memory: the input builds values too large to hold",
                          _main(pre), 1, 1) from None
        except Exception as exc:  # never leak an internal error as anything but TdError
            raise TdError(f"internal error: {type(exc).__name__}: {exc}", _main(pre), 1, 1) from exc


def _main(pre: Preprocessor) -> str:
    return pre.files[0] if pre.files else "<unknown>"


def _build(path, include_dirs, defines, render=to_keeper, release=True):
    path = os.fspath(path)
    pre = Preprocessor(include_dirs, defines)
    return run_deep(_run, pre, lambda: Lexer(pre).tokens_of_file(path), render, release)


def parse_file(path, include_dirs=(), defines=(), *, use_cache=True,
               release=True) -> RecordKeeper:
    """Parse and resolve ``path`` as ``llvm-tblgen -I... -D... path`` would.

    ``RecordKeeper.files`` lists every file read, ``path`` first. With ``use_cache`` the
    result comes from (and goes to) the on-disk cache when :mod:`.cache` is available.
    ``release=False``: as in :func:`json_of_file` (the records do not share the evaluation's
    objects, so they are the same either way).

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.td")
    >>> _ = open(p, "w").write("def A { int n = 3; }")
    >>> parse_file(p, use_cache=False)["A"]["n"]
    3
    """
    include_dirs = tuple(os.fspath(d) for d in include_dirs)
    defines = tuple(defines)
    if use_cache:
        try:
            from .cache import load_or_build
        except ImportError:
            load_or_build = None
        if load_or_build is not None:
            # In the deep thread too: pickling deeply nested records recurses as well.
            return run_deep(load_or_build, os.fspath(path), include_dirs, defines,
                            lambda: _build_showing(path, include_dirs, defines,
                                                   release=release))
    return _build_showing(path, include_dirs, defines, release=release)


def _build_showing(path, include_dirs, defines, render=to_keeper, release=True):
    """:func:`_build` with a spinner on a terminal once it has taken half a second (a cold
    parse of LLVM's target descriptions takes seconds)."""
    from .progress import spinner

    with spinner(f"TableGen: parsing {os.path.basename(os.fspath(path))}", delay=0.5):
        return _build(path, include_dirs, defines, render, release)


def json_of_file(path, include_dirs=(), defines=(), *, release=True) -> str:
    """``llvm-tblgen --dump-json -I... -D... path``'s text, without the on-disk cache.

    The same text as ``json_text(parse_file(path, ..., use_cache=False))``, written straight
    from the evaluation (:mod:`.json_rec`), without the records :func:`parse_file` returns.

    ``release=False`` skips taking the finished evaluation apart (:meth:`.Evaluator.release`,
    X86: ~0.4 s): its objects, which refer to each other in cycles, are then left to the cycle
    collector. Only for a caller that ends the process right after and keeps the collector
    off until then (``tdflow tblgen`` freezes it): the exit frees nothing of them.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "a.td")
    >>> _ = open(p, "w").write("def A { bit b = 1; }")
    >>> json_of_file(p).startswith('{"!instanceof":{},"!tablegen_json_version":1,"A":{')
    True
    """
    from .json_rec import rec_json_text

    include_dirs = tuple(os.fspath(d) for d in include_dirs)
    return _build_showing(path, include_dirs, tuple(defines), rec_json_text, release)


def parse_string(text, filename="<string>", include_dirs=(), defines=()) -> RecordKeeper:
    """Parse and resolve TableGen source ``text`` (``filename`` is used in messages)."""
    pre = Preprocessor(include_dirs, defines)
    pre.files.append(filename)
    pre.texts[filename] = text
    return run_deep(_run, pre, lambda: Lexer(pre).tokens_of_text(text, filename))
