"""``tdflow opt``: parse, verify, optionally rewrite (``--pipeline``) and print a program.

    $ tdflow opt prog.mlir               # custom func/return, generic ops
    $ tdflow opt prog.mlir --generic     # everything generic: what mlir-opt prints
    $ tdflow opt prog.mlir --ops my_ops.td --hooks my_hooks.py   # a program using your ops
    $ tdflow opt tests.mlir --split-input-file --verify-diagnostics   # MLIR-style tests
    $ tdflow opt prog.mlir --ops rules.td --hooks h.py --pipeline apply-patterns   # DRR rules
    $ tdflow opt prog.mlir --pipeline canonicalize --print-ir-after-all   # which rule fired where

With ``--pipeline`` the passes run on the verified program (as ``mlir-opt -pass-pipeline``) and
the result is printed; ``--print-ir-after-all`` writes each pass's IR, followed by a comment
per rewrite naming the pattern and the op's location, to stderr (as mlir-opt does).
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("opt", help=summary,
                       description="Parse PROGRAM.mlir, verify it against the standard ops "
                       "plus the --ops libraries and print it back.")
    from tdflow.commands._args import add_ops_args, add_strict_attrs_arg, add_testing_args

    add_ops_args(p)
    add_strict_attrs_arg(p)
    p.add_argument("program", metavar="PROGRAM.mlir", help="the program ('-' for stdin)")
    p.add_argument("--generic", action="store_true",
                   help="print func.func and return in generic form too")
    p.add_argument("--no-verify", action="store_true", help="skip verification")
    p.add_argument("--pipeline", default=None, metavar="P",
                   help="passes to run before printing, e.g. apply-patterns or canonicalize")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="with --pipeline: print the IR after every pass, and which rewrite "
                   "pattern fired where, to stderr")
    add_testing_args(p)
    p.add_argument("-o", dest="output", default="-", metavar="OUT", help="write to OUT")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands._args import check_ops_args, context_from_args, write_output
    from tdflow.core.files import read_input
    from tdflow.core.gc_pause import gc_paused
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.dialect.ir.parser import parse_module
    from tdflow.dialect.ir.printer import print_module

    check_ops_args(args)  # a usage mistake is one even with --no-verify
    name = "<stdin>" if args.program == "-" else args.program
    if args.split_input_file or args.verify_diagnostics:
        return _run_chunks(args, name)
    # Every object parsing makes stays alive until the program is printed: the cyclic GC
    # would walk them all again and again and free nothing (2 s of 6 on a 100k-op program).
    # Passes make garbage, so they run with it on.
    with gc_paused():
        # A DiagnosticError (syntax, bytes that are not UTF-8) is rendered by the CLI (exit 1).
        module = parse_module(read_input(args.program), name)
        if not args.no_verify:
            # as_parsed: nothing has changed the module yet (the dialect's check per distinct
            # op text, not per op)
            diags = verify_module(module, context_from_args(args),
                                  strict_attrs=args.strict_attrs, as_parsed=True)
            if any(d.severity == "error" for d in diags):
                raise DiagnosticError(diags)
            if diags:  # warnings (undeclared attributes) go to stderr, as mlir-opt's do
                from tdflow.commands.output import print_diagnostic

                print_diagnostic(DiagnosticError(diags).render())
        if not args.pipeline:
            write_output(print_module(module, generic=args.generic, as_parsed=True), args.output)
            return 0
    status = _run_pipeline(args, module)
    if status:
        return status
    write_output(print_module(module, generic=args.generic), args.output)
    return 0


def _run_pipeline(args: argparse.Namespace, module) -> int:
    """Run ``--pipeline`` on ``module`` in place; exit status 1 when a rule lacks its native
    (reported before anything is rewritten) or a pass fails."""
    import sys

    from tdflow.commands._args import context_from_args
    from tdflow.commands.output import print_diagnostic
    from tdflow.lowering.pass_manager import PassManager
    from tdflow.runtime.op_kernels import kernel_table_for

    from .verify import report_missing_natives

    context = context_from_args(args)
    if report_missing_natives(context):
        return 1
    pm = PassManager.parse(args.pipeline, dialect=context,
                           kernel_table=kernel_table_for(context, "cpu"),
                           print_ir_after_all=args.print_ir_after_all, stream=sys.stderr)
    result = pm.run(module)
    for w in result.context.warnings:
        print_diagnostic(w.render() if hasattr(w, "render") else f"warning: {w}")
    return 0


def _run_chunks(args: argparse.Namespace, name: str) -> int:
    """mlir-opt's way with the testing flags: every chunk is checked and the printed ones are
    written separated by ``// -----``; the diagnostics (or, with ``--verify-diagnostics``, the
    mismatches with the expected ones) go to stderr; exit 1 if any chunk failed."""
    from functools import partial

    from tdflow.commands._args import context_from_args, write_output
    from tdflow.commands.output import print_diagnostic
    from tdflow.core.files import read_input
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.dialect.ir.printer import print_module
    from tdflow.dialect.ir.source import decode_source
    from tdflow.dialect.ir.split_input import check_chunks, join_outputs

    text = decode_source(read_input(args.program), name)
    verify = None if args.no_verify else partial(verify_module, dialect=context_from_args(args),
                                                 strict_attrs=args.strict_attrs, as_parsed=True)
    results = check_chunks(text, name, verify, split=args.split_input_file,
                           verify_diagnostics=args.verify_diagnostics)
    for r in results:
        if r.diagnostics:
            print_diagnostic(DiagnosticError(r.diagnostics).render())
    outputs = [None if r.module is None else print_module(r.module, generic=args.generic,
                                                          as_parsed=True)
               for r in results]
    if args.split_input_file:
        write_output(join_outputs(outputs), args.output)
    elif outputs[0] is not None:
        write_output(outputs[0], args.output)
    return 1 if any(r.failed for r in results) else 0
