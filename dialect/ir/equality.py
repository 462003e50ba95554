"""Structural equality of modules: what "printing then parsing gives an equal module" means.

Two modules are equal when they have the same functions (names, types, visibility, attributes)
with the same operations in the same order (names, attributes, result types) and the same
def-use graph. Value names and locations are ignored.
"""

from __future__ import annotations

from tdflow.dialect.ir.core import FuncOp, Module, Value

__all__ = ["module_equal", "module_diff"]


def module_equal(a: Module, b: Module) -> bool:
    """Structural equality: same functions, ops, attributes, types and def-use graph.

    Names of values and locations are ignored.

    >>> module_equal(Module(), Module())
    True
    """
    return module_diff(a, b) is None


def module_diff(a: Module, b: Module) -> str | None:
    """``None`` when ``a`` and ``b`` are structurally equal, else the first difference."""
    if len(a.funcs) != len(b.funcs):
        return f"{len(a.funcs)} functions vs {len(b.funcs)}"
    if (a.name, a.attributes) != (b.name, b.attributes):
        return "module name or attributes differ"
    if a.resources or b.resources:
        d = _blob_diff(a, b)
        if d is not None:
            return d
    for fa, fb in zip(a.funcs, b.funcs):
        d = _func_diff(fa, fb)
        if d is not None:
            return f"@{fa.name}: {d}"
    return None


def _blob_diff(a: Module, b: Module) -> str | None:
    """The data of every blob a ``dense_resource`` of either module names must agree (blobs no
    attribute names are not compared: mlir-opt drops them)."""
    from tdflow.dialect.ir.attrs import blob_bytes

    for name in sorted(_resource_names(a) | _resource_names(b)):
        ta, tb = a.resources.get(name), b.resources.get(name)
        if (ta is None) != (tb is None) or (ta is not None and blob_bytes(ta) != blob_bytes(tb)):
            return f"dense_resource blob '{name}' differs"
    return None


def _resource_names(m: Module) -> set[str]:
    from tdflow.dialect.ir.attrs import ArrayAttr, DenseResourceAttr, DictAttr

    out: set[str] = set()

    def visit(attr) -> None:
        if isinstance(attr, DenseResourceAttr):
            out.add(attr.name)
        elif isinstance(attr, ArrayAttr):
            for x in attr.value:
                visit(x)
        elif isinstance(attr, DictAttr):
            for _, x in attr.value:
                visit(x)

    for f in m.funcs:
        for attrs in (f.attributes, *(f.arg_attrs or ()), *(f.res_attrs or ())):
            for v in attrs.values():
                visit(v)
        for op in f.body:
            for v in op.attributes.values():
                visit(v)
    return out


def _func_diff(fa: FuncOp, fb: FuncOp) -> str | None:
    if fa.name != fb.name:
        return f"name @{fa.name} vs @{fb.name}"
    if fa.arg_types != fb.arg_types:
        return "argument types differ"
    if fa.result_types != fb.result_types:
        return "result types differ"
    if (fa.kind, fa.visibility, fa.attributes) != (fb.kind, fb.visibility, fb.attributes):
        return "function attributes differ"
    if (fa.arg_attrs or None) != (fb.arg_attrs or None):
        return "argument attributes differ"
    if (fa.res_attrs or None) != (fb.res_attrs or None):
        return "result attributes differ"
    if len(fa.body) != len(fb.body):
        return f"{len(fa.body)} ops vs {len(fb.body)}"
    # Map each value of `a` to its counterpart in `b`; an operand matches if it maps.
    vmap: dict[Value, Value] = dict(zip(fa.body.args, fb.body.args))
    for i, (oa, ob) in enumerate(zip(fa.body, fb.body)):
        where = f"op #{i} ('{oa.name}')"
        if oa.name != ob.name:
            return f"{where}: name differs from '{ob.name}'"
        if len(oa.operands) != len(ob.operands):
            return f"{where}: operand count differs"
        for j, (va, vb) in enumerate(zip(oa.operands, ob.operands)):
            mapped = vmap.get(va)
            if mapped is None:  # defined outside (placeholder): compare by type and name
                if vb in vmap.values() or va.type != vb.type or va.name != vb.name:
                    return f"{where}: operand #{j} differs"
            elif mapped is not vb:
                return f"{where}: operand #{j} differs"
        if len(oa.results) != len(ob.results):
            return f"{where}: result count differs"
        for ra, rb in zip(oa.results, ob.results):
            if ra.type != rb.type:
                return f"{where}: result type {ra.type} vs {rb.type}"
            vmap[ra] = rb
        if oa.attributes != ob.attributes:
            return f"{where}: attributes differ: {oa.attributes} vs {ob.attributes}"
    return None
