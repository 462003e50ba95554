"""``tdflow verify``: check programs against the loaded ops, or an op library's hook contract.

    $ tdflow verify prog.mlir                 # against the standard ops
    $ tdflow verify --ops my_ops.td --hooks my_hooks.py a.mlir b.mlir   # standard + yours
    $ tdflow verify --ops my_ops.td --hooks my_hooks.py   # no programs: your hook contract
    $ tdflow verify my_ops.td a.mlir          # a leading FILE.td is an --ops file
    $ tdflow verify tests.mlir --split-input-file --verify-diagnostics   # MLIR-style tests

Every error of every file is reported (``file:line:col``, the source line and a caret); the exit
status is 1 when there is any, 2 for command-line mistakes.

The hook contract of an ``--ops`` library: a declared ``has_*_fn`` flag whose hook is not
registered is a *warning* (any ``--ops`` library may be one you did not write, OneFlow's ops
declare ~1,800 hooks that tdflow has no Python for), an *error* with ``--strict-hooks``; a hook
registered for an op that does not declare it is always an error (it is your hook file's
mistake). The contract is summarised one line per flag; ``--verbose`` lists each op.

In a program, an op built on tdflow/Base.td whose declared hooks have no Python is an error
with a hint to pass ``--hooks`` (a forgotten hooks module). A foreign op (OneFlow's own ``.td``,
whose ``has_*_fn`` bits name OneFlow's C++) is verified by its definition alone, as
``oneflow-opt`` does; a note names the results whose types nothing checked, only when there
are such results. An attribute an op does not declare is a warning (MLIR keeps it as a
discardable attribute), an error with ``--strict-attrs``.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser("verify", help=summary,
                       description="Verify PROGRAM.mlir files against the standard ops plus "
                       "the --ops libraries. Without programs, verify the --ops libraries "
                       "themselves (the standard ops without any): every has_*_fn flag has "
                       "its hook and every hook its flag.")
    from tdflow.commands._args import add_ops_args, add_strict_attrs_arg, add_testing_args

    add_ops_args(p)
    add_strict_attrs_arg(p)
    p.add_argument("programs", nargs="*", metavar="PROGRAM.mlir",
                   help="programs to verify ('-' for stdin)")
    add_testing_args(p)
    p.add_argument("--strict-hooks", action="store_true",
                   help="a declared has_*_fn flag without its hook is an error, not a warning")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="list every op of the hook contract's problems, not only the counts")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")


def run(args: argparse.Namespace) -> int:
    from tdflow.commands._args import context_from_args, usage

    leading = []
    while args.programs and args.programs[0].endswith(".td"):
        # DESIGN.md's form: `tdflow verify FILE.td [PROGRAM...]`
        leading.append(args.programs.pop(0))
    args.ops_files = leading + args.ops_files
    if args.programs.count("-") > 1:
        return usage("standard input ('-') can be read only once")
    context = context_from_args(args)
    _check_signatures(context)
    # a rule whose C++ piece has no Python stand-in is found now, like a missing hook
    status = report_missing_natives(context)
    if not args.programs:
        return max(status, _check_contract(context, args))
    from tdflow.core.gc_pause import gc_paused

    for path in args.programs:
        # Each file is reported on its own: one that is missing or broken does not hide the
        # errors of the others. What parsing makes stays alive while the file is verified:
        # the cyclic GC would walk it again and again and free nothing.
        with gc_paused():
            status = max(status, _verify_file(path, context, args))
    return status


def missing_native_diagnostics(context) -> list:
    """One error per rewrite rule of ``context`` whose ``NativeCodeCall`` or ``CPred``
    constraint has no Python function registered (``@tdflow.native``), at the rule's record.

    >>> from tdflow.dialect.context import standard_context
    >>> missing_native_diagnostics(standard_context())   # the standard rules' are built in
    []
    """
    from tdflow.dialect.ir.core import Location
    from tdflow.dialect.ir.diagnostics import Diagnostic
    from tdflow.dialect.patterns.native import missing_natives
    from tdflow.dialect.patterns.native_registry import natives_of

    out = []
    for pattern, record in missing_natives(getattr(context, "patterns", ()),
                                           natives_of(context)):
        loc = pattern.loc
        out.append(Diagnostic(
            f"pattern '{pattern.name}' needs a Python function for '{record}' (a C++ "
            f"NativeCodeCall or CPred constraint); register one with "
            f"@tdflow.native({record!r}) in a hooks module and pass it with --hooks FILE.py",
            Location(loc.file, loc.line, loc.col) if loc is not None else None))
    return out


def report_missing_natives(context) -> int:
    """Print :func:`missing_native_diagnostics` (stderr); 1 when there are any, else 0."""
    from tdflow.commands.output import print_diagnostic
    from tdflow.dialect.ir.diagnostics import DiagnosticError

    diags = missing_native_diagnostics(context)
    if diags:
        print_diagnostic(DiagnosticError(diags).render())
    return 1 if diags else 0


def _check_signatures(context) -> None:
    """Parse every user op's ``signature`` field (a bad line is a TdError at its place in the
    ``.td``, as ``tdflow.load_ops`` reports it); the functional API lives in the runtime, which
    the dialect layer that loaded the context must not import."""
    with_signatures = [op for op in getattr(context, "user_ops", lambda: [])() if op.signatures]
    if not with_signatures:
        return  # the runtime (numpy and all) is not imported for nothing: start-up time
    from tdflow.runtime.functional import op_signatures

    for op in with_signatures:
        op_signatures(op)


def _verify_file(path: str, context, args: argparse.Namespace) -> int:
    from functools import partial

    from tdflow.commands.output import print_diagnostic
    from tdflow.core.files import FileAccessError, read_input
    from tdflow.dialect.ir import DiagnosticError, verify_module
    from tdflow.dialect.ir.source import decode_source
    from tdflow.dialect.ir.split_input import check_chunks

    from .programs import is_onnx_path, onnx_context_for, verify_onnx

    name = "<stdin>" if path == "-" else path
    if is_onnx_path(path):
        return verify_onnx(path, context, args.quiet)
    try:
        text = decode_source(read_input(path), name)
    except (DiagnosticError, FileAccessError) as exc:
        print_diagnostic(exc.render())
        return 1
    context = onnx_context_for(context, text)
    # as_parsed: check_chunks verifies each module as the parser made it
    results = check_chunks(text, name, partial(verify_module, dialect=context,
                                               strict_attrs=args.strict_attrs, as_parsed=True),
                           split=args.split_input_file,
                           verify_diagnostics=args.verify_diagnostics)
    for r in results:
        if r.diagnostics:
            print_diagnostic(DiagnosticError(r.diagnostics).render())
    if any(r.failed for r in results):
        return 1
    modules = [r.module for r in results if r.module is not None]
    if not args.verify_diagnostics:
        # With --verify-diagnostics every diagnostic is one the file expects or a mismatch:
        # the note below is neither, so it is left out.
        for module in modules:
            note = unchecked_results_note(module, context)
            if note is not None:
                print_diagnostic(note.render())
    if not args.quiet:
        n = sum(len(f.body) for m in modules for f in m.funcs)
        if args.verify_diagnostics:
            print(f"{name}: diagnostics as expected ({len(results)} chunk(s))")
        else:
            print(f"{name}: verified ({n} operations)")
    return 0


def unchecked_results_note(module, dialect):
    """A note naming the results of ``module``'s ops whose types nothing checks (no inference
    hook, formula or type-determining traits: ``op_verify.results_checked``), at the first
    such op; ``None`` when every result was checked. Only foreign ops (OneFlow's own ``.td``)
    can be verified this way: a tdflow op whose declared hooks are missing is an error."""
    from tdflow.dialect.ir import Diagnostic
    from tdflow.dialect.op_verify import results_checked

    unchecked = []
    first = None
    declared = False
    checked: dict[str, bool] = {}  # op name -> unknown, or its results are checked
    for func in module.funcs:
        # the function's distinct op names first: most programs use no op whose results go
        # unchecked, and then their ops need not be looked at one by one
        op_names = {op.name for op in func.body}
        for name in op_names - checked.keys():
            opdef = dialect.ops.get(name)
            checked[name] = opdef is None or results_checked(dialect, opdef)
        if all(checked[name] for name in op_names):
            continue
        for op in func.body:
            ok = checked.get(op.name)
            if ok is None:
                opdef = dialect.ops.get(op.name)
                ok = checked[op.name] = opdef is None or results_checked(dialect, opdef)
            if ok or not op.results:
                continue
            opdef = dialect.ops[op.name]
            first = first or op
            declared = declared or opdef.declares("infer_logical_tensor_desc")
            names = ", ".join(f"%{r.name}" if r.name else f"#{i}"
                              for i, r in enumerate(op.results))
            unchecked.append(f"{names} ('{op.name}', line {op.loc.line})"
                             if op.loc.line > 0 else f"{names} ('{op.name}')")
    if not unchecked:
        return None
    shown = "; ".join(unchecked[:10]) + (f"; and {len(unchecked) - 10} more"
                                         if len(unchecked) > 10 else "")
    hint = ("; their definitions are verified as written (ODS only, as oneflow-opt does): "
            "--hooks FILE.py with their infer_logical_tensor_desc hooks checks the result "
            "types too" if declared else "")
    return Diagnostic(f"result types not checked, their ops have no infer_logical_tensor_desc "
                      f"hook: {shown}{hint}", first.loc, severity="note")


def _check_contract(context, args: argparse.Namespace) -> int:
    from tdflow.commands._args import shown_library
    from tdflow.commands.output import print_diagnostic
    from tdflow.dialect.ir.core import Location
    from tdflow.dialect.ir.diagnostics import Diagnostic, DiagnosticError
    from tdflow.dialect.opdef import FLAG_TO_HOOK

    dialect = shown_library(context, args)
    problems = dialect.contract_problems()
    grad_line, grad_diags = _gradient_summary(context, dialect, args)
    if not problems:
        if not args.quiet:
            print(f"{dialect.path}: {len(dialect)} ops; every declared hook is registered and "
                  f"every hook is declared")
        if grad_line:
            print(grad_line)
        if grad_diags:
            print_diagnostic(DiagnosticError(grad_diags).render())
        return 1 if any(d.severity == "error" for d in grad_diags) else 0
    missing = [p for p in problems if p[1] in p[0].hooks]  # declared flag, no hook
    undeclared = [p for p in problems if p[1] not in p[0].hooks]
    if not args.quiet or missing:
        print(f"{dialect.path}: {len(dialect)} ops; the hook contract, per flag:")
        lacking = {(op.name, flag) for op, flag, _, _ in missing}
        for flag in FLAG_TO_HOOK:
            declaring = [op for op in dialect.ops.values() if flag in op.hooks]
            if not declaring:
                continue
            served = sum(1 for op in declaring if op.name in dialect.served_by
                         and (op.name, flag) not in lacking)
            absent = sum(1 for op in declaring if (op.name, flag) in lacking)
            have = len(declaring) - absent
            print(f"  {flag}: {len(declaring)} ops declare it, {have} have a hook"
                  f"{f' ({served} served by standard ops)' if served else ''}, {absent} missing")
    if grad_line:
        print(grad_line)
    severity = "error" if args.strict_hooks else "warning"

    def located(op, message: str, sev: str) -> Diagnostic:
        loc = op.location
        return Diagnostic(message, Location(loc.file, loc.line, loc.col) if loc else None,
                          severity=sev)

    diags = [located(op, m, "error") for op, _, _, m in undeclared]
    if args.verbose:
        diags += [located(op, m, severity) for op, _, _, m in missing]
    elif missing:
        ops = len({op.name for op, *_ in missing})
        diags.append(Diagnostic(
            f"{len(missing)} declared hooks of {ops} ops are not registered (--verbose lists "
            f"them; `tdflow gen-hooks` writes skeletons"
            f"{'' if args.strict_hooks else '; --strict-hooks makes them errors'})",
            Location(str(dialect.path), 0, 0), severity=severity))
    diags += grad_diags
    print_diagnostic(DiagnosticError(sorted(diags, key=lambda d: d.severity != "error")).render())
    return 1 if any(d.severity == "error" for d in diags) else 0


def _gradient_summary(context, dialect, args: argparse.Namespace) -> tuple[str, list]:
    """One line on the library's gradients (empty under --quiet when all is well), and
    diagnostics: errors for ``grad`` fields that do not check, and (warnings; errors under
    --strict-hooks) for differentiable ops with no gradient."""
    from tdflow.dialect.grad import gradient_report
    from tdflow.dialect.ir.core import Location
    from tdflow.dialect.ir.diagnostics import Diagnostic

    counts, missing, errors = gradient_report(context, dialect.ops.values())
    line = ""
    if not args.quiet or missing or errors:
        have = ", ".join(f"{n} from {'formulas' if k == 'formula' else k + 's'}"
                         for k, n in sorted(counts.items()))
        line = (f"  gradients: {sum(counts.values())} ops have one ({have or 'none'}), "
                f"{len(missing)} differentiable ops have none")
    diags = []
    for e in errors:
        file = getattr(e, "file", None)
        where = Location(file, getattr(e, "line", 0), getattr(e, "col", 0)) if file else None
        diags.append(Diagnostic(getattr(e, "message", str(e)), where))
    severity = "error" if args.strict_hooks else "warning"
    shown = missing if args.verbose else missing[:0]
    for op in shown:
        loc = op.location
        diags.append(Diagnostic(
            f"op '{op.name}' is differentiable but has no gradient: add a `grad` field, a "
            f"formula, a @grad_rule(\"{op.name}\") or the NoGrad trait",
            Location(loc.file, loc.line, loc.col) if loc else None, severity=severity))
    if missing and not args.verbose:
        diags.append(Diagnostic(
            f"{len(missing)} differentiable ops have no gradient (--verbose lists them; give "
            f"each a `grad` field, a formula, a @grad_rule or the NoGrad trait"
            f"{'' if args.strict_hooks else '; --strict-hooks makes them errors'})",
            Location(str(dialect.path), 0, 0), severity=severity))
    return line, diags
