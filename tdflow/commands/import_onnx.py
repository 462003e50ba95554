"""``tdflow import-onnx``: an ONNX model as a program of ``onnx.*`` ops (MLIR text).

    $ tdflow import-onnx model.onnx -o model.mlir      # onnx.* ops, ONNX names and locations
    $ tdflow import-onnx model.onnx --lower            # the tdflow.* program it lowers to
    $ tdflow run model.mlir                            # or directly: tdflow run model.onnx

Every problem with the model (not ONNX, fails ONNX's checker, unknown ops, bad attributes) is
reported at once, each naming its node, and the command exits 1.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("import-onnx", help=summary,
                       description="Import MODEL.onnx as MLIR text of onnx.* ops (the onnx "
                       "dialect generated from ONNX's schemas).")
    p.add_argument("model", metavar="MODEL.onnx", help="the model ('-' for stdin)")
    p.add_argument("--lower", action="store_true",
                   help="print the tdflow.* program the model lowers to instead")
    p.add_argument("-o", dest="output", default="-", metavar="OUT", help="write to OUT")
    p.add_argument("--no-locs", action="store_true",
                   help="leave out the loc(\"node name\") of each op")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands._args import write_output
    from tdflow.dialect.ir.printer import print_module

    from .programs import load_onnx

    module = load_onnx(args.model, lower=args.lower)
    write_output(print_module(module, locs=not args.no_locs), args.output)
    return 0
