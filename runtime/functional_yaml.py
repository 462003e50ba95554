"""A tiny reader for ``signatures.yaml``: the subset of YAML OneFlow's ``functional_api.yaml`` uses.

The file is a list of entries; each entry is a mapping of ``key: value`` lines, where a value is
a quoted string, ``True``/``False``, a bare word, or a list of quoted strings written in flow
style (``[ "a", "b" ]``, which may span lines) or block style (``- "a"`` lines). ``#`` starts a
comment. Anything else is an error naming the line. (PyYAML is not a dependency, and nothing
read here is ever evaluated.)

>>> read_entries('- name: "relu"\\n  signature: "Tensor (Tensor x) => Relu"\\n  bind_python: True\\n')
[{'line': 1, 'name': 'relu', 'signature': ['Tensor (Tensor x) => Relu'], 'bind_python': True}]
"""

from __future__ import annotations

import re
from typing import Any

from tdflow.core.errors import TdflowError

__all__ = ["YamlError", "read_entries"]

_KEY_RE = re.compile(r"^([A-Za-z_]\w*)\s*:\s*(.*)$")
_STR_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


class YamlError(TdflowError, ValueError):
    """A line of ``signatures.yaml`` outside the supported subset."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line


def _strip_comment(line: str) -> str:
    out, quote = [], None
    for ch in line:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        out.append(ch)
    return "".join(out).rstrip()


def _unquote(m: re.Match) -> str:
    if m.group(1) is not None:
        return re.sub(r"\\(.)", r"\1", m.group(1))
    return m.group(2)


def _scalar(text: str, path: str, line: int) -> Any:
    t = text.strip()
    m = _STR_RE.fullmatch(t)
    if m:
        return _unquote(m)
    if t in ("True", "true"):
        return True
    if t in ("False", "false"):
        return False
    if re.fullmatch(r"[A-Za-z_][\w.]*", t):
        return t
    raise YamlError(path, line, f"expected a quoted string, True/False or a word, got {t!r}")


def _flow_list(text: str, path: str, line: int) -> list[str]:
    inner = text.strip()[1:-1]
    items: list[str] = []
    pos = 0
    while True:
        while pos < len(inner) and inner[pos] in " \t\n,":
            pos += 1
        if pos >= len(inner):
            return items
        m = _STR_RE.match(inner, pos)
        if not m:
            raise YamlError(path, line, f"expected a quoted string in the list, got "
                                        f"{inner[pos:pos + 30]!r}")
        items.append(_unquote(m))
        pos = m.end()


def read_entries(text: str, path: str = "signatures.yaml") -> list[dict[str, Any]]:
    """Entries in file order; list-valued keys always give lists, ``line`` is where it starts."""
    entries: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    pending_key: str | None = None  # a key whose value continues on the next lines
    flow_buf: list[str] | None = None
    flow_line = 0
    lines = text.splitlines()
    for no, raw in enumerate(lines, 1):
        line = _strip_comment(raw)
        if flow_buf is not None:
            flow_buf.append(line)
            if line.strip().endswith("]"):
                assert cur is not None and pending_key is not None
                cur[pending_key] = _flow_list("\n".join(flow_buf).strip(), path, flow_line)
                flow_buf = None
                pending_key = None
            continue
        if not line.strip():
            continue
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and stripped.startswith("- "):
            cur = {"line": no}
            entries.append(cur)
            stripped = stripped[2:].strip()
            pending_key = None
        elif cur is None:
            raise YamlError(path, no, "expected an entry starting with '- name: ...'")
        if pending_key is not None and stripped.startswith("- "):
            cur.setdefault(pending_key, []).append(_scalar(stripped[2:], path, no))
            continue
        if pending_key is not None and stripped.startswith("["):
            flow_buf, flow_line = [stripped], no
            if stripped.endswith("]"):
                cur[pending_key] = _flow_list(stripped, path, no)
                flow_buf = None
                pending_key = None
            continue
        m = _KEY_RE.match(stripped)
        if not m:
            raise YamlError(path, no, f"expected 'key: value', got {stripped!r}")
        key, value = m.group(1), m.group(2).strip()
        if key in cur:
            raise YamlError(path, no, f"duplicate key {key!r}")
        if not value:
            pending_key = key
            continue
        pending_key = None
        if value.startswith("["):
            if value.endswith("]"):
                cur[key] = _flow_list(value, path, no)
            else:
                pending_key, flow_buf, flow_line = key, [value], no
            continue
        cur[key] = _scalar(value, path, no)
    if flow_buf is not None:
        raise YamlError(path, flow_line, "unterminated '[' list")
    for e in entries:
        if "signature" in e and isinstance(e["signature"], str):
            e["signature"] = [e["signature"]]
    return entries
