"""``tdflow view`` on a 1,000-op program: the whole page against Graphviz's ``dot`` alone.

The program is a residual stack (``matmul``, ``bias_add``, ``relu``, ``broadcast_add`` per
block, 250 blocks). ``total`` is what ``tdflow view`` does after reading the file: parse,
verify, build the graph, lay it out with ``dot -Tsvg`` and write the page; ``dot`` is the
same ``dot`` call alone on the same DOT text, measured in the same run, so ``total / dot``
is what tdflow adds. Target: total under 3 s.

    python bench/view_bench.py               # table
    python bench/view_bench.py --write-docs  # and the "Program viewer" section of docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import write_docs_section  # noqa: E402

HEADING = "## Program viewer (bench/view_bench.py)"


def residual_program(blocks: int = 250, width: int = 64) -> str:
    """A program of ``4 * blocks`` ops (plus the return).

    >>> residual_program(1).count('"tdflow.')
    4
    """
    t = f"tensor<8x{width}xf32>"
    lines = [f"func.func @stack(%x: {t}, %w: tensor<{width}x{width}xf32>, "
             f"%b: tensor<{width}xf32>) -> {t} {{"]
    h = "%x"
    for i in range(blocks):
        lines += [
            f'  %m{i} = "tdflow.matmul"({h}, %w) : ({t}, tensor<{width}x{width}xf32>) -> {t}',
            f'  %a{i} = "tdflow.bias_add"(%m{i}, %b) {{axis = 1 : si32}} : ({t}, '
            f"tensor<{width}xf32>) -> {t}",
            f'  %r{i} = "tdflow.relu"(%a{i}) : ({t}) -> {t}',
            f'  %h{i} = "tdflow.broadcast_add"(%r{i}, {h}) : ({t}, {t}) -> {t}',
        ]
        h = f"%h{i}"
    lines += [f"  return {h} : {t}", "}"]
    return "\n".join(lines) + "\n"


def run(blocks: int = 250, rounds: int = 3) -> dict:
    """Best-of-``rounds`` seconds of the whole page and of ``dot`` alone."""
    from tdflow.dialect.context import standard_context
    from tdflow.dialect.ir import parse_module, verify_module

    from tdflow.pictures.graph import program_graph, to_dot
    from tdflow.pictures.layout import require_dot
    from tdflow.pictures.view import view_html

    dot = require_dot()
    text = residual_program(blocks)
    context = standard_context()
    totals, dots = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        module = parse_module(text, "stack.mlir")
        verify_module(module, context)
        page = view_html(module, context, title="stack.mlir")
        totals.append(time.perf_counter() - start)
        dot_text = to_dot(program_graph(module, context))
        start = time.perf_counter()
        subprocess.run([dot, "-Tsvg"], input=dot_text.encode(), capture_output=True, check=True)
        dots.append(time.perf_counter() - start)
    ops = sum(1 for op in module.funcs[0].body) - 1
    return {"ops": ops, "total": min(totals), "dot": min(dots), "bytes": len(page)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=250, help="residual blocks (4 ops each)")
    ap.add_argument("--write-docs", action="store_true", help="update docs/benchmarks.md")
    args = ap.parse_args()
    r = run(args.blocks)
    verdict = "OK" if r["total"] < 3.0 else "over the 3 s target"
    table = (f"| ops | tdflow view (s) | dot alone (s) | view / dot | page |\n"
             f"|---:|---:|---:|---:|---:|\n"
             f"| {r['ops']} | {r['total']:.2f} | {r['dot']:.2f} | "
             f"{r['total'] / r['dot']:.2f}x | {r['bytes'] / 1e6:.1f} MB |\n")
    print(table + f"\ntarget: under 3 s for 1,000 ops: {verdict}")
    if args.write_docs:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        write_docs_section(HEADING, f"{HEADING}\n\n{table}\nBest of 3 runs; parse, verify, "
                           f"graph, `dot -Tsvg` and the page, against `dot -Tsvg` alone on the "
                           f"same DOT text in the same run; {os.cpu_count()} CPUs, load "
                           f"average {load:.2f}. Target: under 3 s for 1,000 ops.\n")


if __name__ == "__main__":
    main()
