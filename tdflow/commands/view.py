"""``tdflow view``: a program as an interactive graph in one self-contained HTML file.

    $ tdflow view examples/gpt.mlir                 # writes gpt.html
    $ tdflow view examples/cnn.mlir --lowered -o cnn.html
    $ tdflow view model.onnx --lowered --device cudasim   # kernels with their CUDA source
    $ tdflow view prog.mlir --ops my_ops.td --hooks my_hooks.py

Ops are nodes coloured by dialect, values are edges labelled with shape and dtype; pan, zoom,
search and a side panel with attributes, the op's ``.td`` documentation and, ``--lowered``,
its kernel launch. The layout is Graphviz's ``dot`` (without it: one line, exit 1).
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("view", help=summary,
                       description="Lay out PROGRAM (.mlir, or .onnx) with Graphviz's dot and "
                       "write one self-contained HTML page: pan, zoom, search, a side panel "
                       "with attributes, op documentation and (--lowered) kernels.")
    p.add_argument("program", metavar="PROGRAM", help="a .mlir program or an .onnx model")
    p.add_argument("-o", dest="output", default=None, metavar="OUT.html",
                   help="where to write the page (default: PROGRAM's name with .html, here)")
    p.add_argument("--lowered", action="store_true",
                   help="show the program after lowering: fused groups and kernel launches")
    p.add_argument("--device", default="cpu",
                   help="the device to lower for with --lowered (default: cpu; cuda and "
                   "cudasim also show each kernel's CUDA source)")
    p.add_argument("--no-edge-labels", action="store_true",
                   help="leave the types off the edges (faster layout of huge programs)")
    from tdflow.commands._args import add_ops_args

    add_ops_args(p)


def run(args: argparse.Namespace) -> int:
    import os

    from tdflow.pictures.layout import require_dot

    require_dot()  # before any work: without dot there is nothing to draw with
    from tdflow.commands._args import check_ops_args, context_from_args
    from tdflow.core.files import FileAccessError, os_reason, read_input
    from tdflow.dialect.ir import DiagnosticError, parse_module, verify_module
    from tdflow.pictures.view import lowered_view, view_html

    from .programs import is_onnx_path, load_onnx, lowered, with_onnx

    check_ops_args(args)
    name = "<stdin>" if args.program == "-" else args.program
    module = (load_onnx(args.program) if is_onnx_path(args.program)
              else parse_module(read_input(args.program), name))
    context = with_onnx(context_from_args(args), module)
    errors = [d for d in verify_module(module, context) if d.severity == "error"]
    if errors:
        raise DiagnosticError(errors)
    plans = codes = None
    if args.lowered:
        module, plans, codes = lowered_view(lowered(module, context), context, args.device)
    page = view_html(module, context, title=os.path.basename(name), plans=plans, codes=codes,
                     edge_labels=not args.no_edge_labels)
    stem = "program" if args.program == "-" else os.path.splitext(os.path.basename(name))[0]
    out = args.output or (stem or "program") + ".html"
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(page)
    except OSError as exc:
        raise FileAccessError(out, f"cannot write: {os_reason(exc)}") from None
    ops = sum(1 for f in module.funcs for op in f.body if op is not f.body.terminator)
    print(f"wrote {out} ({ops} ops{', lowered' if args.lowered else ''}); open it in a browser")
    return 0
