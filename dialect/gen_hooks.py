"""``tdflow gen-hooks``: a Python skeleton with the hooks a dialect declares but lacks.

The skeleton registers one function per missing (op, hook kind) with working placeholder
bodies (outputs copy the first input's shape and dtype, no SBP signatures), so the contract
holds at once and the bodies can be filled in one by one.

Everything copied from the ``.td`` file (op, operand, result and attribute names, defaults, the
file name) is data, never code: string literals and docstring or comment text go through
:func:`escape`, function names through :func:`py_ident`, and hook kinds must be known ones.

>>> print(_q('x" + __import__("os").system("id") + "'))
"x\\" + __import__(\\"os\\").system(\\"id\\") + \\""
"""

from __future__ import annotations

import keyword
import re

from .attr_kinds import kind_description
from .opdef import HOOK_KINDS, OpDef

_BODIES = {
    "infer_logical_tensor_desc": ("None", "Set each output's shape from the inputs and attributes.",
                                  "shape"),
    "infer_physical_tensor_desc": ("None", "Per-device shapes; on one device, the logical ones.",
                                   "shape"),
    "infer_data_type": ("None", "Set each output's element type.", "dtype"),
    "check_attr": ("None", "Reject bad attribute values with ctx.fail(message, attr=name).", None),
    "get_sbp": ("list[SbpSignature]", "The SBP signatures (S(axis)/B/P per blob) the op supports.",
                None),
    "compute_complexity": ("float | None", "FLOPs of one call (None when shapes are unknown).",
                           None),
    "modify_input_arg": ("dict[str, InputArgModifier]",
                         "Mark inputs written in place (is_mutable) or without gradient.", None),
    "infer_device": ("str | None", "The device of the outputs (None: the inputs' device).", None),
}


def escape(text: object) -> str:
    r"""``text`` escaped for the inside of a double-quoted (or triple-quoted) literal or a comment.

    Backslashes and double quotes are escaped and every unprintable character (newlines,
    carriage returns, form feeds, NUL, U+2028, lone surrogates, ...) is written as an escape, so
    the result is one line that can neither end the literal or comment nor start an escape of
    its own; inside a literal it reads back as ``text`` itself.

    >>> print(escape('x"\nimport os\\'))
    x\"\nimport os\\
    """
    out = []
    for c in str(text):
        if c == "\\" or c == '"':
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        else:
            out.append(repr(c)[1:-1])  # \n, \x00, \u2028, \ud800: repr's escape for it
    return "".join(out)


def _q(text: object) -> str:
    """A double-quoted Python string literal whose value is ``text``."""
    return f'"{escape(text)}"'


def py_ident(text: str) -> str:
    """A valid (ASCII, non-keyword) Python identifier made from ``text``.

    >>> py_ident("GL.FAbs"), py_ident("2d"), py_ident("é"), py_ident("class")
    ('GL_FAbs', 'op_2d', 'op', 'class_')
    """
    name = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_") or "op"
    if name[0].isdigit():
        name = "op_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        name += "_"
    return name


def _body(op: OpDef, kind: str) -> list[str]:
    first = op.operands[0].name if op.operands else None
    if kind in ("infer_logical_tensor_desc", "infer_physical_tensor_desc", "infer_data_type"):
        what = "shape" if kind != "infer_data_type" else "dtype"
        if first is None:
            return [f"    raise NotImplementedError({_q(op.name + ' has no inputs to copy the ' + what + ' from')})"]
        lines = []
        for r in op.results:
            lines.append(f"    ctx.set_output_{what}({_q(r.name)}, ctx.input_{what}({_q(first)}))")
        return lines or ["    pass  # the op has no results"]
    if kind == "get_sbp":
        return ["    return []  # broadcasting every blob is always valid"]
    if kind == "modify_input_arg":
        return ["    return {}"]
    if kind == "check_attr":
        return ["    pass"]
    return ["    return None"]


def skeleton(dialect, source: str = "FILE.td") -> tuple[str, int]:
    """The skeleton text for every declared hook without a registered function, and how many."""
    missing, undeclared = [], []
    for op, flag, kind, _msg in dialect.contract_problems():
        if kind not in HOOK_KINDS:
            # the kind becomes a decorator name below: only the known ones are code we wrote
            raise ValueError(f"unknown hook kind {kind!r}")
        if flag in op.hooks:
            missing.append((op, kind))
        else:
            undeclared.append((op, flag, kind))
    kinds = sorted({k for _, k in missing})
    names = ["InferContext"] + (["InputArgModifier"] if "modify_input_arg" in kinds else []) + (
        ["SbpSignature"] if "get_sbp" in kinds else []) + kinds
    out = [f'"""Hooks of the ops in {escape(source)} (skeleton written by `tdflow gen-hooks`).',
           "",
           "Each function is registered for one (op, hook kind) its definition declares with a",
           "`has_*_fn` bit. The placeholder bodies copy the first input's shape and dtype; replace",
           "them with the op's rules. Load this file with `tdflow verify --hooks THIS_FILE.py`.",
           '"""', "", "from __future__ import annotations", ""]
    if missing:
        out.append("from tdflow.dialect.hooks import (")
        out += [f"    {n}," for n in names]
        out += [")"]
    if undeclared:
        out.append("")
    for op, flag, kind in undeclared:
        out.append(f"# NOTE: {escape(op.name)} has a {kind} hook but does not declare {flag}; "
                   f"add `let {flag} = 1;` to its definition.")
    used: set[str] = set()
    for op, kind in missing:
        ret, doc, _ = _BODIES.get(kind, ("object", f"The {kind} hook.", None))
        ins = ", ".join(o.name for o in op.operands) or "none"
        outs = ", ".join(r.name for r in op.results) or "none"
        attrs = ", ".join(f"{a.name} ({kind_description(a.kind)}"
                          + (f", default {a.default!r})" if a.default_text is not None else ")")
                          for a in op.attributes) or "none"
        fn = base = f"{py_ident(op.mnemonic)}_{kind}"
        n = 1
        while fn in used:  # "a.b" and "a_b" would otherwise define one function twice
            n += 1
            fn = f"{base}_{n}"
        used.add(fn)
        out += ["", "", f"@{kind}({_q(op.name)})",
                f"def {fn}(ctx: InferContext) -> {ret}:",
                f'    """{escape(op.name)}: {doc}', "",
                f"    inputs: {escape(ins)}; outputs: {escape(outs)}",
                f"    attributes: {escape(attrs)}",
                '    """']
        out += _body(op, kind)
    if not missing:
        out += ["", "# Every declared hook is registered: nothing to write."]
    return "\n".join(out).rstrip("\n") + "\n", len(missing)
