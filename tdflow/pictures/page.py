"""One self-contained HTML page: the inlined SVG, the data the side panel shows, the CSS and
the hand-written script (``assets/``), no network.

A program is untrusted input, so what it says reaches the page only as escaped text: the
title through :func:`html.escape`, the panel's data as JSON inside a non-executed
``<script type="application/json">`` with ``<``, ``>`` and ``&`` as ``\\u`` escapes, and the SVG
as Graphviz wrote it after :func:`check_svg` has made sure it holds only drawing elements. On
top of that the page's Content-Security-Policy lets only its own script run (by hash) and
loads nothing.

>>> page = build_page("t", "<svg></svg>", {"a": "<script>"}, "view")
>>> "<script>" in page.split("tdflow-data")[1].split("</script>")[0]
False
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from functools import cache
from importlib import resources
from typing import Any

from .layout import LayoutError


@cache
def asset(name: str) -> str:
    """The text of ``assets/NAME`` (shipped as package data)."""
    return resources.files("tdflow.pictures").joinpath("assets", name).read_text("utf-8")


def json_for_script(value: Any) -> str:
    """``value`` as JSON that cannot end the ``<script>`` element it sits in.

    >>> json_for_script("</script>")
    '"\\\\u003c/script\\\\u003e"'
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def script_hash(code: str) -> str:
    """The CSP source (``'sha256-...'``) that allows exactly the inline script ``code``."""
    digest = hashlib.sha256(code.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


# What Graphviz's SVG output is made of; anything else (a script, an event handler, a link,
# foreign content) means the text was not escaped as expected, and the page is not written.
_SVG_TAGS = frozenset("svg g title text path polygon polyline ellipse line rect circle "
                      "defs desc tspan".split())
_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z][\w:-]*)([^>]*)>")
_HANDLER = re.compile(r"(?:^|\s)(on\w+|xlink:href|href|style)\s*=", re.I)


def check_svg(svg: str) -> str:
    """``svg`` when it holds only Graphviz's drawing elements and no script, handler or link;
    :class:`LayoutError` otherwise.

    >>> check_svg('<svg><g id="n0"><text>&lt;script&gt;</text></g></svg>')[:5]
    '<svg>'
    """
    for m in _TAG.finditer(re.sub(r"<!--.*?-->", "", svg, flags=re.S)):
        name = m.group(2).lower()
        if name not in _SVG_TAGS or _HANDLER.search(m.group(3)):
            raise LayoutError(f"dot's SVG holds an unexpected <{name}> element or attribute; "
                              f"not writing it into a page")
    return svg


def page_head(title: str, kind: str, script: str) -> str:
    """A page's ``<head>`` up to ``<body>``: the title, the ``kind.css`` styles and the
    Content-Security-Policy that lets only ``script`` (the page's own, by hash) run.

    >>> "script-src 'sha256-" in page_head("t", "view", "x()")
    True
    """
    csp = (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src {script_hash(script)}")
    return "".join([
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        f"<title>{html.escape(title)}</title>\n<style>\n{asset(f'{kind}.css')}</style>\n",
        "</head><body>\n"])


def build_page(title: str, svg: str, data: Any, kind: str, header: str = "") -> str:
    """The page: ``kind`` names its assets (``view.css``/``view.js``); ``data`` is what the
    script reads from ``#tdflow-data``; ``header`` is trusted markup for the top bar."""
    script = asset(f"{kind}.js")
    return "".join([
        page_head(title, kind, script), "<header>", f"<h1>{html.escape(title)}</h1>", header,
        "</header>\n<main id=\"graph\">", check_svg(svg), "</main>\n",
        "<aside id=\"panel\"><p class=\"hint\">Click an op or a value to see it here. Drag to "
        "pan, scroll to zoom, type to search (Enter jumps to the next match).</p></aside>\n",
        "<script type=\"application/json\" id=\"tdflow-data\">", json_for_script(data),
        "</script>\n<script>", script, "</script>\n</body></html>\n"])
