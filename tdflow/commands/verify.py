"""``tdflow verify``: check programs against the loaded ops, or an op library's hook contract.

    $ tdflow verify prog.mlir                 # against the standard ops
    $ tdflow verify --ops my_ops.td --hooks my_hooks.py a.mlir b.mlir   # standard + yours
    $ tdflow verify --ops my_ops.td --hooks my_hooks.py   # no programs: your hook contract
    $ tdflow verify my_ops.td a.mlir          # a leading FILE.td is an --ops file

Every error of every file is reported (``file:line:col``, the source line and a caret); the exit
status is 1 when there is any, 2 for command-line mistakes.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="verify programs (or, without any, the ops' hooks)",
                       description="Verify PROGRAM.mlir files against the standard ops plus "
                       "the --ops libraries. Without programs, verify the --ops libraries "
                       "themselves (the standard ops without any): every has_*_fn flag has "
                       "its hook and every hook its flag.")
    from tdflow.dialect.cli_support import add_ops_args

    add_ops_args(p)
    p.add_argument("programs", nargs="*", metavar="PROGRAM.mlir",
                   help="programs to verify ('-' for stdin)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands import print_diagnostic
    from tdflow.dialect.cli_support import (
        FileAccessError,
        context_from_args,
        read_input,
        shown_library,
        usage,
    )

    leading = []
    while args.programs and args.programs[0].endswith(".td"):
        # DESIGN.md's form: `tdflow verify FILE.td [PROGRAM...]`
        leading.append(args.programs.pop(0))
    args.ops_files = leading + args.ops_files
    if args.programs.count("-") > 1:
        return usage("standard input ('-') can be read only once")
    context = context_from_args(args)
    if not args.programs:
        dialect = shown_library(context, args)
        diags = dialect.contract_diagnostics()
        if diags:
            from tdflow.dialect.ir.diagnostics import DiagnosticError
            print_diagnostic(DiagnosticError(diags).render())
            return 1
        if not args.quiet:
            print(f"{dialect.path}: {len(dialect)} ops; every declared hook is registered and "
                  f"every hook is declared")
        return 0

    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.dialect.ir.parser import parse_module

    status = 0
    for path in args.programs:
        # Each file is reported on its own: one that is missing or broken does not hide the
        # errors of the others.
        name = "<stdin>" if path == "-" else path
        try:
            module = parse_module(read_input(path), name)
        except (DiagnosticError, FileAccessError) as exc:
            print_diagnostic(exc.render())
            status = 1
            continue
        errors = [d for d in verify_module(module, context)]
        if errors:
            print_diagnostic(DiagnosticError(errors).render())
            if any(d.severity == "error" for d in errors):
                status = 1
                continue
        if not args.quiet:
            n = sum(len(f.body) for f in module.funcs)
            print(f"{name}: verified ({n} operations)")
    return status
