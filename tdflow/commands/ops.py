"""``tdflow ops``: list the ops of op libraries (a table, or JSON with ``--json``).

    $ tdflow ops                                    # the standard ops
    $ tdflow ops my_ops.td --hooks my_hooks.py      # your library's ops
    $ tdflow ops my_ops.td -I include --json | jq '.[0].attrs'

With files, the ops they define are listed (the standard ops they are loaded next to are not);
an op of another dialect that a standard op serves (``oneflow.relu`` by ``tdflow.relu``) says
so, and a last line sums up: ``721 ops in 1 dialect (oneflow); 49 served by standard ops``.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("ops", help=summary,
                       description="List every op of FILE.td and the --ops libraries (default: "
                       "the standard ops): operands, results, attributes (kind, default), "
                       "traits, declared hooks, and the standard op serving it, if any.")
    from tdflow.commands._args import add_ops_args

    add_ops_args(p, positional=True)
    p.add_argument("--json", action="store_true",
                   help="print a JSON list: name, operands, results, attrs (kind/default/"
                        "required), traits, flags, served_by")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands._args import context_from_args, op_to_json, shown_library

    library = shown_library(context_from_args(args), args)
    if args.json:
        import json
        import sys

        # one write: json.dump would write each of its ~25,000 pieces through the CLI's
        # guarded stdout (a third of the command's time)
        sys.stdout.write(json.dumps([op_to_json(op, library.served_by.get(op.name))
                                     for op in library], indent=2) + "\n")
        return 0
    _table(library)
    print(summary(library))
    return 0


def summary(library) -> str:
    """One line: how many ops, in which dialects, how many a standard op serves.

    >>> from tdflow.dialect import standard_dialect
    >>> summary(standard_dialect())  # the count grows as ops are added
    '... ops in 1 dialect (tdflow)'
    """
    dialects = list(dict.fromkeys(op.dialect for op in library))
    n = len(dialects)
    line = (f"{len(library)} op{'s' if len(library) != 1 else ''} in {n} "
            f"dialect{'s' if n != 1 else ''} ({', '.join(dialects)})")
    served = sum(1 for op in library if op.name in library.served_by)
    if served:
        line += f"; {served} served by standard ops"
    return line


def _table(library) -> None:
    from tdflow.commands.table import Table

    served = library.served_by
    table = Table(title=f"{library.name}: {len(library)} ops ({library.path})", show_lines=False)
    columns = ["op", "operands", "results", "attributes", "traits", "hooks"]
    if any(op.name in served for op in library):
        columns.append("served by")
    for col in columns:
        table.add_column(col, overflow="fold")
    for op in library:
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
        row = [op.name, vals(op.operands), vals(op.results), "\n".join(attrs),
               ", ".join(str(t) for t in op.traits), hooks]
        if len(columns) > 6:
            row.append(served.get(op.name, ""))
        table.add_row(*row)
    table.print(200)
