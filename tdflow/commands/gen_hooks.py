"""``tdflow gen-hooks``: write a Python skeleton for the hooks an op library declares but that
are not registered yet (ops a standard op serves have its hooks already).

    $ tdflow gen-hooks my_ops.td -o my_hooks.py
    $ tdflow verify --ops my_ops.td --hooks my_hooks.py
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("gen-hooks", help=summary,
                       description="Write a Python module registering a placeholder for every "
                       "hook FILE.td (and the --ops libraries) declares (has_*_fn = 1) that "
                       "has no registered function, after importing the --hooks files.")
    from tdflow.commands._args import add_ops_args

    add_ops_args(p, positional=True)
    p.add_argument("-o", dest="output", default="-", metavar="OUT.py", help="write to OUT.py")


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    from tdflow.commands._args import context_from_args, op_files, shown_library, write_output
    from tdflow.dialect.gen_hooks import skeleton

    library = shown_library(context_from_args(args), args)
    files = op_files(args) or [str(library.path)]
    text, n = skeleton(library, " + ".join(os.path.basename(f) for f in files))
    write_output(text, args.output)
    if args.output != "-":
        sys.stderr.write(f"wrote {n} hook(s) to {args.output}\n")
    return 0
