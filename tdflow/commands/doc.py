"""``tdflow doc``: a markdown reference of the ops in a ``.td`` file (like
``mlir-tblgen -gen-op-doc``).

    $ tdflow doc ops.td -o docs/ops.md
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doc", help="write a markdown reference of the ops of a .td file",
                       description="Write a markdown reference per op: summary, description, "
                       "traits, hooks, attributes with defaults, operands and results.")
    from tdflow.dialect.cli_support import add_td_args

    add_td_args(p, positional=True)
    p.add_argument("-o", dest="output", default="-", metavar="OUT", help="write to OUT")


def run(args: argparse.Namespace) -> int:
    from tdflow.dialect.cli_support import UsageError, load_from_args, usage, write_output
    from tdflow.dialect.docgen import dialect_doc

    try:
        dialect = load_from_args(args)
    except UsageError as exc:
        return usage(str(exc))
    write_output(dialect_doc(dialect), args.output)
    return 0
