"""``tdflow run``: compile a program and call one of its functions.

    $ tdflow run examples/mlp.mlir                            # every input random (seed 0)
    $ tdflow run examples/mlp.mlir --input x=x.npy --random-inputs 7 --output out.npz
    $ tdflow run prog.mlir --entry train_step --input w=w.npy --input g=g.npy

Arguments not given with ``--input NAME=FILE.npy`` are filled from a generator seeded by
``--random-inputs SEED`` (default 0), and the run says which. Results are summarised on the
terminal and, with ``--output``, written to an ``.npz`` as ``result0``, ``result1``, ...
User mistakes are diagnostics (exit 1); malformed options exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="compile a program and run one of its functions on given or random inputs",
        description="Compile PROGRAM.mlir for --device and call its first function (or "
        "--entry NAME). Inputs come from --input NAME=FILE.npy; the others are random.",
    )
    p.add_argument("program", metavar="PROGRAM.mlir", help="the program to run")
    p.add_argument("--device", default="cpu", help="device to run on (default: cpu)")
    p.add_argument("--entry", default=None, metavar="NAME",
                   help="the function to call (default: the first one)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="bind argument NAME to the array in FILE.npy (repeatable)")
    p.add_argument("--random-inputs", type=int, default=None, metavar="SEED",
                   help="seed of the generator filling arguments not given (default: 0); "
                   "floats ~ N(0, 0.1^2), integers in [0, 10), booleans fair")
    p.add_argument("--output", default=None, metavar="OUT.npz",
                   help="write the results to OUT.npz as result0, result1, ...")
    p.add_argument("--pipeline", default=None, metavar="P",
                   help="lowering pipeline (default: the standard one for --device)")
    p.add_argument("--values", type=int, default=6, metavar="N",
                   help="how many leading values of each result to show (default: 6)")
    p.add_argument("--repeat", type=int, default=0, metavar="N",
                   help="also call the program N more times and report the time per call")


def _usage(msg: str) -> int:
    sys.stderr.write(f"usage: tdflow run PROGRAM.mlir [options]\ntdflow run: error: {msg}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    from tdflow.commands import print_diagnostic

    bindings: dict[str, str] = {}
    for item in args.input:
        name, eq, path = item.partition("=")
        name = name.strip().lstrip("%")
        if not eq or not name or not path:
            return _usage(f"--input expects NAME=FILE.npy, got {item!r}")
        if name in bindings:
            return _usage(f"--input {name}= given twice")
        bindings[name] = path
    if not os.path.isfile(args.program):
        print_diagnostic(f"error: cannot open program '{args.program}': "
                         f"{'is a directory' if os.path.isdir(args.program) else 'no such file'}")
        return 1

    import numpy as np

    import tdflow
    from tdflow.runtime.executor import ArgumentError, _type_text

    program = tdflow.compile(args.program, device=args.device, entry=args.entry,
                             pipeline=args.pipeline)
    name = program.__name__
    names = list(program.argument_names)
    unknown = sorted(set(bindings) - set(names))
    if unknown:
        raise ArgumentError(f"@{name} has no argument %{unknown[0]}; its arguments are "
                            f"{', '.join('%' + n for n in names)}")
    inputs: dict[str, np.ndarray] = {}
    for name, path in bindings.items():
        try:
            inputs[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            print_diagnostic(f"error: --input {name}={path}: cannot read a .npy array: {exc}")
            return 1
    seed = 0 if args.random_inputs is None else args.random_inputs
    rng = np.random.default_rng(seed)
    filled = []
    for arg, shape, dtype in program.arguments:
        if arg in inputs:
            continue
        if shape is None or None in shape:
            raise ArgumentError(f"@{name}: argument %{arg} has a dynamic shape "
                                f"({_type_text(shape, dtype)}); give it with --input "
                                f"{arg}=FILE.npy")
        inputs[arg] = random_array(rng, shape, dtype)
        filled.append(arg)
    if filled:
        print(f"random inputs (seed {seed}): {', '.join('%' + a for a in filled)}")
    results = program(**inputs)
    results = results if isinstance(results, tuple) else (results,)
    print_results(name, results, args.values)
    if args.repeat > 0:
        import statistics
        import time

        ordered = [inputs[a] for a in names]
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            program(*ordered)
            times.append(time.perf_counter() - start)
        print(f"{args.repeat} calls: median {statistics.median(times) * 1e3:.3f} ms, "
              f"min {min(times) * 1e3:.3f} ms per call")
    if args.output:
        try:
            np.savez(args.output, **{f"result{i}": np.asarray(r) for i, r in enumerate(results)})
        except OSError as exc:
            print_diagnostic(f"error: --output {args.output}: cannot write: {exc.strerror or exc}")
            return 1
        written = args.output if str(args.output).endswith(".npz") else f"{args.output}.npz"
        print(f"wrote {len(results)} result(s) to {written}")
    return 0


def random_array(rng, shape, dtype: str):
    """A random array for an argument: floats ~ N(0, 0.1^2), integers in [0, 10), fair booleans.

    The small scale keeps typical networks (sums over hundreds of inputs) out of saturation.
    """
    import numpy as np

    from tdflow.dialect.types import DTYPES

    dt = DTYPES[dtype]
    if dt.kind == "f":
        return (rng.standard_normal(shape, dtype=np.float64) * 0.1).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(0, 10, size=shape).astype(dt)


def print_results(name: str, results, values: int) -> None:
    """One row per result: shape, dtype, the first values and summary statistics."""
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"@{name} returned {len(results)} result(s)", title_justify="left")
    for col in ("result", "shape", "dtype", "first values", "min", "max", "mean", "std"):
        table.add_column(col, justify="right" if col in ("min", "max", "mean", "std") else "left",
                         no_wrap=True)
    for i, r in enumerate(results):
        r = np.asarray(r)
        flat = r.reshape(-1)
        shown = [f"{v:.4g}" if r.dtype.kind in "fc" else str(v) for v in flat[:values].tolist()]
        head = "[" + ", ".join(shown) + (", ...]" if flat.size > values else "]")
        if flat.size and r.dtype.kind in "fiub":
            f = flat.astype(np.float64)
            stats = [f"{f.min():.4g}", f"{f.max():.4g}", f"{f.mean():.4g}", f"{f.std():.4g}"]
        else:
            stats = ["-"] * 4
        table.add_row(f"result{i}", "x".join(map(str, r.shape)) or "scalar", str(r.dtype), head,
                      *stats)
    Console(highlight=False, width=max(160, Console().width)).print(table)
