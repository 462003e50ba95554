"""``tdflow run``: compile a program and call one of its functions.

    $ tdflow run examples/mlp.mlir                            # every input random (seed 0)
    $ tdflow run examples/mlp.mlir --input x=x.npy --random-inputs 7 --output out.npz
    $ tdflow run prog.mlir --entry train_step --input w=w.npy --input g=g.npy
    $ tdflow run prog.mlir --ops my_ops.td --hooks my_hooks.py   # a program using your ops

Arguments not given with ``--input NAME=FILE.npy`` are filled from a generator seeded by
``--random-inputs SEED`` (default 0), and the run says which. Results are summarised on the
terminal and, with ``--output``, written to an ``.npz`` as ``result0``, ``result1``, ...
User mistakes are diagnostics (exit 1); malformed options exit 2.
"""

from __future__ import annotations

import argparse
import os
import sys


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser(
        "run", help=summary,
        description="Compile PROGRAM.mlir for --device and call its first function (or "
        "--entry NAME). Inputs come from --input NAME=FILE.npy; the others are random.",
    )
    p.add_argument("program", metavar="PROGRAM.mlir", help="the program to run")
    p.add_argument("--device", default="cpu", help="device to run on (default: cpu)")
    p.add_argument("--entry", default=None, metavar="NAME",
                   help="the function to call (default: the first one)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                   help="bind argument NAME to the array in FILE.npy (repeatable)")
    p.add_argument("--random-inputs", type=non_negative_int, default=None, metavar="SEED",
                   help="seed of the generator filling arguments not given (default: 0); "
                   "floats ~ N(0, 0.1^2), integers in [0, 10), booleans fair")
    p.add_argument("--output", default=None, metavar="OUT.npz",
                   help="write the results to OUT.npz as result0, result1, ...")
    p.add_argument("--pipeline", default=None, metavar="P",
                   help="lowering pipeline (default: the standard one for --device)")
    p.add_argument("--values", type=non_negative_int, default=6, metavar="N",
                   help="how many leading values of each result to show (default: 6)")
    p.add_argument("--repeat", type=non_negative_int, default=0, metavar="N",
                   help="also call the program N more times and report the time per call")
    p.add_argument("--profile", default=None, metavar="TRACE.json",
                   help="write a Chrome trace (chrome://tracing, ui.perfetto.dev) of the "
                   "compile, builds and every kernel launch to TRACE.json")
    p.add_argument("--nproc", type=positive_int, default=None, metavar="N",
                   help="run the SBP program on N ranks (threads of this process; inputs and "
                   "outputs stay the logical tensors)")
    p.add_argument("--mpi", action="store_true",
                   help="with --nproc: ranks are MPI processes (mpiexec; the 'distributed' extra)")
    from tdflow.commands._args import add_ops_args, add_strict_attrs_arg

    add_ops_args(p)
    add_strict_attrs_arg(p)


def non_negative_int(text: str) -> int:
    """argparse ``type=`` for counts and seeds: a bad value is a usage error (exit 2).

    >>> non_negative_int("3")
    3
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse ``type=`` for ``--nproc``: at least 1.

    >>> positive_int("2")
    2
    """
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _usage(msg: str) -> int:
    sys.stderr.write(f"usage: tdflow run PROGRAM.mlir [options]\ntdflow run: error: {msg}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    if getattr(args, "nproc", None) is not None or getattr(args, "mpi", False):
        from tdflow.distributed.cli import distributed_run

        if args.nproc is None:
            return _usage("--mpi needs --nproc N (how many ranks)")
        if args.pipeline is not None:
            return _usage("--pipeline cannot be combined with --nproc (the SBP pipeline is fixed)")
        return distributed_run(args, _run_profiled)
    return _run_profiled(args)


def _run_profiled(args: argparse.Namespace) -> int:
    if getattr(args, "profile", None) is None:
        return _run(args)
    from tdflow.pictures.trace import profile

    with profile() as prof:
        status = _run(args)
    try:
        prof.save(args.profile)
    except OSError as exc:
        from tdflow.core.files import FileAccessError, os_reason

        raise FileAccessError(args.profile, f"cannot write: {os_reason(exc)}") from None
    launches = sum(1 for e in prof.recorder.events if e[1] == "launch")
    print(f"wrote a trace of {launches} kernel launch(es) to {args.profile} "
          f"(open it in chrome://tracing or ui.perfetto.dev)")
    return status


def _run(args: argparse.Namespace) -> int:
    bindings: dict[str, str] = {}
    for item in args.input:
        name, eq, path = item.partition("=")
        name = name.strip().lstrip("%")
        if not eq or not name or not path:
            return _usage(f"--input expects NAME=FILE.npy, got {item!r}")
        if name in bindings:
            return _usage(f"--input {name}= given twice")
        bindings[name] = path
    if args.entry is not None and not args.entry.lstrip("@"):
        return _usage("--entry expects a function name")

    import numpy as np

    import tdflow
    from tdflow.commands._args import check_ops_args, context_from_args
    from tdflow.core.files import read_input
    from tdflow.dialect.ir import DiagnosticError, parse_module, verify_module
    from tdflow.dialect.ir.source import decode_source

    check_ops_args(args)
    # Parse (and check) here, before compiling: what `compile` would trip over (no function, a
    # scalar argument, a tensor too big to allocate) becomes a located diagnostic.
    from .programs import is_onnx_path, load_onnx, lowered, with_onnx

    file = "<stdin>" if args.program == "-" else args.program
    onnx_model = is_onnx_path(args.program)
    text = b"" if onnx_model else read_input(args.program)
    module = load_onnx(args.program) if onnx_model else parse_module(text, file)
    func = _entry(module, args.entry.lstrip("@") if args.entry else None)
    context = with_onnx(context_from_args(args), module)
    errors = [d for d in verify_module(module, context, strict_attrs=args.strict_attrs)
              if d.severity == "error"]
    if errors:  # what is wrong with the program comes before what this machine cannot do
        raise DiagnosticError(errors)
    converted = lowered(module, context)
    check_runnable(func, set(bindings))
    names = [a.name or f"arg{i}" for i, a in enumerate(func.args)]
    unknown = sorted(set(bindings) - set(names))
    if unknown:
        from tdflow.runtime.executor import ArgumentError

        raise ArgumentError(f"@{func.name} has no argument %{unknown[0]}; its arguments are "
                            f"{', '.join('%' + n for n in names) or 'none'}")
    inputs = {arg: load_array(arg, path) for arg, path in bindings.items()}

    from pathlib import Path

    # A path (not the parsed module) so that compile's locations name the file too.
    source = Path(args.program) if args.program != "-" else decode_source(text, file)
    if converted is not module:  # onnx.* ops: the tdflow.* program they lower to
        source = converted
    from tdflow.runtime.compiled import CompileOptionError

    try:
        if getattr(args, "nproc", None) is not None:
            import tdflow.distributed

            program = tdflow.distributed.compile(source, args.nproc, entry=func.name,
                                                 ops=context, device=args.device)
        elif converted is module and args.program != "-":
            from tdflow.runtime.compiled import compile_verified

            # the module parsed (with the file's name in its locations) and verified above:
            # compile neither reads nor verifies it again
            program = compile_verified(module, device=args.device, entry=func.name,
                                       pipeline=args.pipeline, ops=context)
        else:
            program = tdflow.compile(source, device=args.device, entry=func.name,
                                     pipeline=args.pipeline, ops=context)
    except CompileOptionError as e:
        # An impossible --device or --pipeline value is a usage error, said in the CLI's
        # words (the message's "compile(): " names a Python function the user never called).
        return _usage(f"--{e.option}: {e.why.removeprefix(f'argument {e.option!r}: ')}")
    except MemoryError:
        raise _error(f"@{func.name}: not enough memory for the program's buffers") from None
    fname = program.__name__
    seed = 0 if args.random_inputs is None else args.random_inputs
    rng = np.random.default_rng(seed)
    filled = []
    for arg, shape, dtype in program.arguments:
        if arg in inputs:
            continue
        if shape is None or None in shape:
            from tdflow.runtime.arguments import ArgumentError
            from tdflow.runtime.arguments import type_text as _type_text

            raise ArgumentError(f"@{fname}: argument %{arg} has a dynamic shape "
                                f"({_type_text(shape, dtype)}); give it with --input "
                                f"{arg}=FILE.npy")
        inputs[arg] = random_array(rng, shape, dtype)
        filled.append(arg)
    if filled:
        print(f"random inputs (seed {seed}): {', '.join('%' + a for a in filled)}")
    try:
        results = program(**inputs)
    except MemoryError:
        raise _error(f"@{fname}: out of memory while running") from None
    results = results if isinstance(results, tuple) else (results,)
    print_results(fname, results, args.values)
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
        written = args.output
        # numpy's convention: '.npz' is appended to a name without it; but a path that exists and
        # is not a regular file (a directory, /dev/full) is written as given, to report its error.
        if not written.endswith(".npz") and not (os.path.exists(written)
                                                 and not os.path.isfile(written)):
            written += ".npz"
        import io

        # built in memory, then written: a zip needs a seekable file, which /dev/null and
        # pipes are not
        buf = io.BytesIO()
        np.savez(buf, **{f"result{i}": np.asarray(r) for i, r in enumerate(results)})
        try:
            with open(written, "wb") as fh:
                fh.write(buf.getbuffer())
        except OSError as exc:
            from tdflow.core.files import FileAccessError, os_reason

            raise FileAccessError(written, f"cannot write: {os_reason(exc)}") from None
        print(f"wrote {len(results)} result(s) to {written}")
    return 0


def _error(message: str, loc=None):
    from tdflow.dialect.ir import Diagnostic, DiagnosticError

    return DiagnosticError([Diagnostic(message, loc)])


def _entry(module, entry: str | None):
    """The function ``tdflow run`` calls: ``--entry NAME`` or the first one."""
    from tdflow.dialect.ir import Location

    if not module.funcs:
        raise _error("the program defines no function to run (expected 'func.func @name(...)')",
                     Location(module.loc.file, 0, 0))
    if entry is None:
        return module.funcs[0]
    for f in module.funcs:
        if f.name == entry:
            return f
    raise _error(f"--entry: the program has no function @{entry}; it defines "
                 f"{', '.join('@' + f.name for f in module.funcs)}",
                 Location(module.loc.file, 0, 0))


def _machine_memory() -> int:
    """Bytes this process may allocate at most: physical memory, or a lower address-space
    limit (``ulimit -v``)."""
    import resource

    limit = (1 << 63) - 1
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        pass
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, soft)
    return limit


def check_runnable(func, bound: set[str]) -> None:
    """Raise a located ``DiagnosticError`` for what numpy cannot make of ``func``'s values.

    Numpy refuses arrays of more than :data:`MAX_RANK` dimensions, and allocating a static
    tensor larger than the machine's memory ends in ``MemoryError`` (or worse, swapping), so
    such a program is reported here, before anything is allocated: each argument (named, with
    its type) and each value an operation defines. ``bound`` are the arguments given with
    ``--input`` (their arrays exist already, so only their rank matters).
    """
    import numpy as np

    from tdflow.dialect.ir import Diagnostic, DiagnosticError
    from tdflow.dialect.types import DTYPES, TensorType

    max_rank = MAX_RANK if int(np.__version__.split(".")[0]) >= 2 else 32
    memory = _machine_memory()
    diags = []

    def check(what: str, t, loc, random: bool) -> None:
        if not isinstance(t, TensorType) or t.shape is None:
            return
        if len(t.shape) > max_rank:
            diags.append(Diagnostic(f"{what}: {t} has rank {len(t.shape)}; numpy arrays have at "
                                    f"most {max_rank} dimensions", loc))
            return
        n = t.numel
        if n is None:
            return
        nbytes = n * DTYPES[t.dtype].itemsize
        # Random floats are drawn in float64 and then cast: that is the peak.
        peak = n * 8 + nbytes if random else nbytes
        if peak <= memory:
            return
        size = f"{n:.3g} elements ({_bytes(nbytes)})"
        if random:
            diags.append(Diagnostic(f"{what}: {t} has {size}; too large for random inputs on "
                                    f"this machine ({_bytes(memory)} of memory), give it with "
                                    f"--input", loc))
        else:
            diags.append(Diagnostic(f"{what}: {t} has {size}, more than this machine's "
                                    f"{_bytes(memory)} of memory", loc))

    for i, a in enumerate(func.args):
        name = a.name or f"arg{i}"
        if not isinstance(a.type, TensorType):
            diags.append(Diagnostic(f"argument %{name} has type {a.type}; @{func.name} can be run "
                                    f"only with tensor arguments", a.loc))
            continue
        check(f"argument %{name}", a.type, a.loc, name not in bound)
    for op in func.body:
        for j, r in enumerate(op.results):
            what = f"result #{j} of '{op.name}'" if len(op.results) > 1 else f"'{op.name}'"
            check(what, r.type, op.loc, False)
    if diags:
        raise DiagnosticError(diags)


def _bytes(n: int) -> str:
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30),
                       ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


#: Numpy's limit on the number of dimensions of an array (32 before numpy 2).
MAX_RANK = 64

_NPY_MAGIC = b"\x93NUMPY"


def load_array(name: str, path: str):
    """The array of ``--input NAME=PATH``: a ``.npy`` file, else a diagnostic saying why not."""
    import numpy as np

    from tdflow.core.files import FileAccessError, os_reason

    what = f"--input {name}"
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
            if not head:
                raise FileAccessError(path, f"{what}: the file is empty, not a .npy array")
            if head != _NPY_MAGIC:
                hint = " (an .npz archive: save one array with np.save)" \
                    if head.startswith(b"PK") else ""
                raise FileAccessError(path, f"{what}: not a .npy file{hint}")
            _check_npy_size(fh, path, what)
            fh.seek(0)
            return np.load(fh, allow_pickle=False)
    except OSError as exc:
        raise FileAccessError(path, f"cannot open {what}: {os_reason(exc)}") from None
    except (ValueError, EOFError, TypeError, MemoryError) as exc:
        # What np.load says about a damaged header or truncated data, or object arrays
        # (pickles, refused for safety).
        raise FileAccessError(path, f"{what}: not a valid .npy array: {exc}") from None


def _check_npy_size(fh, path: str, what: str) -> None:
    """The data the ``.npy`` header declares is in the file: np.load allocates the declared
    size before reading, so a forged header of shape (10**12,) would be a MemoryError."""
    import math

    from numpy.lib import format as npy

    from tdflow.core.files import FileAccessError

    fh.seek(0)
    version = npy.read_magic(fh)
    readers = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
    if version not in readers:  # a newer format: np.load itself says what it makes of it
        return
    shape, _, dtype = readers[version](fh)
    if dtype.hasobject:
        return  # refused by np.load (allow_pickle=False) with its own message
    need = math.prod(shape) * dtype.itemsize
    have = os.fstat(fh.fileno()).st_size - fh.tell()
    if need > have:
        raise FileAccessError(path, f"{what}: truncated .npy file: its header declares "
                              f"{dtype} of shape {shape} ({_bytes(need)}) but the file holds "
                              f"{_bytes(max(have, 0))} of data")


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

    from tdflow.commands.table import Table

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
    table.print(160)
