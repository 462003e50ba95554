"""``tdflow launch``: run a Python script on N MPI ranks (like ``torchrun``).

    $ tdflow launch -n 2 examples/train_mlp.py --nproc 2 --mode graph --quiet
    $ tdflow launch -n 8 --hostfile hosts train.py        # across machines

Every rank runs the script; inside it ``tdflow.distributed.rank()`` and ``world_size()`` say
where it stands and distributed programs use MPI. An exception or a killed process on one rank
ends the whole job with a non-zero status. Without mpi4py/mpich: one line saying what to install.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction, summary: str) -> None:
    p = sub.add_parser(
        "launch", help=summary,
        description="Run SCRIPT on N ranks with mpiexec; every rank runs it, and a failing "
        "rank ends the job.")
    p.add_argument("-n", "--nproc", type=int, required=True, metavar="N", help="how many ranks")
    p.add_argument("--hostfile", default=None, metavar="FILE",
                   help="mpiexec's hostfile (one 'host:slots' a line) to span machines")
    p.add_argument("script", metavar="SCRIPT.py", help="the script every rank runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="arguments of the script")


def run(args: argparse.Namespace) -> int:
    from tdflow.distributed.launch import launch

    return launch(args.nproc, [args.script, *args.script_args], args.hostfile)
