"""``tdflow gen-hooks``: a Python skeleton with the hooks a dialect declares but lacks.

The skeleton registers one function per missing (op, hook kind) with working placeholder
bodies (outputs copy the first input's shape and dtype, no SBP signatures), so the contract
holds at once and the bodies can be filled in one by one.
"""

from __future__ import annotations

import json
import re

from .attr_kinds import kind_description
from .opdef import OpDef

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


def _q(text: str) -> str:
    """A double-quoted Python string literal (names come from .td files: never code)."""
    return json.dumps(text)


def _ident(text: str) -> str:
    return re.sub(r"\W", "_", text).strip("_") or "op"


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
        if flag in op.hooks:
            missing.append((op, kind))
        else:
            undeclared.append((op, flag, kind))
    kinds = sorted({k for _, k in missing})
    names = ["InferContext"] + (["InputArgModifier"] if "modify_input_arg" in kinds else []) + (
        ["SbpSignature"] if "get_sbp" in kinds else []) + kinds
    out = [f'"""Hooks of the ops in {source} (skeleton written by `tdflow gen-hooks`).',
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
        out.append(f"# NOTE: {op.name} has a {kind} hook but does not declare {flag}; "
                   f"add `let {flag} = 1;` to its definition.")
    for op, kind in missing:
        ret, doc, _ = _BODIES.get(kind, ("object", f"The {kind} hook.", None))
        ins = ", ".join(o.name for o in op.operands) or "none"
        outs = ", ".join(r.name for r in op.results) or "none"
        attrs = ", ".join(f"{a.name} ({kind_description(a.kind)}"
                          + (f", default {a.default!r})" if a.default_text is not None else ")")
                          for a in op.attributes) or "none"
        out += ["", "", f"@{kind}({_q(op.name)})",
                f"def {_ident(op.mnemonic)}_{kind}(ctx: InferContext) -> {ret}:",
                f'    """{op.name}: {doc}', "",
                f"    inputs: {ins}; outputs: {outs}",
                f"    attributes: {attrs}",
                '    """']
        out += _body(op, kind)
    if not missing:
        out += ["", "# Every declared hook is registered: nothing to write."]
    return "\n".join(out).rstrip("\n") + "\n", len(missing)
