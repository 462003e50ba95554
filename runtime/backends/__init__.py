"""Device backends, found by naming convention: ``runtime/backends/<name>.py``.

A backend module defines ``BACKEND`` (or a ``backend()`` factory) with:
``name``, ``allocate(shape, dtype) -> buffer``, ``from_numpy(array) -> buffer``,
``to_numpy(buffer) -> np.ndarray``, ``kernels`` (a ``KernelTable``), ``launch(kernel, attrs,
inputs, outs)`` and ``synchronize()``.

>>> get_backend("cpu").name
'cpu'

``cuda`` is never imported at ``import tdflow`` time; when it cannot run, ``get_backend("cuda")``
raises :class:`BackendUnavailableError` saying why (``cuda_status()`` never raises).
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from tdflow.core.errors import TdflowError


class BackendUnavailableError(TdflowError, RuntimeError):
    """The backend exists but cannot run here (the message says why)."""


KNOWN_BACKENDS = ("cpu", "cuda", "cudasim")


@cache
def get_backend(name: str) -> Any:
    """The backend object for a device name (``"cpu"``, ``"cuda"``, ``"cuda:0"``...)."""
    base = name.split(":", 1)[0]
    if base == "cuda":
        from tdflow.runtime.backends.cuda_status import cuda_status

        status = cuda_status()
        if not status.available:
            raise BackendUnavailableError(f"CUDA unavailable: {status.reason}")
    try:
        module = importlib.import_module(f"tdflow.runtime.backends.{base}")
    except ModuleNotFoundError as e:
        if e.name != f"tdflow.runtime.backends.{base}":
            raise
        if base in KNOWN_BACKENDS:
            raise BackendUnavailableError(f"backend {base!r} is not built yet") from None
        raise ValueError(f"unknown device {name!r}; known backends: "
                         f"{', '.join(KNOWN_BACKENDS)}") from None
    factory = getattr(module, "backend", None)
    return factory() if callable(factory) else module.BACKEND
