"""``tdflow doc``: a markdown reference of the ops of op libraries (like
``mlir-tblgen -gen-op-doc``): the files named, or the standard ops when none is.

    $ tdflow doc ops.td -o docs/ops.md
    $ tdflow doc my_ops.td --hooks my_hooks.py -o my_ops.md
    $ tdflow doc --html site/            # a static site with search: open site/index.html
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("doc", help=summary,
                       description="Write a markdown reference per op of FILE.td and the --ops "
                       "libraries (default: the standard ops): summary, description, traits, "
                       "hooks, attributes with defaults, operands and results.")
    from tdflow.commands._args import add_ops_args

    add_ops_args(p, positional=True)
    p.add_argument("-o", dest="output", default="-", metavar="OUT", help="write to OUT")
    p.add_argument("--html", default=None, metavar="DIR",
                   help="write a static reference site (pages per dialect and op family, "
                   "search) into DIR instead of markdown")


def run(args: argparse.Namespace) -> int:
    import os

    from tdflow.commands._args import context_from_args, op_files, shown_library, write_output
    from tdflow.dialect.docgen import dialect_doc

    library = shown_library(context_from_args(args), args)
    if getattr(args, "html", None):
        from tdflow.pictures.docsite import write_site

        try:
            pages = write_site(library, args.html)
        except OSError as exc:
            from tdflow.core.files import FileAccessError, os_reason

            raise FileAccessError(getattr(exc, "filename", None) or args.html,
                                  f"cannot write: {os_reason(exc)}") from None
        print(f"wrote {len(pages)} pages ({len(library)} ops) to {args.html}; "
              f"open {os.path.join(args.html, 'index.html')}")
        return 0
    files = op_files(args)
    source = " + ".join(os.path.basename(f) for f in files) if len(files) > 1 else None
    write_output(dialect_doc(library, source), args.output)
    return 0
