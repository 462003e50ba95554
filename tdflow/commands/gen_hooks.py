"""``tdflow gen-hooks``: write a Python skeleton for the hooks a ``.td`` file declares but that
are not registered yet.

    $ tdflow gen-hooks my_ops.td -o my_hooks.py
    $ tdflow verify --td my_ops.td --hooks my_hooks.py
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gen-hooks", help="write a Python skeleton for missing hooks",
                       description="Write a Python module registering a placeholder for every "
                       "hook FILE.td declares (has_*_fn = 1) that has no registered function.")
    from tdflow.dialect.cli_support import add_td_args

    add_td_args(p, positional=True)
    p.add_argument("-o", dest="output", default="-", metavar="OUT.py", help="write to OUT.py")


def run(args: argparse.Namespace) -> int:
    import os
    import sys

    from tdflow.dialect.cli_support import UsageError, load_from_args, usage, write_output
    from tdflow.dialect.gen_hooks import skeleton

    try:
        dialect = load_from_args(args)
    except UsageError as exc:
        return usage(str(exc))
    text, n = skeleton(dialect, os.path.basename(args.td or str(dialect.path)))
    write_output(text, args.output)
    if args.output != "-":
        sys.stderr.write(f"wrote {n} hook(s) to {args.output}\n")
    return 0
