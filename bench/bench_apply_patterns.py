"""``apply-patterns`` benchmark: a generated 100k-op program and 50 DRR rules.

Run: ``python bench/bench_apply_patterns.py [--ops 100000] [--rules 50] [--repeat 3]
[--write-docs]``.

The rules (written to a temporary ``rules.td``) are semantically valid rewrites over standard
elementwise ops, two per op ``u`` of a list: ``u(negative(negative(x))) -> u(x)`` (a nested
three-op match) and ``u(reshape(x)) -> u(x)`` when the reshape keeps the type (a Python
native constraint). The program is chains of those ops over ``tensor<8x8xf32>``, one in four
ops wrapped so that a rule fires. Each repeat parses the program afresh and times, in this
process: ``apply-patterns`` (the pass alone, no verification), ``canonicalize`` on the same
program (the reference the target is stated against), and a plain walk over every op asking
the pattern index (the floor any driver pays). Best of ``--repeat``. Target: apply-patterns
under 2 s for 100k ops and 50 rules.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # bench/_common.py, however this script is run or imported
    sys.path.insert(0, str(HERE))

from _common import write_docs_section  # noqa: E402

#: Elementwise unary standard ops the rules are rooted at, first choices (those with
#: attributes are skipped; other attribute-free elementwise unary ops fill up to 25).
UNARY = ("relu", "sigmoid", "tanh", "exp", "sqrt", "square", "gelu", "abs", "sin", "cos",
         "floor", "ceil", "round", "sign", "sinh", "cosh", "atan", "asinh", "softsign",
         "erf", "rsqrt", "silu", "softplus", "log1p", "expm1")
T = "tensor<8x8xf32>"

HOOKS = '''
import tdflow


@tdflow.native("BenchSameType")
def same_type(a, b):
    return a.type == b.type
'''


def op_record(ctx, mnemonic: str) -> str:
    """The TableGen def name of the standard op ``mnemonic`` (``TDF_ReluOp``)."""
    return ctx.lookup(f"tdflow.{mnemonic}").record


def rules_td(ctx, n_rules: int) -> tuple[str, list[str]]:
    """The rules file and the op mnemonics it uses (``n_rules // 2`` ops, two rules each)."""
    def plain_unary(u: str) -> bool:  # one operand, no attributes: `(Op $x)` is the whole op
        d = ctx.ops.get(f"tdflow.{u}")
        return d is not None and len(d.operands) == 1 and not d.attributes

    extra = sorted(op.mnemonic for op in ctx.ops.values() if op.dialect == "tdflow"
                   and op.has_trait("Elementwise") and plain_unary(op.mnemonic))
    ops = list(dict.fromkeys(u for u in (*UNARY, *extra) if plain_unary(u)))
    ops = [u for u in ops if u != "negative"][: max(1, n_rules // 2)]
    lines = ['include "tdflow/Patterns.td"', 'include "tdflow/ops.td"',
             'def BenchSameType : Constraint<CPred<"$0.getType() == $1.getType()">>;']
    for u in ops:
        r = op_record(ctx, u)
        lines.append(f"def Bench_{u}_NegNeg : Pat<({r} (TDF_NegativeOp (TDF_NegativeOp $x))), "
                     f"({r} $x)>;")
        lines.append(f"def Bench_{u}_Reshape : Pat<({r} (TDF_ReshapeOp:$r $x, $s)), ({r} $x), "
                     f"[(BenchSameType $r, $x)]>;")
    return "\n".join(lines) + "\n", ops


def program(ops: list[str], n_ops: int, per_func: int = 1000) -> str:
    """Functions of ``per_func`` ops: chains of ``ops``; every fourth op is preceded by a
    negative pair or an identity reshape (so a rule fires on it)."""
    out = []
    total, fi = 0, 0
    while total < n_ops:
        body, k, h = [], 0, "%x"
        n = min(per_func, n_ops - total) - 1
        i = 0
        while k < n - 3:
            u = ops[i % len(ops)]
            if i % 4 == 0:
                body.append(f'%{k} = "tdflow.negative"({h}) : ({T}) -> {T}')
                body.append(f'%{k + 1} = "tdflow.negative"(%{k}) : ({T}) -> {T}')
                h, k = f"%{k + 1}", k + 2
            elif i % 4 == 2:
                body.append(f'%{k} = "tdflow.reshape"({h}) {{shape = [8, 8]}} : ({T}) -> {T}')
                h, k = f"%{k}", k + 1
            body.append(f'%{k} = "tdflow.{u}"({h}) : ({T}) -> {T}')
            h, k, i = f"%{k}", k + 1, i + 1
        out.append(f"func.func @f{fi}(%x: {T}) -> {T} {{\n  " + "\n  ".join(body) +
                   f"\n  return {h} : {T}\n}}")
        total += len(body) + 1
        fi += 1
    return "\n".join(out) + "\n", total


def run(n_ops: int = 100_000, n_rules: int = 50, repeat: int = 3) -> dict:
    from tdflow.dialect.ir import parse_module
    from tdflow.lowering.pass_manager import PassManager
    from tdflow.lowering.patterns_driver import PatternIndex
    from tdflow.runtime.kernels.registry import kernel_table

    import tdflow

    tmp = Path(tempfile.mkdtemp(prefix="bench_patterns_"))
    std = tdflow.load_ops()
    text, ops = rules_td(std, n_rules)
    (tmp / "rules.td").write_text(text)
    (tmp / "h.py").write_text(HOOKS)
    ctx = tdflow.load_ops(tmp / "rules.td", hooks=[tmp / "h.py"])
    user_rules = [p for p in ctx.patterns if p.name.startswith("Bench_")]
    src, total = program(ops, n_ops)
    table = kernel_table("cpu")

    def timed(pipeline: str) -> tuple[float, float, object]:
        module = parse_module(src, "bench.mlir")
        pm = PassManager.parse(pipeline, dialect=ctx, kernel_table=table, verify_each=False)
        start, cpu = time.perf_counter(), time.process_time()
        pm.run(module)
        return time.perf_counter() - start, time.process_time() - cpu, (module, pm)

    def walk() -> float:
        module = parse_module(src, "bench.mlir")
        index = PatternIndex(ctx.patterns)
        start = time.perf_counter()
        hits = 0
        for f in module:
            for op in f.body:
                hits += len(index.get(op.name))
        return time.perf_counter() - start

    inf = float("inf")
    best = {"apply-patterns": inf, "cpu": inf, "canonicalize": inf, "walk": inf}
    fired = ops_after = 0
    for _ in range(repeat):
        t, cpu, (module, pm) = timed("apply-patterns")
        best["cpu"] = min(best["cpu"], cpu)
        if t < best["apply-patterns"]:
            best["apply-patterns"] = t
            fired = len(pm.passes[0].fired)
            ops_after = module.num_ops
        best["canonicalize"] = min(best["canonicalize"], timed("canonicalize")[0])
        best["walk"] = min(best["walk"], walk())
    return {"ops": total, "rules": len(user_rules), "all_rules": len(ctx.patterns),
            "fired": fired, "ops_after": ops_after, **best,
            "vs_canonicalize": best["apply-patterns"] / best["canonicalize"],
            "vs_walk": best["apply-patterns"] / best["walk"]}


def markdown(r: dict) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    ok = "met" if r["apply-patterns"] < 2.0 else "NOT met"
    return (
        "## Rewrite rules: apply-patterns (bench/bench_apply_patterns.py)\n\n"
        "Command: `python bench/bench_apply_patterns.py --write-docs` (best of 3; each run parses "
        "the program afresh and times the pass alone, without verification). "
        f"Run: {time.strftime('%Y-%m-%d')}; {platform.machine()}, {os.cpu_count()} cores "
        f"shared with other jobs (load average {load:.1f} when the run started), no GPU; "
        f"Python {platform.python_version()}.\n\n"
        "| program | rules | rewrites | ops after | apply-patterns | (its CPU time) | canonicalize "
        "| plain walk | vs canonicalize | vs walk |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        f"| {r['ops']:,} ops (chains of elementwise ops) | {r['rules']} user + "
        f"{r['all_rules'] - r['rules']} standard | {r['fired']:,} | {r['ops_after']:,} | "
        f"{r['apply-patterns']:.2f} s | {r['cpu']:.2f} s | {r['canonicalize']:.2f} s | "
        f"{r['walk'] * 1e3:.0f} ms | "
        f"{r['vs_canonicalize']:.2f}x | {r['vs_walk']:.0f}x |\n\n"
        f"Target: apply-patterns under 2 s for 100k ops and 50 rules: {ok}. `canonicalize` runs "
        "the standard rules through the same driver plus trait rewrites, constant folding, CSE "
        "and DCE; the plain walk visits every op and looks its rules up, nothing more.\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--rules", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true",
                    help="replace this benchmark's section of docs/benchmarks.md")
    args = ap.parse_args(argv)
    r = run(args.ops, args.rules, args.repeat)
    text = markdown(r)
    print(text)
    if args.write_docs:
        write_docs_section("## Rewrite rules: apply-patterns", text)
    return 0 if r["apply-patterns"] < 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
