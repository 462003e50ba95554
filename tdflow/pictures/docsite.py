"""``tdflow doc --html DIR``: a static reference site of an op library.

Pages: ``index.html`` (dialects, families, every op), one ``dialect-NAME.html`` per dialect and
one ``family-NAME.html`` per op family (the ``.td`` file the ops are defined in) holding a
section per op (anchor: the op's name). Every op shows what
:func:`tdflow.dialect.docgen.op_facts` gathers (the markdown reference's data): summary,
description with its IR examples, formula, gradient, traits, hooks, attributes with kinds and
defaults, operands, results, functional signatures, and SBP signatures for 2-D inputs where
the op has a ``get_sbp`` hook. Op names in text link to their op. Each page embeds the search
index (JSON) and a small script: ``file://`` pages cannot fetch, and nothing is loaded.

>>> import tempfile
>>> from tdflow.dialect.context import standard_context
>>> out = write_site(standard_context().standard, tempfile.mkdtemp())
>>> sorted(p.name for p in out)[:2]
['dialect-tdflow.html', 'family-boxing.html']
"""

from __future__ import annotations

import html
import os
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tdflow.dialect.docgen import op_facts

from .page import asset, json_for_script, page_head

if TYPE_CHECKING:
    from tdflow.dialect.dialect import Dialect
    from tdflow.dialect.opdef import OpDef


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "ops"


def family_of(op: OpDef) -> str:
    """The op's family: the stem of the ``.td`` file that defines it.

    >>> from tdflow.dialect.opdef import OpDef, SourceLocation
    >>> family_of(OpDef("relu", "tdflow", location=SourceLocation("/x/ops/math.td", 3)))
    'math'
    """
    loc = getattr(op, "location", None)
    if loc is None or not loc.file:
        return op.dialect
    return _slug(Path(loc.file).stem)


class _Linker:
    """Escapes text and turns op names in it into links (``code`` spans and fences kept)."""

    def __init__(self, ops: dict[str, str]) -> None:
        self.ops = ops  # op name -> href
        names = sorted(ops, key=len, reverse=True)
        self._re = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?![\w])") \
            if names else None

    def text(self, raw: str) -> str:
        out = html.escape(raw)
        if self._re is None:
            return out
        return self._re.sub(lambda m: f'<a href="{self.ops[m.group(1)]}">{m.group(1)}</a>', out)

    def inline(self, raw: str) -> str:
        """Markdown-ish inline text: `code` spans, links to ops."""
        parts = raw.split("`")
        return "".join(f"<code>{self.text(p)}</code>" if i % 2 else self.text(p)
                       for i, p in enumerate(parts))

    def block(self, raw: str) -> str:
        """A description: paragraphs and fenced code blocks (the IR examples)."""
        text = textwrap.dedent(raw.strip("\n")).strip()
        out, para, code, fence = [], [], [], None
        for line in text.splitlines():
            if fence is not None:
                if line.strip().startswith("```"):
                    out.append(f'<pre class="example"><code>{self.text(chr(10).join(code))}'
                               f"</code></pre>")
                    code, fence = [], None
                else:
                    code.append(line)
            elif line.strip().startswith("```"):
                if para:
                    out.append(f"<p>{self.inline(' '.join(para))}</p>")
                    para = []
                fence = line.strip()[3:]
            elif not line.strip():
                if para:
                    out.append(f"<p>{self.inline(' '.join(para))}</p>")
                    para = []
            else:
                para.append(line.strip())
        if code:
            out.append(f"<pre><code>{self.text(chr(10).join(code))}</code></pre>")
        if para:
            out.append(f"<p>{self.inline(' '.join(para))}</p>")
        return "\n".join(out)


def sbp_rows(library: Dialect, op: OpDef) -> list[str]:
    """The op's SBP signatures for 2-D f32 inputs (``x_0: S(0) -> y_0: S(0)``), or ``[]``
    when it has no ``get_sbp`` rule (a hook or its formula) or the rule needs inputs of
    another kind."""
    if not op.provides("get_sbp") or not hasattr(library, "sbp_signatures"):
        return []
    from tdflow.dialect.types import TensorType

    types = [TensorType((4, 8), "f32") for v in op.operands if not v.is_optional]
    try:
        sigs = library.sbp_signatures(op.name, types)
    except Exception:  # noqa: BLE001 - a hook that wants other shapes: nothing to show
        return []
    return [", ".join(f"{k}: {v}" for k, v in s.inputs) + " \u2192 "
            + ", ".join(f"{k}: {v}" for k, v in s.outputs) for s in sigs]


def _short_path(where: str) -> str:
    """``file:line:col`` with the file relative to the working directory when inside it, else
    its last three components (a site should not spell out one machine's folders)."""
    rel = os.path.relpath(where) if os.path.isabs(where) else where
    if rel.startswith(".."):
        rel = "/".join(Path(where).parts[-3:])
    return rel


def _table(head: list[str], rows: list[list[str]]) -> str:
    out = ["<table><thead><tr>", *(f"<th>{h}</th>" for h in head), "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def op_section(op: OpDef, library: Dialect, link: _Linker) -> str:
    """The HTML section of one op (anchor: its name)."""
    f = op_facts(op)
    e = html.escape
    out = [f'<section class="op" id="{e(op.name)}"><h2><a href="#{e(op.name)}">{e(op.name)}'
           f'</a> <span class="record">{e(f["record"])}</span></h2>']
    if f["summary"]:
        out.append(f'<p class="summary">{link.inline(f["summary"])}</p>')
    if f["description"]:
        out.append(link.block(f["description"]))
    facts = []
    if f["formula"]:
        facts.append(["formula", f"<code>{link.text(f['formula'])}</code>"])
    if f["gradient"]:
        facts.append(["gradient", link.inline(f["gradient"])])
    if f["traits"]:
        facts.append(["traits", ", ".join(f"<code>{e(t)}</code>" for t in f["traits"])])
    if f["hooks"]:
        facts.append(["hooks", ", ".join(f"<code>{e(h)}</code>" for h in f["hooks"])])
    if f["location"]:
        facts.append(["defined at", f'<span class="loc">{e(_short_path(f["location"]))}</span>'])
    if facts:
        out.append(_table(["", ""], facts).replace("<thead><tr><th></th><th></th></tr></thead>",
                                                    ""))
    if f["attributes"]:
        out.append("<h3>Attributes</h3>" + _table(
            ["name", "kind", "default", "constraint"],
            [[f"<code>{e(a['name'])}</code>", e(a["kind"]), link.inline(a["default"]),
              f"<code>{e(a['constraint'])}</code>"] for a in f["attributes"]]))
    for title, key in (("Operands", "operands"), ("Results", "results")):
        if f[key]:
            out.append(f"<h3>{title}</h3>" + _table(
                ["name", "description"],
                [[f"<code>{e(v['name'])}</code>", e(v["arity"]) + link.inline(v["what"])]
                 for v in f[key]]))
    if f["signatures"]:
        out.append("<h3>Functional signatures</h3><pre>"
                   + "\n".join(e(s) for s in f["signatures"]) + "</pre>")
    sbp = sbp_rows(library, op)
    if sbp:
        out.append("<h3>SBP signatures (2-D inputs)</h3><pre>" + "\n".join(map(e, sbp))
                   + "</pre>")
    out.append("</section>")
    return "\n".join(out)


def _page(title: str, body: str, index: list[dict], crumbs: str) -> str:
    script = asset("site.js")
    return "".join([
        page_head(title, "site", script),
        "<header><a class=\"home\" href=\"index.html\">op reference</a>",
        crumbs, "<input id=\"search\" type=\"search\" placeholder=\"search ops (name, summary, "
        "trait)\" autocomplete=\"off\"><ol id=\"results\"></ol></header>\n<main>\n",
        body, "\n</main>\n<script type=\"application/json\" id=\"tdflow-index\">",
        json_for_script(index), "</script>\n<script>", script, "</script>\n</body></html>\n"])


def write_site(library: Dialect, out_dir: str | os.PathLike[str], title: str | None = None
               ) -> list[Path]:
    """Write the site of ``library`` (a Dialect: the ops to document) into ``out_dir``;
    returns the pages written. See the module docstring."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ops = sorted(library, key=lambda op: op.name)
    families: dict[tuple[str, str], list[Any]] = {}
    for op in ops:
        families.setdefault((op.dialect, family_of(op)), []).append(op)
    page_of = {key: f"family-{_slug(key[1] if len({d for d, _ in families}) == 1 else '-'.join(key))}.html"
               for key in families}
    href = {op.name: f"{page_of[(op.dialect, family_of(op))]}#{op.name}" for op in ops}
    link = _Linker(href)
    index = [{"n": op.name, "s": op.summary, "h": href[op.name],
              "t": " ".join(str(t) for t in op.traits)} for op in ops]
    e = html.escape
    dialects: dict[str, list[tuple[str, str]]] = {}
    for d, fam in families:
        dialects.setdefault(d, []).append((d, fam))
    written = []

    def write(name: str, text: str) -> None:
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)

    def op_list(items: list[Any]) -> str:
        return "<ul class=\"ops\">" + "".join(
            f'<li><a href="{e(href[op.name])}">{e(op.name)}</a> <span>{link.inline(op.summary)}'
            f"</span></li>" for op in items) + "</ul>"

    for key, members in families.items():
        crumbs = (f' › <a href="dialect-{_slug(key[0])}.html">{e(key[0])}</a> › '
                  f"{e(key[1])}")
        toc = op_list(members)
        body = (f"<h1>{e(key[1])} <small>{len(members)} ops of the {e(key[0])} dialect</small>"
                f"</h1>{toc}" + "".join(op_section(op, library, link) for op in members))
        write(page_of[key], _page(f"{key[1]} · {key[0]} ops", body, index, crumbs))
    for d, keys in dialects.items():
        members = [op for k in keys for op in families[k]]
        fams = "".join(f'<li><a href="{e(page_of[k])}">{e(k[1])}</a> '
                       f"<span>{len(families[k])} ops</span></li>" for k in keys)
        body = (f"<h1>{e(d)} dialect <small>{len(members)} ops</small></h1>"
                f"<h2>Families</h2><ul class=\"families\">{fams}</ul><h2>Operations</h2>"
                + op_list(members))
        write(f"dialect-{_slug(d)}.html", _page(f"{d} dialect", body, index, f" › {e(d)}"))
    name = title or getattr(library, "name", None) or "ops"
    src = os.path.basename(str(getattr(library, "path", "") or "")) or None
    dl = "".join(f'<li><a href="dialect-{_slug(d)}.html">{e(d)}</a> '
                 f"<span>{sum(len(families[k]) for k in keys)} ops, {len(keys)} families</span>"
                 f"</li>" for d, keys in dialects.items())
    body = (f"<h1>{e(str(name))} op reference <small>{len(ops)} ops"
            + (f" from {e(src)}" if src else "") + "</small></h1>"
            f"<h2>Dialects</h2><ul class=\"families\">{dl}</ul><h2>All operations</h2>"
            + op_list(ops))
    write("index.html", _page(f"{name} op reference", body, index, ""))
    return written
