"""``tdflow lower``: run the lowering pipeline on a program; print the IR and the plan.

    $ tdflow lower examples/mlp.mlir
    $ tdflow lower examples/mlp.mlir --pipeline "infer-shapes,canonicalize" --print-ir-after-all
    $ tdflow lower examples/cnn.mlir --print-ir-after fuse-elementwise --timing
    $ tdflow lower prog.mlir --ops my_ops.td --hooks my_hooks.py   # a program using your ops
    $ tdflow lower prog.mlir --nproc 4 [--rank 1]   # SBP of every value, boxing, rank 1's plan

Without ``--pipeline`` the standard one runs (``infer-shapes,canonicalize,fuse-elementwise,
select-kernels{device=cpu},plan-memory``). User errors are diagnostics (exit 1).
"""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser(
        "lower", help=summary,
        description="Parse and verify PROGRAM.mlir, run the pass pipeline, print the resulting "
        "IR and, when the pipeline ends in plan-memory, the ExecutablePlan.",
    )
    p.add_argument("program", metavar="PROGRAM.mlir", nargs="?",
                   help="the program to lower ('-' for stdin)")
    p.add_argument("--pipeline", default=None, metavar="P",
                   help="comma-separated passes, options in braces "
                   "(default: the standard pipeline for --device)")
    p.add_argument("--device", default=None,
                   help="target device (default: cpu; cuda with --emit cuda)")
    p.add_argument("--emit", choices=("ir", "cuda"), default="ir",
                   help="what to print: the lowered IR and plan (ir, the default) or the "
                   "generated CUDA source of the plan's launches (cuda)")
    p.add_argument("--entry", default=None, metavar="NAME",
                   help="plan only function NAME (default: every function)")
    p.add_argument("--print-ir-after-all", action="store_true",
                   help="print the IR after every pass")
    p.add_argument("--print-ir-after", action="append", default=[], metavar="PASS",
                   help="print the IR after PASS (repeatable)")
    p.add_argument("--timing", action="store_true", help="report the time each pass takes")
    p.add_argument("--no-verify-each", action="store_true",
                   help="do not verify the IR between passes")
    p.add_argument("--nproc", type=int, default=None, metavar="N",
                   help="lower for N ranks: print the SBP infer-sbp chose for every value and "
                   "the boxing ops it inserted, then the IR and plan of one rank (--rank)")
    p.add_argument("--rank", type=int, default=None, metavar="R",
                   help="with --nproc: the rank whose physical program is lowered (default 0; "
                   "--pipeline replaces that rank's pipeline, infer-sbp and physicalize included)")
    p.add_argument("--list-passes", action="store_true",
                   help="list the available passes and exit")
    from tdflow.commands._args import add_ops_args, add_strict_attrs_arg

    add_ops_args(p)
    add_strict_attrs_arg(p)


def run(args: argparse.Namespace) -> int:
    from tdflow.commands.output import print_diagnostic

    if args.list_passes:
        return _list_passes()
    if args.program is None:
        sys.stderr.write("usage: tdflow lower PROGRAM.mlir [options]\n"
                         "tdflow lower: error: the following arguments are required: "
                         "PROGRAM.mlir\n")
        return 2
    from tdflow.commands._args import check_ops_args, context_from_args
    from tdflow.core.files import read_input
    from tdflow.dialect.ir import parse_module, print_module

    check_ops_args(args)
    device = args.device or ("cuda" if args.emit == "cuda" else "cpu")
    if args.emit == "cuda" and device.split(":")[0] not in ("cuda", "cudasim"):
        sys.stderr.write("usage: tdflow lower PROGRAM.mlir --emit cuda [--device cuda]\n"
                         f"tdflow lower: error: --emit cuda needs a GPU device (cuda or "
                         f"cudasim), not {device!r}\n")
        return 2
    from .programs import is_onnx_path, load_onnx, lowered, with_onnx

    name = "<stdin>" if args.program == "-" else args.program
    module = (load_onnx(args.program) if is_onnx_path(args.program)
              else parse_module(read_input(args.program), name))
    if args.strict_attrs:  # the pipeline's own verification keeps them warnings
        from tdflow.dialect.ir import DiagnosticError, verify_module

        errors = [d for d in verify_module(module, with_onnx(context_from_args(args), module),
                                           strict_attrs=True) if d.severity == "error"]
        if errors:
            raise DiagnosticError(errors)
    module = lowered(module, with_onnx(context_from_args(args), module))
    pipeline = args.pipeline
    if args.rank is not None and args.nproc is None:
        sys.stderr.write("usage: tdflow lower PROGRAM.mlir --nproc N [--rank R]\n"
                         "tdflow lower: error: --rank needs --nproc\n")
        return 2
    if args.nproc is not None:
        args.rank = 0 if args.rank is None else args.rank
        bad = _check_ranks(args.nproc, args.rank)
        if bad:
            sys.stderr.write(f"usage: tdflow lower PROGRAM.mlir --nproc N [--rank R]\n"
                             f"tdflow lower: error: {bad}\n")
            return 2
        _print_sbp(module, args, device)
        if pipeline is None:
            from tdflow.lowering import sbp_pipeline

            pipeline = sbp_pipeline(args.nproc, args.rank, device)
    context = context_from_args(args)
    options = dict(verify_each=not args.no_verify_each, print_ir_after_all=args.print_ir_after_all,
                   print_ir_after=args.print_ir_after, timing=args.timing, stream=sys.stdout)
    table = data_table(context, device)
    if table is not None:
        from tdflow.lowering.pass_manager import lower_module

        result = lower_module(module, context, device, args.entry, pipeline, lambda: table,
                              **options)
    else:
        from tdflow.runtime.compiled import lower

        result = lower(module, device, args.entry, pipeline, ops=context, **options)
    for w in result.context.warnings:
        print_diagnostic(w.render() if hasattr(w, "render") else f"warning: {w}")
    if args.emit == "cuda":
        print(cuda_source(result.plans.values(), device, context_from_args(args)), end="")
        return 0
    print("// -----// IR after lowering //----- //")
    print(print_module(result.module).rstrip("\n"))
    for plan in result.plans.values():
        print()
        print_plan(plan)
    return 0


def data_table(context, device: str):
    """The shipped kernel-selection table (:mod:`tdflow.lowering.kernel_data`) when it is
    exactly ``context``'s kernels on ``device`` (the standard ops alone, on the CPU), else
    ``None`` (then the runtime builds the table: numpy and the kernel modules, ~100 ms). A
    kernel's code (constant folding) still comes from the runtime, loaded on first use.

    >>> from tdflow.dialect.context import standard_context
    >>> data_table(standard_context(), "cpu").select("tdflow.exp", ("f32",)).name
    'cpu.exp'
    >>> data_table(standard_context(), "cudasim") is None
    True
    """
    from tdflow.dialect.context import standard_context

    if device != "cpu" or context is not standard_context():
        return None
    from tdflow.lowering.kernel_data import DataKernelTable, shipped_cpu_table

    def load():
        from tdflow.runtime.op_kernels import kernel_table_for

        return kernel_table_for(context, device)

    return DataKernelTable(shipped_cpu_table(), load)


def _check_ranks(nproc: int, rank: int) -> str | None:
    if nproc < 1:
        return f"--nproc must be >= 1, not {nproc}"
    if not 0 <= rank < nproc:
        return f"--rank {rank} is outside 0..{nproc - 1} (--nproc {nproc})"
    return None


def _print_sbp(module, args: argparse.Namespace, device: str) -> None:
    """The logical program after ``infer-sbp`` and every value's SBP (on a copy of ``module``)."""
    from tdflow.commands._args import context_from_args
    from tdflow.dialect.ir import print_module
    from tdflow.lowering.sbp_report import sbp_report
    from tdflow.runtime.compiled import lower

    result = lower(module.clone(), device, args.entry, f"infer-sbp{{nproc={args.nproc}}}",
                   ops=context_from_args(args), verify_each=not args.no_verify_each)
    print(f"// -----// IR after infer-sbp{{nproc={args.nproc}}} //----- //")
    print(print_module(result.module).rstrip("\n"))
    print(sbp_report(result.module, args.nproc))
    print(f"// -----// rank {args.rank} of {args.nproc} //----- //")


def cuda_source(plans, device: str, context=None) -> str:
    """The CUDA translation unit of every launch of ``plans`` (lowered for a GPU device), after
    a comment per launch naming its op, location, kernels, launch shapes and the values of its
    scalar arguments.

    Each op's code is generated once per shapes; nvcc compiles this very text."""
    from tdflow.lowering.cuda import translation_unit
    from tdflow.lowering.cuda.common import prelude
    from tdflow.runtime.op_kernels import kernel_table_for
    from tdflow.runtime.plan_codes import plan_codes

    table = kernel_table_for(context, device)
    head, codes = [], []
    for plan in plans:
        head.append(f"// plan @{plan.name} on {plan.device}")
        found = plan_codes(plan, lambda n: table.get(n).fn)
        for i, (ln, code) in enumerate(zip((*plan.prologue, *plan.launches), found)):
            shapes = "; ".join(f"{k.kernel}<<<{_dim(k.grid)}, {_dim(k.block)}>>>"
                               for k in code.launches)
            head.append(f"//   launch {i}: {ln.op} at {ln.loc}: {shapes}")
            if code.scalars:  # values passed at launch, not in the source below
                head.append("//     scalar arguments: " + ", ".join(
                    f"s{k} = {v!r} ({dt})" for k, (dt, v) in enumerate(code.scalars)))
        codes.extend(found)
    return "\n".join(head) + "\n" + translation_unit(codes, prelude("nvcc"))


def _dim(d) -> str:
    return "(" + ", ".join(map(str, d)) + ")"


def _list_passes() -> int:
    from tdflow.lowering.pass_manager import pass_class
    from tdflow.lowering.passes import PASSES

    for name in PASSES:
        cls = pass_class(name)
        opts = ",".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                        for k, v in cls.options.items())
        print(f"{name:18s} {cls.summary}" + (f"  {{{opts}}}" if opts else ""))
    return 0


def print_plan(plan) -> None:
    """Render an ``ExecutablePlan`` as rich tables: summary, buffers, arguments, launches
    (:mod:`tdflow.commands.table`: rich itself only where the output is styled)."""
    from tdflow.commands.table import Table, print_markup
    from tdflow.lowering.plan import format_bytes

    saved = plan.peak_bytes_before - plan.peak_bytes_after
    pct = 100.0 * saved / plan.peak_bytes_before if plan.peak_bytes_before else 0.0
    print_markup(f"[bold]plan @{plan.name}[/bold] on {plan.device}: {len(plan.buffers)} buffers, "
                 f"{len(plan.prologue)} prologue + {len(plan.launches)} launches; buffer bytes "
                 f"{format_bytes(plan.peak_bytes_before)} -> "
                 f"{format_bytes(plan.peak_bytes_after)} after plan-memory (-{pct:.0f}%)", 120)
    roles: dict[int, str] = {}
    for a in plan.arguments:
        roles[a.buffer] = f"arg %{a.name}" + (" (donated)" if a.donated else "")
    for i, r in enumerate(plan.results):
        roles.setdefault(r.buffer, f"result {i}")
    for ln in plan.prologue:
        for b in ln.outputs:
            roles.setdefault(b, "constant")
    bt = Table(title="buffers", title_justify="left")
    for col in ("buf", "shape", "dtype", "bytes", "role"):
        bt.add_column(col, justify="right" if col in ("buf", "bytes") else "left")
    for b in plan.buffers:
        bt.add_row(str(b.id), "x".join(map(str, b.shape)) or "scalar", b.dtype,
                   format_bytes(b.nbytes), roles.get(b.id, "temporary"))
    bt.print(120)
    lt = Table(title="launches", title_justify="left")
    for col in ("#", "kernel", "inputs", "outputs", "in-place", "op", "loc"):
        lt.add_column(col)
    rows = [("init", ln) for ln in plan.prologue] + [(str(i), ln)
                                                      for i, ln in enumerate(plan.launches)]
    for tag, ln in rows:
        lt.add_row(tag, ln.kernel, ", ".join(f"buf{b}" for b in ln.inputs),
                   ", ".join(f"buf{b}" for b in ln.outputs),
                   ", ".join(f"out{o}<-in{i}" for o, i in ln.in_place), ln.op, ln.loc)
    lt.print(120)
    print_markup("returns " + ", ".join(f"buf{r.buffer}" for r in plan.results), 120)
