"""``tdflow doc``: a markdown reference of the ops of op libraries (like
``mlir-tblgen -gen-op-doc``): the files named, or the standard ops when none is.

    $ tdflow doc ops.td -o docs/ops.md
    $ tdflow doc my_ops.td --hooks my_hooks.py -o my_ops.md
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doc", help="write a markdown reference of the ops of op libraries",
                       description="Write a markdown reference per op of FILE.td and the --ops "
                       "libraries (default: the standard ops): summary, description, traits, "
                       "hooks, attributes with defaults, operands and results.")
    from tdflow.dialect.cli_support import add_ops_args

    add_ops_args(p, positional=True)
    p.add_argument("-o", dest="output", default="-", metavar="OUT", help="write to OUT")


def run(args: argparse.Namespace) -> int:
    import os

    from tdflow.dialect.cli_support import (
        context_from_args,
        op_files,
        shown_library,
        write_output,
    )
    from tdflow.dialect.docgen import dialect_doc

    library = shown_library(context_from_args(args), args)
    files = op_files(args)
    source = " + ".join(os.path.basename(f) for f in files) if len(files) > 1 else None
    write_output(dialect_doc(library, source), args.output)
    return 0
