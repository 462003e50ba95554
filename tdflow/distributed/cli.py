"""``tdflow run --nproc N [--mpi]``: the distributed part of the run command.

Without ``--mpi`` the N ranks are threads of this process. With ``--mpi`` (and not yet under
``mpiexec``), the same command line, less ``--mpi``, is started again on N MPI ranks; under
``mpiexec`` every rank runs it on the ``COMM_WORLD`` communicator and only rank 0 prints and
writes ``--output`` (every rank computes the same logical results).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from .comm import current, launched_by_mpi
from .launch import LaunchError, mpi_available


def rerun_command(nproc: int, argv: Sequence[str]) -> list[str]:
    """``mpiexec -n N python -m tdflow ARGV`` with ``--mpi`` left out.

    >>> cmd = rerun_command(2, ["run", "p.mlir", "--nproc", "2", "--mpi"])
    >>> cmd[-5:]
    ['tdflow', 'run', 'p.mlir', '--nproc', '2']
    """
    from .launch import find_mpiexec

    rest = [a for a in argv if a != "--mpi"]
    return [find_mpiexec() or "mpiexec", "-n", str(nproc), sys.executable, "-m", "tdflow", *rest]


def distributed_run(args: argparse.Namespace, run: Callable[[argparse.Namespace], int],
                    argv: Sequence[str] | None = None) -> int:
    """Run ``run(args)`` as ``--nproc``/``--mpi`` ask (see the module docstring).

    >>> distributed_run(argparse.Namespace(mpi=False, nproc=2), lambda a: a.nproc)
    2
    """
    if args.mpi and not launched_by_mpi():
        why = mpi_available()
        if why is not None:
            raise LaunchError(f"tdflow run --mpi: {why}")
        import subprocess

        from tdflow.core.blas_pool import child_environ

        nproc = args.nproc or 1
        argv = list(sys.argv[1:] if argv is None else argv)
        # the ranks size their BLAS pools for the CPUs mpiexec gives them
        return subprocess.run(rerun_command(nproc, argv), env=child_environ()).returncode
    if launched_by_mpi():
        comm = current()
        if args.nproc not in (None, comm.size):
            raise LaunchError(f"tdflow run: --nproc {args.nproc} but mpiexec started "
                              f"{comm.size} ranks")
        args.nproc = comm.size
        if comm.rank != 0:  # every rank computes the logical results; one reports them
            args.output = None
            with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
                return run(args)
    return run(args)
