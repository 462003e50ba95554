"""``tdflow verify``: check programs against a dialect, or the dialect's hook contract.

    $ tdflow verify prog.mlir                 # against the standard ops.td
    $ tdflow verify --td my_ops.td -I inc a.mlir b.mlir   # or: tdflow verify my_ops.td a.mlir
    $ tdflow verify --td my_ops.td --hooks my_hooks.py   # no programs: the hook contract

Every error of every file is reported (``file:line:col``, the source line and a caret); the exit
status is 1 when there is any, 2 for command-line mistakes.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="verify programs (or, without any, the dialect's hooks)",
                       description="Verify PROGRAM.mlir files against the dialect of --td "
                       "(default: the standard ops.td). Without programs, verify the dialect "
                       "itself: every has_*_fn flag has its hook and every hook its flag.")
    from tdflow.dialect.cli_support import add_td_args

    add_td_args(p, positional=False)
    p.add_argument("programs", nargs="*", metavar="PROGRAM.mlir",
                   help="programs to verify ('-' for stdin)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands import print_diagnostic
    from tdflow.dialect.cli_support import (
        FileAccessError,
        UsageError,
        load_from_args,
        read_input,
        usage,
    )

    if args.td is None and args.programs and args.programs[0].endswith(".td"):
        args.td = args.programs.pop(0)  # DESIGN.md's form: `tdflow verify FILE.td [PROGRAM...]`
    if args.programs.count("-") > 1:
        return usage("standard input ('-') can be read only once")
    try:
        dialect = load_from_args(args)
    except UsageError as exc:
        return usage(str(exc))
    if not args.programs:
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
        errors = [d for d in verify_module(module, dialect)]
        if errors:
            print_diagnostic(DiagnosticError(errors).render())
            if any(d.severity == "error" for d in errors):
                status = 1
                continue
        if not args.quiet:
            n = sum(len(f.body) for f in module.funcs)
            print(f"{name}: verified ({n} operations)")
    return status
