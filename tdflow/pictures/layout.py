"""Graph layout by Graphviz's ``dot``, run as a subprocess (no Python binding needed).

``dot`` is an optional dependency: :func:`find_dot` says whether it is there and
:class:`DotMissing` is the one line the CLI prints when it is not.

>>> svg = layout_svg('digraph { a -> b }') if find_dot() else "<svg"
>>> svg.startswith("<svg")
True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from tdflow.core.errors import TdflowError

#: Seconds ``dot`` may take; a 1,000-op program takes about one.
DOT_TIMEOUT = 120


class DotMissing(TdflowError, RuntimeError):
    """Graphviz's ``dot`` is not installed (or ``TDFLOW_DOT`` names no program)."""

    def render(self) -> str:
        return f"error: {self}"


class LayoutError(TdflowError, RuntimeError):
    """``dot`` failed or took too long; says which and dot's own message."""

    def render(self) -> str:
        return f"error: {self}"


def find_dot() -> str | None:
    """The ``dot`` program to run: ``$TDFLOW_DOT`` or ``dot`` on PATH; ``None`` if neither."""
    chosen = os.environ.get("TDFLOW_DOT")
    if chosen:
        return shutil.which(chosen)
    return shutil.which("dot")


def require_dot() -> str:
    """:func:`find_dot`, or :class:`DotMissing` with the install hint."""
    dot = find_dot()
    if dot is None:
        raise DotMissing("tdflow view needs Graphviz's dot: apt-get install graphviz "
                         "(brew install graphviz, conda install graphviz) or set TDFLOW_DOT")
    return dot


_PROLOGUE = re.compile(r"\A.*?(?=<svg\b)", re.S)  # the XML declaration, DOCTYPE and comments


def layout_svg(dot_text: str, dot: str | None = None) -> str:
    """``dot_text`` laid out by ``dot -Tsvg``: the ``<svg>`` element, ready to inline."""
    dot = dot or require_dot()
    try:
        done = subprocess.run([dot, "-Tsvg"], input=dot_text.encode("utf-8"),
                              capture_output=True, timeout=DOT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"dot did not lay the graph out within {DOT_TIMEOUT} s") from None
    except OSError as exc:
        raise LayoutError(f"cannot run {dot}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LayoutError(f"dot failed (exit {done.returncode}): "
                          f"{why[0] if why else 'no message'}")
    return _PROLOGUE.sub("", done.stdout.decode("utf-8", "replace"), count=1)
