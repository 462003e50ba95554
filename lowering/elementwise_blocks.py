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

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["BLOCK", "USE_BLOCKS", "BlockRunner", "reads_an_array_each_step", "run_blocks"]

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


class BlockRunner:
    """A rendered program's block path: ``runner(r, inputs, out)`` evaluates block by block
    and returns ``out`` (allocated when ``None``), or returns ``None`` when the operands do not
    allow it (then the caller runs whole arrays). ``r`` is the call's register list with the
    inputs and constants in place; the other arguments describe the program's steps, as
    ``render_numpy`` lays them out.
    """

    def __init__(self, steps: Sequence[Callable[[list[Any]], None]], used_inputs: Sequence[int],
                 step_args: Sequence[tuple[int, ...]], step_dest: Sequence[int],
                 temp_dtypes: Sequence[Any], out_dtype: Any, out_slot: int, t0: int,
                 warns: bool) -> None:
        self.steps, self.used_inputs = steps, list(used_inputs)
        self.step_args, self.step_dest = step_args, step_dest
        self.temp_dtypes, self.out_dtype = list(temp_dtypes), out_dtype
        self.out_slot, self.t0, self.warns = out_slot, t0, warns
        self.scalar_ok: dict[frozenset[int], bool] = {}  # array operands -> no scalar-only step
        self.local = threading.local()  # one block of scratch per thread

    def __call__(self, r: list[Any], inputs: Sequence[np.ndarray],
                 out: np.ndarray | None) -> np.ndarray | None:
        if not USE_BLOCKS:
            return None
        shape = None
        arrays = []
        for i in self.used_inputs:
            a = inputs[i]
            if type(a) is not np.ndarray:
                return None
            if a.ndim == 0:
                continue
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                return None
            if not a.flags.c_contiguous:
                return None
            arrays.append(i)
        if shape is None or math.prod(shape) < 2 * BLOCK:
            return None
        if len(arrays) != len(self.used_inputs):
            key = frozenset(arrays)
            ok = self.scalar_ok.get(key)
            if ok is None:
                ok = reads_an_array_each_step(self.step_args, self.step_dest, set(arrays))
                self.scalar_ok[key] = ok
            if not ok:
                return None
        if out is None:
            out = np.empty(shape, self.out_dtype)
        elif out.shape != shape or not out.flags.c_contiguous:
            return None
        temps = self.local.__dict__.get("temps")
        if temps is None:
            temps = self.local.temps = [np.empty(BLOCK, dt) for dt in self.temp_dtypes]
        pairs = [(i, inputs[i]) for i in arrays]
        if self.warns:
            with np.errstate(all="ignore"):
                run_blocks(self.steps, r, pairs, out, self.out_slot, self.t0, temps)
        else:
            run_blocks(self.steps, r, pairs, out, self.out_slot, self.t0, temps)
        return out
