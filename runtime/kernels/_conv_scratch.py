"""Per-thread scratch arrays for the convolution paths, kept between calls.

A fresh array of a few hundred KiB maps new pages at every call, and on this machine their
faults cost more than the work done in them (measured: 480 faults, 1.3 ms, in a 30 us Winograd
input transform of the ResNet's 16-channel 8x8 layer). So each step of a path asks for its
buffer by name, and gets this thread's buffer for that name, grown when too small. Threads
never share a buffer (the engine runs kernels on several threads).

>>> a = scratch("doc", (2, 3), np.float32)
>>> a.shape, a.dtype.name, scratch("doc", (6,), np.float32).base is a.base
((2, 3), 'float32', True)
>>> big = scratch("doc", (MAX_SCRATCH + 1,), np.uint8)  # past the budget: not kept
>>> scratch("doc", (6,), np.float32).base is a.base
True
"""

from __future__ import annotations

import math
import threading

import numpy as np

_local = threading.local()
#: what one thread keeps at most, all names together: a buffer that would take the total past
#: it is allocated per call instead (a large model's layers then pay the page faults, which
#: matter less against their larger work, and an idle thread holds no more than this)
MAX_SCRATCH = 32 << 20


def scratch(name: str, shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialized C-contiguous array for the step ``name``, reusing this thread's buffer.

    The names one call uses must be distinct for the arrays it holds at once; a result that
    is a view of scratch must be copied out before this thread's next call of a path using
    the same name.

    >>> scratch("doc", (4,), np.float64).flags.c_contiguous
    True
    """
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    bufs = _local.__dict__.setdefault("bufs", {})
    buf = bufs.get(name)
    if buf is None or buf.size < nbytes:
        held = sum(b.size for b in bufs.values()) - (0 if buf is None else buf.size)
        if held + nbytes > MAX_SCRATCH:
            return np.empty(shape, dtype)
        buf = bufs[name] = np.empty(max(nbytes, 64), np.uint8)
    return buf[:nbytes].view(dtype).reshape(shape)


def zero_outside(a: np.ndarray, top: int, left: int, h: int, w: int) -> None:
    """Zero ``a``'s first two axes outside the block ``[top:top + h, left:left + w]`` (the
    padding around an image a caller copies in next): a reused buffer keeps old values, and
    clearing only the border writes a fraction of a whole ``fill(0)``.

    >>> a = np.ones((3, 4))
    >>> zero_outside(a, 1, 1, 1, 2); a.tolist()
    [[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    """
    a[:top] = 0
    a[top + h:] = 0
    a[top:top + h, :left] = 0
    a[top:top + h, left + w:] = 0
