"""Data-parallel MLP step on N ranks: how much of the step is communication, and how many
bytes the gradients' all-reduce moves against the ring all-reduce minimum.

    python bench/bench_distributed.py                     # 2 thread ranks, batch 4096
    python bench/bench_distributed.py --nproc 2 --batch 4096 --steps 20 --write-docs
    tdflow launch -n 2 bench/bench_distributed.py         # the same over MPI processes

The step is examples/train_mlp.py's model (64 -> 256 -> 10, float32) on a random global batch:
each rank runs ``tdflow.value_and_grad`` of its rows' loss (summed, divided by the global
batch), then one bucketed all-reduce of the loss and the four gradients
(``tdflow.distributed.data_parallel.allreduce_buckets``) and the SGD update. Per step and rank
the bench times the compute (forward + backward), the wait at a barrier for the slower rank
(load imbalance: thread ranks share the GIL and this machine's cores) and the all-reduce;
the numbers are medians over the steps, of the slowest rank; the communication share is the
all-reduce's part of the whole step.

Bytes: a ring all-reduce of ``B`` bytes over ``N`` ranks sends ``2 (N-1)/N B`` from each rank,
and no all-reduce can send less (each rank must send its ``B (N-1)/N`` share for reduction
and receive the others' reduced shares). The communicators count, per rank, what their
algorithm sends; the bench compares it with ``2 (N-1)/N`` times the gradient bytes.

Targets (issue 22): communication < 10% of the step at batch 4096 on 2 ranks; bytes sent per
step equal to the ring minimum.

Overlap: the same step as an SBP program (the batch ``S(0)``, ``tdflow.distributed.
value_and_grad``, which lowers it through ``infer-sbp``) with the gradients' all-reduces in
buckets overlapped with the rest of the backward pass (``tdflow.distributed.overlap``) and
without (each all-reduce where the plan reaches it); the bench prints both step times, their
ratio, and checks that the losses are the same bits.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import train_mlp  # noqa: E402

import tdflow  # noqa: E402
import tdflow.distributed as dist  # noqa: E402
from tdflow.distributed.data_parallel import allreduce_buckets, rows_of  # noqa: E402


def rank_steps(batch: int, steps: int, seed: int = 0) -> dict:
    """Run ``steps`` DP steps on the calling rank; its timings and byte counts."""
    comm = dist.current()
    rows = rows_of(batch, comm.size, comm.rank)
    rng = np.random.default_rng(seed)  # the same global batch on every rank
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    p = train_mlp.init_params(seed)
    vg = tdflow.value_and_grad(train_mlp.program(rows.stop - rows.start, mean_over=batch),
                               wrt=list(train_mlp.PARAMS))
    lr = np.float32(0.1)
    compute, wait, communicate, losses = [], [], [], []
    grad_bytes = sum(v.nbytes for v in p.values())
    sent0 = comm.bytes_sent
    for _ in range(steps + 1):  # the first step warms up and is not counted
        t0 = time.perf_counter()
        loss, grads = vg(x[rows], y[rows], *p.values())
        t1 = time.perf_counter()
        comm.barrier()  # waiting for the slower rank is load imbalance, not communication
        tb = time.perf_counter()
        total, *summed = allreduce_buckets([np.reshape(loss, 1), *grads], comm)
        t2 = time.perf_counter()
        for k, g in zip(train_mlp.PARAMS, summed):
            p[k] -= lr * g
        compute.append(t1 - t0)
        wait.append(tb - t1)
        communicate.append(t2 - tb)
        losses.append(float(total[0]))
    sent = (comm.bytes_sent - sent0) / (steps + 1)
    return {"compute": statistics.median(compute[1:]), "wait": statistics.median(wait[1:]),
            "communicate": statistics.median(communicate[1:]),
            "sent": sent, "payload": grad_bytes + 4, "grad_bytes": grad_bytes,
            "losses": losses, "size": comm.size}


def overlap_steps(batch: int, steps: int, bucket_bytes: int, seed: int = 0) -> dict:
    """``steps`` SGD steps of the SBP program on the calling rank, plain and overlapped in
    turn (the same load on both): each one's median step time and losses."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 64)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    text = train_mlp.program(batch, split_batch=True)
    runs = {}
    for overlap in (False, True):
        vg = dist.value_and_grad(text, dist.current().size, wrt=list(train_mlp.PARAMS),
                                 overlap=overlap, bucket_bytes=bucket_bytes)
        runs[overlap] = {"vg": vg, "p": train_mlp.init_params(seed), "times": [], "losses": []}
    lr = np.float32(0.1)
    for _ in range(steps + 1):  # the first step of each warms up and is not counted
        for r in runs.values():
            t0 = time.perf_counter()
            loss, grads = r["vg"](x, y, *r["p"].values())
            for k, g in zip(train_mlp.PARAMS, grads):
                r["p"][k] -= lr * g
            r["times"].append(time.perf_counter() - t0)
            r["losses"].append(float(loss))
    return {o: {"step": statistics.median(r["times"][1:]), "losses": r["losses"]}
            for o, r in runs.items()}


def measure_overlap(nproc: int, batch: int, steps: int, bucket_bytes: int) -> dict:
    """Overlapped and plain step times (medians, slowest rank) and whether the losses agree."""
    if dist.world_size() > 1:
        mine = overlap_steps(batch, steps, bucket_bytes)
        times = dist.current().allgather(np.array([mine[False]["step"], mine[True]["step"]]))
        per_rank = [{False: {**mine[False], "step": a}, True: {**mine[True], "step": b}}
                    for a, b in times.reshape(-1, 2)]
    else:
        per_rank = dist.run_threads(lambda r: overlap_steps(batch, steps, bucket_bytes), nproc)
    plain = max(r[False]["step"] for r in per_rank)
    fast = max(r[True]["step"] for r in per_rank)
    return {"plain": plain, "overlapped": fast, "ratio": fast / plain,
            "same": per_rank[0][True]["losses"] == per_rank[0][False]["losses"]}


def overlap_table(o: dict, batch: int, bucket_bytes: int) -> str:
    return "\n".join([
        "| batch | bucket | step, all-reduces in the plan | step, overlapped buckets | "
        "ratio | losses |",
        "|---|---|---|---|---|---|",
        f"| {batch} | {bucket_bytes // 1024} KiB | {o['plain'] * 1e3:.2f} ms | "
        f"{o['overlapped'] * 1e3:.2f} ms | {o['ratio']:.3f} | "
        f"{'the same bits' if o['same'] else 'DIFFER'} |",
    ])


def measure(nproc: int, batch: int, steps: int) -> dict:
    """The slowest rank's medians, over thread ranks (or the MPI job when under mpiexec)."""
    if dist.world_size() > 1:  # under mpiexec: this process is one rank
        mine = rank_steps(batch, steps)
        times = dist.current().allgather(np.array([mine["compute"], mine["wait"],
                                                   mine["communicate"]]))
        per_rank = [{**mine, "compute": c, "wait": w, "communicate": m}
                    for c, w, m in times.reshape(-1, 3)]
    else:
        per_rank = dist.run_threads(lambda r: rank_steps(batch, steps), nproc)
    worst = max(per_rank, key=lambda r: r["compute"] + r["wait"] + r["communicate"])
    size = worst["size"]
    return {**worst, "ranks": size,
            "ring_min": 2 * (size - 1) / size * worst["payload"],
            "share": worst["communicate"] / (worst["compute"] + worst["wait"]
                                             + worst["communicate"])}


def table(m: dict, batch: int) -> str:
    step = m["compute"] + m["wait"] + m["communicate"]
    ratio = m["sent"] / m["ring_min"] if m["ring_min"] else 1.0
    return "\n".join([
        "| ranks | batch | step | compute | waiting (imbalance) | all-reduce | "
        "communication share | bytes sent / rank / step | ring minimum (2(N-1)/N x payload) "
        "| ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {m['ranks']} | {batch} | {step * 1e3:.2f} ms | {m['compute'] * 1e3:.2f} ms | "
        f"{m['wait'] * 1e3:.2f} ms | "
        f"{m['communicate'] * 1e3:.3f} ms | {100 * m['share']:.1f}% "
        f"({'met' if m['share'] < 0.10 else 'MISSED'}: < 10%) | {m['sent']:.0f} | "
        f"{m['ring_min']:.0f} | {ratio:.3f} |",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--bucket-kib", type=int, default=64,
                    help="bucket size of the overlapped all-reduces (KiB)")
    ap.add_argument("--write-docs", action="store_true",
                    help="write the section of docs/benchmarks.md")
    args = ap.parse_args(argv)
    m = measure(args.nproc, args.batch, args.steps)
    bucket = args.bucket_kib * 1024
    o = measure_overlap(args.nproc, args.batch, args.steps, bucket)
    if dist.rank() != 0:
        return 0 if o["same"] else 1
    kind = "MPI processes" if dist.world_size() > 1 else "thread ranks"
    text = table(m, args.batch)
    print(f"MLP data-parallel step on {m['ranks']} {kind}, gradients "
          f"{m['grad_bytes']} bytes (+4 for the loss), one bucket:\n{text}")
    otext = overlap_table(o, args.batch, bucket)
    print(f"\nThe SBP program's step, gradient all-reduces overlapped with the backward pass "
          f"or not:\n{otext}")
    if args.write_docs:
        from _common import write_docs_section

        heading = f"## Distributed: data-parallel MLP step, {kind} (bench/bench_distributed.py)"
        command = (f"tdflow launch -n {m['ranks']} bench/bench_distributed.py"
                   if dist.world_size() > 1 else
                   f"python bench/bench_distributed.py --nproc {args.nproc}")
        write_docs_section(heading, heading + "\n\n"
                           f"`{command} --batch {args.batch} --steps {args.steps} --write-docs` "
                           f"({kind}; medians "
                           "of the slowest rank; the machine's 2 cores shared with other "
                           "jobs):\n\n" + text + "\n\nBytes are what the communicator's "
                           "algorithm sends per rank (a ring all-reduce: 2 (N-1)/N of the "
                           "buffer), counted by `Communicator.bytes_sent`; the payload is the "
                           "gradients plus the 4-byte loss in one bucket, so the ratio to the "
                           "ring minimum over the gradients alone is 1 + 4/gradient bytes.\n\n"
                           "The same step as an SBP program (`dist.value_and_grad`, the batch "
                           "S(0)), its gradients' all-reduces overlapped with the backward "
                           f"pass in {args.bucket_kib} KiB buckets or each run where the "
                           "plan reaches it:\n\n" + otext + "\n")
    return 0 if o["same"] else 1


if __name__ == "__main__":
    sys.exit(main())
