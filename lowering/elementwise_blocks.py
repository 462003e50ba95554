"""Block-by-block evaluation of a rendered numpy program (``lowering/elementwise_numpy.py``).

A fused expression evaluated over whole arrays writes every intermediate to memory and reads it
back; over blocks of :data:`BLOCK` elements of the flattened operands the intermediates stay
in the cache, in scratch buffers of one block reused block after block. Every step is
elementwise, so each output element sees the same ufunc calls on the same values as over the
whole array: the results are bit for bit the same (``tests/runtime/test_elementwise_blocks.py``
checks random expressions with NaN, inf and signed zeros in every dtype).

Used when the array operands share one shape and are C-contiguous (scalars, 0-d operands,
are allowed when no step reads only scalars: such a step would compute one value per element
of the block instead of one 0-d value, which numpy may round differently), the output is
C-contiguous and there are at least two blocks.

>>> import numpy as np
>>> steps = [lambda r: np.multiply(r[0], 2, out=r[1]), lambda r: np.add(r[1], r[0], out=r[2])]
>>> x = np.arange(40000, dtype=np.float32); out = np.empty_like(x)
>>> run_blocks(steps, [None] * 3, [(0, x)], out, 2, 1, [np.empty(BLOCK, np.float32)])
>>> bool((out == 3 * x).all())
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["BLOCK", "USE_BLOCKS", "reads_an_array_each_step", "run_blocks"]

#: Elements per block: with two inputs, a temporary and the output (f32) the working set is
#: 256 KiB, within L2; per block each step costs one ufunc call (~1 us), about 5% at this size.
BLOCK = 65536
#: False: whole arrays as before (read at every call; ``bench/fused_bench.py`` times both).
USE_BLOCKS = True


def reads_an_array_each_step(step_args: Sequence[tuple[int, ...]], step_dest: Sequence[int],
                             arrays: set[int]) -> bool:
    """Whether every step reads a block-shaped value (an array operand or an earlier such
    step's result), so that none computes from scalars alone.

    >>> reads_an_array_each_step([(0, 1), (2, 1)], [2, 3], {0})
    True
    >>> reads_an_array_each_step([(1, 1), (2, 0)], [2, 3], {0})
    False
    """
    blockish = set(arrays)
    for args, d in zip(step_args, step_dest):
        if not any(a in blockish for a in args):
            return False
        blockish.add(d)
    return True


def run_blocks(steps: Sequence[Callable[[list[Any]], None]], r: list[Any],
               arrays: Sequence[tuple[int, np.ndarray]], out: np.ndarray, out_slot: int,
               t0: int, temps: Sequence[np.ndarray]) -> None:
    """Run ``steps`` over blocks: register ``i`` of each ``(i, array)`` pair and the output
    slot get the block's slice of the (C-contiguous) array, registers ``t0...`` the scratch
    ``temps`` (``BLOCK`` elements each, cut for a shorter last block). Other registers
    (constants, 0-d operands) are left as they are in ``r``.
    """
    flat = [(i, a.reshape(-1)) for i, a in arrays]
    flat_out = out.reshape(-1)
    n = flat_out.size
    n_temp = len(temps)
    r[t0:t0 + n_temp] = temps
    for lo in range(0, n, BLOCK):
        hi = lo + BLOCK
        if hi > n:  # the last, shorter block
            r[t0:t0 + n_temp] = [t[:n - lo] for t in temps]
        for i, a in flat:
            r[i] = a[lo:hi]
        r[out_slot] = flat_out[lo:hi]
        for step in steps:
            step(r)
