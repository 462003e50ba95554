"""Property tests: random bytes, token soups and deep nesting never break the front end.

Whatever the input, ``parse_file`` either returns records or raises a located ``TdError``
(never another exception), and takes time linear in the input: a soup repeated 8 times more
may take at most ~8 times longer (with slack for timer noise), which any quadratic or
exponential path in the lexer, parser or evaluator fails. Hypothesis's deadlines are off;
each example is timed here instead, in a worker process, so that a regex that backtracks
exponentially (C code no signal interrupts) fails the test after a timeout instead of
hanging it.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

SCRATCH = Path(tempfile.mkdtemp(prefix="tdflow-fuzz-"))
_counter = itertools.count()
_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                       HealthCheck.data_too_large])
TIMEOUT_S = 20  # per example; a healthy one takes milliseconds

TOKENS = (
    "def defm class multiclass let in foreach if then else defvar defset deftype assert dump "
    "field include bit bits int string code dag list true false ? ; , : = < > { } [ ] ( ) . "
    "... # - + $x 0 1 -1 7 0x1F 0b101 18446744073709551616 -9223372036854775809 A B C NAME "
    '"s" "\\n" [{c}] // /* */ #ifdef #ifndef #else #endif #define X !add !sub !mul !shl !srl '
    "!if !cond !foreach !foldl !filter !strconcat !listconcat !cast !isa !dag !con !size !head "
    "!tail !substr !find !range !listsplat !subst !interleave !repr !exists !eq !lt !and !not"
).split()
SEPARATORS = [" ", "\n", "", "\t", "  \r\n", " é ", "\x00", "\x01"]

# The worker: reads file paths (length-prefixed), parses each, answers with JSON.
WORKER = r"""
import json, struct, sys, time
from tdflow.tdparser import TdError, parse_file
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    path = inp.read(struct.unpack("<I", head)[0]).decode()
    t = time.perf_counter()
    try:
        parse_file(path, use_cache=False)
        res = {"outcome": "ok"}
    except TdError as e:
        res = {"outcome": "error", "file": e.file, "line": e.line, "col": e.col,
               "message": e.message}
        try:
            e.render()
        except Exception as x:
            res["render"] = repr(x)
    except BaseException as e:
        res = {"outcome": "exception", "message": type(e).__name__ + ": " + str(e)[:500]}
    res["seconds"] = time.perf_counter() - t
    data = json.dumps(res).encode()
    out.write(struct.pack("<I", len(data)) + data)
    out.flush()
"""


class _Worker:
    """One long-lived parser process (started on first use, restarted after a timeout)."""

    proc: subprocess.Popen | None = None

    @classmethod
    def parse(cls, path: Path) -> dict:
        if cls.proc is None or cls.proc.poll() is not None:
            cls.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        p = cls.proc
        msg = str(path).encode()
        p.stdin.write(struct.pack("<I", len(msg)) + msg)
        p.stdin.flush()
        head = cls._read(4)
        body = cls._read(struct.unpack("<I", head)[0]) if head else b""
        if not body:
            cls._kill()
            return {"outcome": "timeout", "seconds": TIMEOUT_S}
        return json.loads(body)

    @classmethod
    def _read(cls, n: int) -> bytes:
        fd = cls.proc.stdout.fileno()
        buf = b""
        while len(buf) < n:
            ready, _, _ = select.select([fd], [], [], TIMEOUT_S)
            chunk = os.read(fd, n - len(buf)) if ready else b""
            if not chunk:
                return b""
            buf += chunk
        return buf

    @classmethod
    def _kill(cls) -> None:
        cls.proc.kill()
        cls.proc.wait()
        cls.proc = None


def _parse(data: bytes) -> tuple[str, float]:
    """Parse ``data`` as a file: ``("ok" | "error", seconds)``; anything else fails."""
    path = SCRATCH / f"f{next(_counter)}.td"
    path.write_bytes(data)
    res = _Worker.parse(path)
    path.unlink()
    shown = data[:200]
    assert res["outcome"] in ("ok", "error"), (res, shown)
    if res["outcome"] == "error":
        assert res["line"] >= 1 and res["col"] >= 1 and res["file"] == str(path), (res, shown)
        assert "internal error" not in res["message"] and "render" not in res, (res, shown)
    return res["outcome"], res["seconds"]


@settings(max_examples=150, **_SETTINGS)
@given(data=st.binary(max_size=3000))
@example(data=b" " * 32 + "é".encode())
@example(data=b"\xff\xfe\x00\r\r\n")
def test_random_bytes(data):
    _, dt = _parse(data)
    assert dt < 2, f"{len(data)} bytes took {dt:.2f} s"


@st.composite
def soups(draw, max_tokens=60):
    toks = draw(st.lists(st.sampled_from(TOKENS), max_size=max_tokens))
    sep = draw(st.sampled_from(SEPARATORS))
    return sep.join(toks)


@settings(max_examples=150, **_SETTINGS)
@given(soup=soups())
def test_token_soups(soup):
    _, dt = _parse(soup.encode())
    assert dt < 2, f"{soup!r} took {dt:.2f} s"


@settings(max_examples=25, **_SETTINGS)
@given(soup=soups(max_tokens=20), sep=st.sampled_from(["\n", " ", ";\n", "\n def Z;\n"]))
@example(soup="  \x01", sep=" ")
@example(soup='def X { string s = "a" # "b"; }', sep="\n")
def test_token_soups_scale_linearly(soup, sep):
    # The same piece 100 and 800 times: the whole file is lexed before any error, so a
    # super-linear lexer shows even when the parse fails early.
    small = min(_parse((sep.join([soup] * 100)).encode())[1] for _ in range(2))
    big = min(_parse((sep.join([soup] * 800)).encode())[1] for _ in range(2))
    assert big < max(small, 0.01) * 8 * 3, (soup, sep, small, big)


SHAPES = {
    "list-type": lambda d: "def X { " + "list<" * d + "int" + ">" * d + " v = ?; }",
    "list": lambda d: "def X { " + "list<" * d + "int" + ">" * d + " v = " + "[" * d + "1"
    + "]" * d + "; }",
    "dag": lambda d: "def op; def X { dag v = " + "(op " * d + "1" + ")" * d + "; }",
    "add": lambda d: "def X { int v = " + "!add(1, " * d + "1" + ")" * d + "; }",
    "if": lambda d: "def X { int v = " + "!if(1, " * d + "1" + ", 0)" * d + "; }",
    "bits": lambda d: "def X { bits<1> v = " + "{" * d + "1" + "}" * d + "; }",
    "class-arg": lambda d: "class C<int n> { int v = n; } def X { int v = " + "C<" * d + "1"
    + ">.v" * d + "; }",
    "let": lambda d: "class C { int a; } " + "let a = 1 in { " * d + "def X : C;" + "}" * d,
    "foreach": lambda d: "foreach i = [1] in " * d + "def X;",
    "paste": lambda d: 'def X { string v = "a"' + ' # "b"' * d + "; }",
}


@settings(max_examples=30, **_SETTINGS)
@given(shape=st.sampled_from(sorted(SHAPES)), depth=st.integers(1, 4000),
       cut=st.one_of(st.none(), st.integers(0, 10**6)))
def test_deep_nesting(shape, depth, cut):
    src = SHAPES[shape](depth)
    if cut is not None:  # damage it somewhere: still only TdError
        i = cut % (len(src) + 1)
        src = src[:i] + src[i + 1:]
    outcome, dt = _parse(src.encode())
    assert dt < 1 + len(src) * 20e-6, (shape, depth, dt)
    if cut is None and shape not in ("class-arg",):
        assert outcome == "ok", (shape, depth)  # llvm-tblgen accepts these depths too
