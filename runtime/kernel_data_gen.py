"""Writes ``lowering/kernel_table_cpu.json``: the standard context's kernels as selection data.

Run ``python -m tdflow.runtime.kernel_data_gen`` after adding or changing a kernel registration
(or a standard op's formula); a test checks that the shipped file equals a fresh build
(``--check``), so it cannot drift. :mod:`tdflow.lowering.kernel_data` reads it, so ``tdflow
lower`` selects kernels without importing numpy or the runtime.

>>> fresh_table() == open(SHIPPED, encoding="utf-8").read()  # doctest: +SKIP
True
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Mapping
from typing import Any

from tdflow.lowering.kernel_data import FORMAT, SHIPPED
from tdflow.runtime.kernels.registry import Kernel

from tdflow.core.shipped import write_or_check


def kernel_entry(k: Kernel) -> dict[str, Any]:
    """What selection needs of one kernel, as JSON data.

    >>> from tdflow.dialect.context import standard_context
    >>> from tdflow.runtime.op_kernels import kernel_table_for
    >>> kernel_entry(kernel_table_for(standard_context(), "cpu").get("cpu.relu"))["inplace"]
    [[0, 0]]
    """
    spec = None
    if k.match is not None:
        spec = getattr(k.match, "spec", None)
        if spec is None:  # a Python-only predicate cannot be shipped: say which
            raise ValueError(f"kernel {k.name}: its match predicate has no spec "
                             "(use registry.same_dtype/input_dtype_in/all_same_dtype)")
    return {"name": k.name, "op": k.op, "device": k.device,
            "dtypes": None if k.dtypes is None else sorted(k.dtypes), "match": spec,
            "priority": k.priority, "inplace": sorted([o, i] for o, i in k.inplace.items()),
            "describe": k.describe(), "module": kernel_module(k)}


def kernel_module(k: Kernel) -> str | None:
    """The module whose import registers ``k``, for a CPU kernel: that of its function (the
    family modules define and register their kernels together; ``formula`` builds the standard
    formulas' at import); ``None`` for the GPU devices' kernels, which only the full load makes.
    ``runtime.kernels.registry.builtin_kernel`` imports it to run ``k`` without the other
    families (and checks that it did register ``k``).

    >>> from tdflow.runtime.kernels.registry import kernel_table
    >>> kernel_module(kernel_table("cpu").get("cpu.matmul"))
    'tdflow.runtime.kernels.linalg'
    """
    if k.device != "cpu":
        return None
    return getattr(inspect.unwrap(k.fn), "__module__", None)


def check_one_module_per_op(entries: list[dict[str, Any]]) -> None:
    """Refuse a table where an op's CPU kernels come from two modules: loading one family
    alone would then register them in another order than the full load (ties of priority go
    to the first registered), and selection could differ.

    >>> check_one_module_per_op([{"op": "t.x", "device": "cpu", "module": "a", "name": "k1"},
    ...                          {"op": "t.x", "device": "cpu", "module": "b", "name": "k2"}])
    Traceback (most recent call last):
    ...
    ValueError: t.x: CPU kernels from two modules (a, b); put them in one family module
    """
    seen: dict[str, str] = {}
    for e in entries:
        if e["device"] != "cpu":
            continue
        first = seen.setdefault(e["op"], e["module"])
        if first != e["module"]:
            raise ValueError(f"{e['op']}: CPU kernels from two modules ({first}, "
                             f"{e['module']}); put them in one family module")


def fresh_table() -> str:
    """The table's JSON text built from the registry now, as :func:`main` writes it.

    >>> fresh_table().startswith('{"format": 1,')
    True
    """
    from tdflow.dialect.context import standard_context
    from tdflow.runtime.op_kernels import kernel_set_for

    context = standard_context()
    kernels = kernel_set_for(context)
    # the standard ops' kernels only: one a user (or a test) registered for another op in this
    # process is not tdflow's and never selected for a standard program
    ops = set(context.ops) if isinstance(context.ops, Mapping) else {o.name for o in context.ops}
    entries = [kernel_entry(k) for op in sorted(kernels.op_names() & ops)
               for k in kernels.kernels_of(op)]
    check_one_module_per_op(entries)
    aliases = dict(sorted((getattr(context, "served_by", None) or {}).items()))
    # one kernel a line: a registration change is a readable one-line diff
    return (f'{{"format": {FORMAT}, "device": "cpu", "aliases": {json.dumps(aliases)}, '
            '"kernels": [\n' + ",\n".join(json.dumps(e) for e in entries) + "\n]}\n")


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check``, compare) the shipped table; 1 when ``--check`` differs.

    >>> main(["--check"])  # doctest: +SKIP
    0
    """
    args = sys.argv[1:] if argv is None else argv
    return write_or_check(SHIPPED, fresh_table(), "python -m tdflow.runtime.kernel_data_gen", args)


if __name__ == "__main__":
    sys.exit(main())
