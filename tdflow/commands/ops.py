"""``tdflow ops``: list the ops a ``.td`` file defines (a table, or JSON with ``--json``).

    $ tdflow ops ops.td
    $ tdflow ops my_ops.td -I include --json | jq '.[0].attrs'
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ops", help="list the ops of a .td file (table or --json)",
                       description="List every op FILE.td defines: operands, results, "
                       "attributes (kind, default), traits and declared hooks.")
    from tdflow.dialect.cli_support import add_td_args

    add_td_args(p, positional=True)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list: name, operands, results, attrs (kind/default/"
                        "required), traits, flags")


def run(args: argparse.Namespace) -> int:
    from tdflow.dialect.cli_support import UsageError, load_from_args, op_to_json, usage

    try:
        dialect = load_from_args(args)
    except UsageError as exc:
        return usage(str(exc))
    if args.json:
        import json
        import sys

        json.dump([op_to_json(op) for op in dialect], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    _table(dialect)
    return 0


def _table(dialect) -> None:
    from rich.table import Table

    from tdflow.dialect.cli_support import console

    table = Table(title=f"{dialect.name}: {len(dialect)} ops ({dialect.path})", show_lines=False)
    for col in ("op", "operands", "results", "attributes", "traits", "hooks"):
        table.add_column(col, overflow="fold")
    for op in dialect:
        def vals(defs):
            return ", ".join(d.name + ("?" if d.is_optional else "..." if d.is_variadic else "")
                             for d in defs)

        attrs = []
        for a in op.attributes:
            s = f"{a.name}: {a.kind}"
            if a.default_text is not None:
                s += f" = {a.default_text}"
            elif a.optional:
                s += " (optional)"
            attrs.append(s)
        hooks = ", ".join(k for k in op.hook_kinds)
        table.add_row(op.name, vals(op.operands), vals(op.results), "\n".join(attrs),
                      ", ".join(str(t) for t in op.traits), hooks)
    console(min_width=200).print(table)
