"""Starting N ranks under MPI: ``tdflow launch -n N script.py`` (like ``torchrun``).

The script runs on every rank through :func:`rank_main` (``python -m
tdflow.distributed.launch SCRIPT ARGS...``), which makes ``COMM_WORLD`` the ranks' group and,
when the script raises on one rank, prints that rank's error and calls ``MPI_Abort``: the job
ends, every rank non-zero, within seconds, never a hang. A rank killed by a signal ends the job
the same way (mpiexec's own rule). ``mpiexec`` is the one next to this Python (the PyPI
``mpich`` wheel installs it there), else the first on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from tdflow.core.errors import TdflowError

INSTALL_HINT = "pip install 'tdflow[distributed]' (mpi4py and the mpich wheel with mpiexec)"


class LaunchError(TdflowError, RuntimeError):
    """MPI is not installed, or the script to launch is missing (one clear line)."""


def find_mpiexec() -> str | None:
    """The ``mpiexec`` to use: next to this interpreter (a venv's ``bin``), else on ``PATH``.

    >>> find_mpiexec() is None or find_mpiexec().endswith("mpiexec")
    True
    """
    here = Path(sys.executable).parent / "mpiexec"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("mpiexec")


def mpi_available() -> str | None:
    """``None`` when mpi4py and mpiexec are both there, else why not (one line).

    >>> mpi_available() is None or "pip install" in mpi_available()
    True
    """
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return f"mpi4py is not installed: {INSTALL_HINT}"
    if find_mpiexec() is None:
        return f"no mpiexec found next to {sys.executable} or on PATH: {INSTALL_HINT}"
    return None


def mpiexec_command(nproc: int, argv: Sequence[str], hostfile: str | None = None) -> list[str]:
    """The command line that runs ``python -m tdflow.distributed.launch ARGV`` on ``nproc``
    ranks (raises :class:`LaunchError` when MPI is missing).

    >>> cmd = mpiexec_command(2, ["train.py"]) if mpi_available() is None else ["mpiexec"]
    >>> cmd[0].endswith("mpiexec")
    True
    """
    why = mpi_available()
    if why is not None:
        raise LaunchError(why)
    cmd = [find_mpiexec() or "mpiexec", "-n", str(nproc)]
    if hostfile:
        cmd += ["-f", hostfile]
    return cmd + [sys.executable, "-m", "tdflow.distributed.launch", *argv]


def launch(nproc: int, argv: Sequence[str], hostfile: str | None = None,
           timeout: float | None = None) -> int:
    """Run ``argv`` (a script and its arguments) on ``nproc`` MPI ranks; the job's exit status.

    >>> launch(0, ["x.py"])
    Traceback (most recent call last):
    ...
    tdflow.distributed.launch.LaunchError: tdflow launch: -n must be at least 1, not 0
    """
    import subprocess

    if nproc < 1:
        raise LaunchError(f"tdflow launch: -n must be at least 1, not {nproc}")
    if not argv or not os.path.isfile(argv[0]):
        raise LaunchError(f"tdflow launch: no such script: {argv[0] if argv else '(none)'}")
    from tdflow.core.blas_pool import child_environ

    # the script's numpy sizes its BLAS pool as the user set it, not as the tdflow CLI did
    return subprocess.run(mpiexec_command(nproc, argv, hostfile), timeout=timeout,
                          env=child_environ()).returncode


def rank_main(argv: Sequence[str]) -> int:
    """What runs on each rank: the script as ``__main__``; an exception aborts the job.

    ``python -m tdflow.distributed.launch SCRIPT ARGS`` calls it (under mpiexec only: it
    starts MPI and makes ``COMM_WORLD`` the process's communicator):

    >>> (mpiexec_command(2, ["t.py"])[-3:] if mpi_available() is None
    ...  else ["-m", "tdflow.distributed.launch", "t.py"])  # without MPI: what it would be
    ['-m', 'tdflow.distributed.launch', 't.py']
    """
    import runpy
    import traceback

    from .comm import set_world
    from .mpi import MpiComm

    comm = MpiComm()
    set_world(comm)
    sys.argv = list(argv)
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code != 0 and comm.size > 1:
            comm.abort(f"exited with status {code}")
        return code
    except BaseException as exc:  # noqa: BLE001 - every rank must hear of it
        # One write of the whole traceback: mpiexec forwards a rank's stderr through its
        # proxy, and what is still buffered when MPI_Abort kills the job is lost.
        sys.stderr.write(traceback.format_exc())
        comm.abort(f"{type(exc).__name__}: {exc}")  # MPI_Abort: does not return
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(rank_main(sys.argv[1:]))
