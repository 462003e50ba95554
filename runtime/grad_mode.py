"""Whether eager ops record gradients: a per-thread switch, and ``no_grad``/``enable_grad``.

The eager op paths (:mod:`~tdflow.runtime.eager`, :mod:`~tdflow.runtime.eager_device`) read
:data:`MODE` on every call, so the switch lives below them and below the tape
(:mod:`~tdflow.runtime.autograd`), which runs ops itself.

>>> grad_enabled()
True
>>> with no_grad():
...     with enable_grad():
...         inner = grad_enabled()
...     outer = grad_enabled()
>>> inner, outer, grad_enabled()
(True, False, True)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MODE", "GradMode", "enable_grad", "grad_enabled", "no_grad"]


class GradMode(threading.local):
    """One thread's switch: ``enabled`` (each thread starts with gradients on)."""

    enabled = True


#: The switch the eager op paths read (``MODE.enabled``); change it with :func:`no_grad` and
#: :func:`enable_grad`.
MODE = GradMode()


def grad_enabled() -> bool:
    """Whether eager ops record gradients on this thread (``no_grad`` turns it off).

    >>> grad_enabled()
    True
    """
    return MODE.enabled


@contextmanager
def no_grad() -> Iterator[None]:
    """Run eager ops without recording gradients (for updates and evaluation).

    >>> import tdflow
    >>> w = tdflow.tensor([1.0], requires_grad=True)
    >>> with tdflow.no_grad():
    ...     tdflow.functional.mul(w, 2.0).requires_grad
    False
    """
    old = MODE.enabled
    MODE.enabled = False
    try:
        yield
    finally:
        MODE.enabled = old


@contextmanager
def enable_grad() -> Iterator[None]:
    """Record gradients again inside a :func:`no_grad` block.

    >>> with no_grad(), enable_grad():
    ...     grad_enabled()
    True
    """
    old = MODE.enabled
    MODE.enabled = True
    try:
        yield
    finally:
        MODE.enabled = old
