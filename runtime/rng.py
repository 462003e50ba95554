"""Counter-based random numbers shared by every backend (``dropout``'s masks).

Element ``c`` of stream ``seed`` is ``uniform(seed, c)``, a fixed function of the two (a
SplitMix64 finaliser of their mix, the same integer arithmetic as ``tdf_uniform`` in the
generated CUDA C), so numpy, cudasim and a GPU draw identical numbers. Each stream keeps a host
counter that advances by the elements drawn, so consecutive calls with one seed differ, as a
stateful generator's would. Seed 0 is the global stream, reseeded by :func:`manual_seed`.

>>> manual_seed(7)
>>> a = uniform(take(0, 4), 4)
>>> manual_seed(7)
>>> bool((uniform(take(0, 4), 4) == a).all()), bool(((0 <= a) & (a < 1)).all())
(True, True)
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["take", "uniform", "manual_seed", "mix64", "own_offsets", "offsets"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1

_lock = threading.Lock()
_offsets: dict[int, int] = {}
_thread = threading.local()
_global_seed = [0x5DEECE66D]


def mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser over uint64 values (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def manual_seed(seed: int) -> None:
    """Restart the global stream (the one ``seed = 0`` draws from) at ``seed``."""
    with _lock:
        _global_seed[0] = int(seed) & _MASK
        _offsets.pop(0, None)


def take(seed: int, count: int) -> tuple[int, int]:
    """Reserve ``count`` numbers of stream ``seed``: ``(stream key, first counter)``."""
    seed = int(seed) & _MASK
    table = getattr(_thread, "offsets", None)  # a thread rank's own (own_offsets)
    with _lock:
        table = _offsets if table is None else table
        start = table.get(seed, 0)
        table[seed] = start + int(count)
        key = _global_seed[0] if seed == 0 else seed
    return key, start


def own_offsets(table: dict[int, int] | None) -> None:
    """Give the calling thread its own stream counters (``None``: the process's again), as a
    process of its own has: distributed thread ranks draw what MPI ranks would.

    >>> own_offsets({}); own_offsets(None)
    """
    _thread.offsets = table


def offsets() -> dict[int, int]:
    """A copy of the calling thread's stream counters (see :func:`own_offsets`).

    >>> isinstance(offsets(), dict)
    True
    """
    table = getattr(_thread, "offsets", None)
    with _lock:
        return dict(_offsets if table is None else table)


def uniform(state: tuple[int, int], count: int) -> np.ndarray:
    """``count`` float32 numbers in [0, 1) from ``state = take(...)`` (24 random bits each)."""
    key, start = state
    base = mix64(np.array([(key + _GOLDEN) & _MASK], np.uint64))[0]
    counters = np.arange(start, start + count, dtype=np.uint64)
    h = mix64(counters ^ base)
    return (h >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)
