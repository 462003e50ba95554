"""IR benchmark: parse, verify and print a 100k-op tdflow program; compare with mlir-opt.

Run: ``python bench/ir_bench.py [--program varied|layers] [--ops 100000] [--funcs 100]
[--repeat 3] [--markdown]``.

It generates a program: ``varied`` (the default) gives every function its own width and every
op its own attribute values over 16 op kinds, so no two functions share an (op, types,
attributes) triple and tdflow's per-signature memo caches cannot hide the work; ``layers``
repeats one MLP layer (matmul, bias_add, leaky_relu {alpha}, relu, reshape {shape}, transpose
{perm}, broadcast_add, scalar_mul, softmax), where the caches hit almost always. It times, in
this process, parse / verify / print separately and in total (ops/s, best of ``--repeat``),
then process against process: ``tdflow opt FILE`` and ``tdflow verify FILE`` against
``mlir-opt-19 FILE`` (each a whole process: start-up, parse, verify, print). It measures
peak RSS of a fresh process doing parse+verify+print, start-up of ``python -c 'import
tdflow.dialect.ir'`` and ``tdflow --help``, and runs ``mlir-opt-19 --allow-unregistered-dialect``
on the same file (ratio). Verification uses the standard dialect when
``tdflow.dialect.standard_dialect()`` loads, else the structural checks only (reported); the
total counts the first (cold) full verification.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import find_tool, write_docs_section  # noqa: E402

B, D = 64, 256  # batch, width


def generate(n_ops: int, n_funcs: int) -> str:
    """A module of ``n_funcs`` functions with ``n_ops`` operations in total (returns included)."""
    per = max(n_ops // n_funcs, 12)
    x = f"tensor<{B}x{D}xf32>"
    w = f"tensor<{D}x{D}xf32>"
    b = f"tensor<{D}xf32>"
    r = f"tensor<{B * 2}x{D // 2}xf32>"
    t = f"tensor<{D}x{B}xf32>"
    alphas = ["0.1 : f32", "2.000000e-01 : f32", "0.01 : f32", "3.000000e-01 : f32"]
    out = ["module {"]
    for fi in range(n_funcs):
        out.append(f"  func.func @layer{fi}(%x: {x}, %w: {w}, %b: {b}) -> {x} {{")
        h = "%x"
        k = 0
        body = per - 1  # leave room for the return
        layer = 0
        while k + 9 <= body:
            a = alphas[layer % len(alphas)]
            lines = [
                f'%{k} = "tdflow.matmul"({h}, %w) {{transpose_b = false}} : ({x}, {w}) -> {x}',
                f'%{k + 1} = "tdflow.bias_add"(%{k}, %b) {{axis = 1 : si32}} : ({x}, {b}) -> {x}',
                f'%{k + 2} = "tdflow.leaky_relu"(%{k + 1}) {{alpha = {a}}} : ({x}) -> {x}',
                f'%{k + 3} = "tdflow.reshape"(%{k + 2}) {{shape = [{B * 2}, {D // 2}]}} : ({x}) -> {r}',
                f'%{k + 4} = "tdflow.reshape"(%{k + 3}) {{shape = [{B}, {D}]}} : ({r}) -> {x}',
                f'%{k + 5} = "tdflow.transpose"(%{k + 4}) {{perm = [1 : si32, 0 : si32]}} : ({x}) -> {t}',
                f'%{k + 6} = "tdflow.transpose"(%{k + 5}) {{perm = [1 : si32, 0 : si32]}} : ({t}) -> {x}',
                f'%{k + 7} = "tdflow.broadcast_add"(%{k + 6}, {h}) : ({x}, {x}) -> {x}',
                f'%{k + 8} = "tdflow.relu"(%{k + 7}) : ({x}) -> {x}',
            ]
            out.extend("    " + s for s in lines)
            h = f"%{k + 8}"
            k += 9
            layer += 1
        while k < body:  # fill up with cheap elementwise ops
            if k % 2:
                out.append(f'    %{k} = "tdflow.scalar_mul"({h}) {{has_float_operand = true, '
                           f'float_operand = 5.000000e-01 : f64}} : ({x}) -> {x}')
            else:
                out.append(f'    %{k} = "tdflow.softmax"({h}) : ({x}) -> {x}')
            h = f"%{k}"
            k += 1
        out.append(f"    return {h} : {x}")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def generate_varied(n_ops: int, n_funcs: int) -> str:
    """A module whose functions differ in width and whose ops differ in attribute values.

    Function ``f`` works on ``tensor<B x (32 + f)>``; each layer cycles through 16 op kinds
    (unary math, broadcast binaries, scalars with a per-op constant, reductions over an axis,
    softmax, reshape/transpose pairs), so the verifier's inference cache sees ~n_ops distinct
    signatures instead of a dozen.
    """
    per = max(n_ops // n_funcs, 20)
    out = ["module {"]
    for fi in range(n_funcs):
        d = 32 + fi
        x = f"tensor<{B}x{d}xf32>"
        xt = f"tensor<{d}x{B}xf32>"
        w = f"tensor<{d}x{d}xf32>"
        b = f"tensor<{d}xf32>"
        red = f"tensor<{B}x1xf32>"
        out.append(f"  func.func @f{fi}(%x: {x}, %w: {w}, %b: {b}) -> {x} {{")
        h, k, body = "%x", 0, per - 1
        while k < body:
            c = f"{(fi * per + k) * 1e-4 + 0.5:.6e}"
            for line in _varied_layer(k, h, c, x, xt, w, b, red, d):
                out.append("    " + line)
                k += 1
            h = f"%{k - 1}"
        out.append(f"    return {h} : {x}")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


# One op per kind (two for the pairs): ``{k}`` is the result number, ``{h}`` the previous value,
# ``{c}`` a constant unique to the op, the rest the function's types.
_VARIED_KINDS = (
    ['"tdflow.matmul"({h}, %w) {{transpose_b = {tb}}} : ({x}, {w}) -> {x}'],
    ['"tdflow.bias_add"({h}, %b) {{axis = 1 : si32}} : ({x}, {b}) -> {x}'],
    ['"tdflow.leaky_relu"({h}) {{alpha = {c} : f32}} : ({x}) -> {x}'],
    ['"tdflow.scalar_mul"({h}) {{has_float_operand = true, float_operand = {c} : f64}} : ({x}) -> {x}'],
    ['"tdflow.tanh"({h}) : ({x}) -> {x}'],
    ['"tdflow.broadcast_mul"({h}, %x) : ({x}, {x}) -> {x}'],
    ['"tdflow.scalar_add"({h}) {{has_float_operand = true, float_operand = {c} : f64}} : ({x}) -> {x}'],
    ['"tdflow.reduce_sum"({h}) {{axis = [1 : si32], keepdims = true}} : ({x}) -> {red}',
     '"tdflow.broadcast_sub"({h}, %{prev}) : ({x}, {red}) -> {x}'],
    ['"tdflow.sigmoid"({h}) : ({x}) -> {x}'],
    ['"tdflow.transpose"({h}) {{perm = [1 : si32, 0 : si32]}} : ({x}) -> {xt}',
     '"tdflow.transpose"(%{prev}) {{perm = [1 : si32, 0 : si32]}} : ({xt}) -> {x}'],
    ['"tdflow.exp"({h}) : ({x}) -> {x}'],
    ['"tdflow.broadcast_maximum"({h}, %x) : ({x}, {x}) -> {x}'],
    ['"tdflow.softmax"({h}) : ({x}) -> {x}'],
    ['"tdflow.relu"({h}) : ({x}) -> {x}'],
    ['"tdflow.reshape"({h}) {{shape = [{B}, {d}]}} : ({x}) -> {x}'],
    ['"tdflow.broadcast_add"({h}, %x) : ({x}, {x}) -> {x}'],
)


def _varied_layer(k: int, h: str, c: str, x: str, xt: str, w: str, b: str, red: str,
                  d: int) -> list[str]:
    """The op line(s) of kind ``k % 16``, numbered from ``%k``."""
    lines = []
    for i, pattern in enumerate(_VARIED_KINDS[k % len(_VARIED_KINDS)]):
        body = pattern.format(h=h, c=c, x=x, xt=xt, w=w, b=b, red=red, d=d, B=B,
                              prev=k + i - 1, tb=str(k % 3 == 0).lower())
        lines.append(f"%{k + i} = {body}")
    return lines


def load_standard_dialect():
    """The standard dialect from ``ops.td`` if the ODS side can load it, else ``None``."""
    try:
        from tdflow.dialect import standard_dialect  # type: ignore[attr-defined]
    except ImportError:
        return None, "tdflow.dialect.standard_dialect not available"
    try:
        d = standard_dialect()
    except Exception as exc:  # noqa: BLE001 - report why, run structural checks only
        return None, f"loading ops.td failed: {type(exc).__name__}: {exc}"
    if not hasattr(d, "verify_operation"):
        return None, "the dialect has no verify_operation yet"
    return d, "standard dialect (ops.td)"


def best(fn, repeat: int):
    """``(best wall time, CPU time of that run, result)`` over ``repeat`` runs."""
    runs, result = [], None
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        result = fn()
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    wall, cpu = min(runs)
    return wall, cpu, result


def startup(cmd: list[str], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return min(times)


_RSS_CHILD = """
import sys
from tdflow.dialect.ir.parser import parse_file
from tdflow.dialect.ir.printer import print_module
from tdflow.dialect.ir.verifier import verify_module
m = parse_file(sys.argv[1])
d = verify_module(m)
s = print_module(m)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the (big) parent process.
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(line.split()[1])
"""


SECTION = "## IR: parse, verify, print"


def markdown_table(rows) -> str:
    return "\n".join(["| measure | result |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows])


def write_docs(rows, args) -> None:
    """Replace (or append) this benchmark's section of docs/benchmarks.md; others stay."""
    import platform

    body = (
        f"{SECTION}\n\n"
        f"Command: `python bench/ir_bench.py --write-docs` (`--program {args.program} --ops "
        f"{args.ops} --funcs {args.funcs} --repeat {args.repeat}`). Machine: {platform.machine()}, {os.cpu_count()} CPUs shared "
        f"with other jobs, Python {platform.python_version()}. Wall times depend on the load "
        f"(reported); CPU times (`time.process_time`) are what this process itself used.\n\n"
        f"{markdown_table(rows)}\n\n"
        "The `varied` program gives each function its own width and each op its own attribute "
        "values over 16 op kinds (matmul, bias_add, leaky_relu, scalar_mul/add, tanh, sigmoid, "
        "exp, relu, broadcast binaries, reduce_sum, softmax, reshape, transpose), so tdflow's "
        "per-signature caches cannot hide the work (`--program layers` repeats one MLP layer, as "
        "earlier rounds measured), in generic op syntax inside `func.func`s. The process rows "
        "time whole processes on both sides. Parsing takes a one-regex fast path "
        "per op line and caches each distinct attribute/type tail; the cyclic GC is paused "
        "while parsing. mlir-opt parses, verifies and prints the same file in C++.\n"
    )
    write_docs_section(SECTION, body)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", choices=("varied", "layers"), default="varied",
                    help="varied: distinct widths and attribute values (default); layers: one "
                         "repeated MLP layer (the memo caches hit)")
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--funcs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--write-docs", action="store_true",
                    help=f"replace (or append) the '{SECTION}' section of docs/benchmarks.md")
    args = ap.parse_args(argv)

    from tdflow.dialect.ir.parser import parse_module
    from tdflow.dialect.ir.printer import print_module
    from tdflow.dialect.ir.verifier import verify_module

    text = (generate_varied if args.program == "varied" else generate)(args.ops, args.funcs)
    tmp = Path(tempfile.mkdtemp(prefix="ir_bench_"))
    path = tmp / "bench.mlir"
    path.write_text(text)
    module = parse_module(text, str(path))
    n = module.num_ops
    dialect, dialect_note = load_standard_dialect()

    t_parse, c_parse, module = best(lambda: parse_module(text, str(path)), args.repeat)
    t_vs, c_vs, diags = best(lambda: verify_module(module), args.repeat)
    if diags:
        print(f"structural verification found {len(diags)} errors, first: {diags[0]}",
              file=sys.stderr)
        return 1
    t_vf = c_vf = t_vw = c_vw = None
    if dialect is not None:
        # The first run is what `tdflow verify` pays: the dialect caches inference per distinct
        # (op, types, attributes), so later runs over the same module are faster.
        t_vf, c_vf, fdiags = best(lambda: verify_module(module, dialect), 1)
        t_vw, c_vw, _ = best(lambda: verify_module(module, dialect), args.repeat)
        if fdiags:
            print(f"note: full verification reports {len(fdiags)} diagnostics; first: "
                  f"{fdiags[0]}", file=sys.stderr)
    t_print, c_print, printed = best(lambda: print_module(module), args.repeat)
    reparsed_equal = parse_module(printed, "<printed>") == module
    t_verify, c_verify = (t_vf, c_vf) if t_vf is not None else (t_vs, c_vs)
    total = t_parse + t_verify + t_print
    ctotal = c_parse + c_verify + c_print

    rss_out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(path)], capture_output=True,
                             text=True, check=True).stdout.split()
    rss_mb = int(rss_out[-1]) / 1024
    t_import = startup([sys.executable, "-c", "import tdflow.dialect.ir"])
    t_py = startup([sys.executable, "-c", "pass"])
    # The tdflow of this interpreter's environment (a venv's bin/ need not be on PATH).
    beside = Path(sys.executable).with_name("tdflow")
    tdflow_exe = str(beside) if beside.exists() else shutil.which("tdflow")
    small = tmp / "small.mlir"
    small.write_text(generate(20, 1))
    t_help = startup([tdflow_exe, "--help"]) if tdflow_exe else None
    t_cli_verify = startup([tdflow_exe, "verify", str(small)]) if tdflow_exe else None

    mlir = find_tool("mlir-opt")
    t_mlir = None
    if mlir:
        def run_mlir():
            subprocess.run([mlir, "--allow-unregistered-dialect", str(path), "-o", os.devnull],
                           check=True, capture_output=True)
        t_mlir, _, _ = best(run_mlir, args.repeat)
    # Process against process: what a user waits for at the shell, start-up included.
    t_proc_opt = t_proc_verify = None
    if tdflow_exe:
        t_proc_opt = startup([tdflow_exe, "opt", str(path), "-o", os.devnull], args.repeat)
        t_proc_verify = startup([tdflow_exe, "verify", str(path)], args.repeat)

    def rate(wall, cpu):
        return f"{wall:.3f} s wall, {cpu:.3f} s CPU ({n / wall:,.0f} ops/s wall, {n / cpu:,.0f} CPU)"

    load = os.getloadavg()[0]
    rows = [
        ("program", f"{n} ops in {len(module.funcs)} functions, {len(text) / 1e6:.1f} MB; "
                    f"best of {args.repeat}; load average {load:.1f} on {os.cpu_count()} CPUs"),
        ("parse", rate(t_parse, c_parse)),
        ("verify, structural", rate(t_vs, c_vs)),
        ("verify, full (standard dialect), first run", rate(t_vf, c_vf) if t_vf is not None
         else f"not run: {dialect_note}"),
        ("verify, full, again (dialect caches warm)", rate(t_vw, c_vw) if t_vw is not None
         else "not run"),
        ("print", rate(t_print, c_print)),
        ("parse + verify + print", f"{total:.3f} s wall, {ctotal:.3f} s CPU: **{n / total:,.0f} "
         f"ops/s** wall ({n / ctotal:,.0f} CPU); target ≥ 35,000"),
        ("print → parse gives an equal module", str(reparsed_equal)),
        ("peak RSS, fresh process parse + verify + print", f"{rss_mb:.0f} MB (target < 300 MB)"),
        ("startup `python -c 'import tdflow.dialect.ir'`", f"{t_import:.3f} s (bare python "
         f"{t_py:.3f} s)"),
        ("startup `tdflow --help`", f"{t_help:.3f} s" if t_help is not None else "not installed"),
        ("`tdflow verify` on a 20-op program (startup + dialect load)",
         f"{t_cli_verify:.3f} s (target < 0.15 s)" if t_cli_verify is not None
         else "not installed"),
        ("mlir-opt-19 --allow-unregistered-dialect, same file (C++)",
         f"{t_mlir:.3f} s ({n / t_mlir:,.0f} ops/s); tdflow takes {total / t_mlir:.1f}x its time"
         if t_mlir else "mlir-opt not installed"),
        ("process vs process: `tdflow opt FILE -o /dev/null` / mlir-opt-19",
         f"{t_proc_opt:.3f} s / {t_mlir:.3f} s = **{t_proc_opt / t_mlir:.1f}x** (target ≤ 2x)"
         if t_mlir and t_proc_opt else "not run (tdflow or mlir-opt not installed)"),
        ("process vs process: `tdflow verify FILE` / mlir-opt-19",
         f"{t_proc_verify:.3f} s / {t_mlir:.3f} s = **{t_proc_verify / t_mlir:.1f}x** (target ≤ 2x)"
         if t_mlir and t_proc_verify else "not run (tdflow or mlir-opt not installed)"),
    ]
    if args.write_docs:
        write_docs(rows, args)
    if args.markdown or args.write_docs:
        print(markdown_table(rows))
    else:
        for k, v in rows:
            print(f"{k:>60}: {v}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if reparsed_equal else 1


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    sys.exit(main())
