"""A user's first training steps on an empty cache: ResNet and GPT graph steps, A/B by tree.

    python bench/cold_start_bench.py                         # this tree only, 3 rounds
    python bench/cold_start_bench.py --base /tmp/base-tree --rounds 3 --models resnet gpt

Each round runs one fresh process per (model, tree), alternating the trees, each with a new
empty ``TDFLOW_CACHE_DIR`` (so every native module is compiled again; the TableGen and plan
caches are cold too, the same for both trees). A process builds the model (``model_bench``'s
columns: compile, plan load), then times its first graph step and the next four. Printed per
row: medians over rounds of the setup (import, compile), the first step, the first five steps
(wall), and the compiler children's CPU (``RUSAGE_CHILDREN``). A tree is run through the
finder shim (``TDFLOW_TREE``), as the helpers' checks are; ``--native-builds`` sets
``TDFLOW_NATIVE_BUILDS`` for the branch's processes (``wait`` or ``background``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1] + "/bench")
import model_bench
cols = getattr(model_bench, "_" + sys.argv[2] + "_columns")()
step = cols["graph"]
t1 = time.perf_counter()
times = []
for _ in range(5):
    s = time.perf_counter()
    step()
    times.append(time.perf_counter() - s)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"setup": t1 - t0, "first": times[0], "five": sum(times),
                  "rest": times[1:], "children_cpu": kids.ru_utime + kids.ru_stime}))
"""


def one(tree: Path, model: str, env_extra: dict[str, str]) -> dict:
    """One cold process of ``model`` on ``tree``; its timings."""
    with tempfile.TemporaryDirectory(prefix="tdf-cold-") as cache:
        os.chmod(cache, 0o700)
        env = dict(os.environ, TDFLOW_TREE=str(tree), TDFLOW_CACHE_DIR=cache, **env_extra)
        done = subprocess.run([sys.executable, "-c", _CHILD, str(tree), model], env=env,
                              capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{tree} {model} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, help="the baseline tree (a worktree of the base commit)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", nargs="+", default=["resnet", "gpt"], choices=("resnet", "gpt"))
    ap.add_argument("--native-builds", choices=("wait", "background"),
                    help="TDFLOW_NATIVE_BUILDS for the branch's processes")
    args = ap.parse_args()
    trees = {"branch": ROOT} if args.base is None else {"base": args.base, "branch": ROOT}
    extra = {"branch": {} if args.native_builds is None
             else {"TDFLOW_NATIVE_BUILDS": args.native_builds}, "base": {}}
    got: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for model in args.models:
            order = list(trees) if r % 2 == 0 else list(trees)[::-1]
            for name in order:
                res = one(trees[name], model, extra[name])
                got.setdefault((model, name), []).append(res)
                print(f"round {r} {model:6} {name:6} setup {res['setup']:.2f} s  first "
                      f"{res['first']:.2f} s  five {res['five']:.2f} s  compiler CPU "
                      f"{res['children_cpu']:.2f} s", flush=True)
    print("\n| model | tree | setup | first step | first five steps | compiler CPU |")
    print("|---|---|---:|---:|---:|---:|")
    for (model, name), rows in got.items():
        med = {k: statistics.median(r[k] for r in rows)
               for k in ("setup", "first", "five", "children_cpu")}
        print(f"| {model} | {name} | {med['setup']:.2f} s | {med['first']:.2f} s | "
              f"{med['five']:.2f} s | {med['children_cpu']:.2f} s |")


if __name__ == "__main__":
    main()
