"""tdflow.distributed: SBP programs run on several ranks (threads of one process, or MPI).

``compile(program, nproc)`` gives a callable taking the logical arrays and returning the
logical results on every rank; ``run_threads(fn, nproc)`` runs a function on N thread ranks;
``rank()`` / ``world_size()`` say where the calling thread or process stands.

>>> import tdflow.distributed as dist
>>> dist.rank(), dist.world_size()
(0, 1)
"""

from __future__ import annotations

_LAZY = {
    "Communicator": ("comm", "Communicator"),
    "ThreadComm": ("comm", "ThreadComm"),
    "MpiComm": ("mpi", "MpiComm"),
    "SelfComm": ("comm", "SelfComm"),
    "CommAborted": ("comm", "CommAborted"),
    "current": ("comm", "current"),
    "use": ("comm", "use"),
    "run_threads": ("threads", "run_threads"),
    "compile": ("program", "compile"),
    "compile_physical": ("program", "compile_physical"),
    "DistributedProgram": ("program", "DistributedProgram"),
    "DistributedError": ("program", "DistributedError"),
    "value_and_grad": ("autodiff", "value_and_grad"),
    "sgd_step": ("autodiff", "sgd_step"),
    "from_local": ("program", "from_local"),
    "to_local": ("program", "to_local"),
}


def rank() -> int:
    """The calling rank's number (0 outside a distributed run).

    >>> rank()
    0
    """
    from .comm import current

    return current().rank


def world_size() -> int:
    """How many ranks the calling rank's group has (1 outside a distributed run).

    >>> world_size()
    1
    """
    from .comm import current

    return current().size


def __getattr__(name: str):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tdflow.distributed' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
