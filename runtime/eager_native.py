"""Hot tiny elementwise eager ops on a native C loop.

An eager call on a few elements spends most of its kernel time in numpy's per-call machinery
(``np.maximum(x, 0, out=out, dtype=..., casting=...)`` is about 0.9 µs on 16 floats; a
two-step formula such as ``leaky_relu``'s ``max(x, x * alpha)`` 2.8 µs), where the same loop
compiled as a CPython extension function (:func:`tdflow.lowering.elementwise_native.native_kernel`,
the one large fused expressions already use) costs about 0.12 µs. Building it costs a
compiler run (cached on disk afterwards), which only pays for an op called many times with
the same (shapes, dtypes, attributes): so an eager cache entry starts on the numpy program,
counts its calls, and after :data:`HOT_CALLS` of them switches to the native loop when the
expression has one (exactly rounded operations only; the values are numpy's bit for bit,
NaN and signed zeros included). No compiler, no Python headers, ``TDFLOW_NATIVE=0``, an
expression with no native form, or inputs the native loop refuses at run time (not
C-contiguous, overlapping the result) all keep numpy.

The build runs on a background thread started by the call that reaches the count (the entry
keeps numpy meanwhile): a first build costs a compiler run (0.5 s here), a cached one checking
the compiler's version and loading (20 ms), and neither stalls the caller or the engine, whose
lock that call may hold (an op run at once, ``Engine.run_now``). :func:`wait_builds` waits for
them; ``BACKGROUND = False`` builds in the call itself.

>>> import numpy as np
>>> from tdflow.dialect.formula.expr import Input, maximum
>>> def numpy_relu(ins, out):
...     np.maximum(ins[0], np.float32(0), out=out)
>>> class Entry: run = None
>>> e = Entry()
>>> e.run = first = counting_run(e, numpy_relu, maximum(Input(0), 0.0), ("f32",), "f32", [(4,)], (4,),
...                              hot_calls=2)
>>> x, out = np.array([-1.0, -0.0, 2.0, np.nan], np.float32), np.empty(4, np.float32)
>>> e.run([x], out); e.run([x], out)   # the second call reaches the count: a build starts
>>> wait_builds() and e.run is not first  # the native loop (numpy_relu without a compiler)
True
>>> e.run([x], out); out.tolist()       # numpy: max(-0.0, 0.0) is the second, +0.0
[0.0, 0.0, 2.0, nan]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tdflow.dialect.formula.expr import Expr, inputs_used
from tdflow.lowering.elementwise_native import native_kernel

from .kernels import elementwise as _installs_the_builder  # noqa: F401 - set_builder at import

__all__ = ["BACKGROUND", "HOT_CALLS", "counting_run", "native_run", "wait_builds"]

#: Calls of one eager cache entry after which it switches to the native loop.
HOT_CALLS = 1000
#: True: the native loop is built on a background thread; False: in the call that asks.
BACKGROUND = True

_builds: list[threading.Thread] = []
_builds_lock = threading.Lock()


def _forget_builds_after_fork() -> None:
    global _builds_lock
    _builds_lock = threading.Lock()  # the builds' threads do not survive fork()
    _builds.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_builds_after_fork)


def _in_background(fn: Callable[[], None]) -> None:
    t = threading.Thread(target=fn, name="tdflow-eager-native-build", daemon=True)
    with _builds_lock:
        _builds[:] = [b for b in _builds if b.is_alive()]
        _builds.append(t)
    t.start()


def wait_builds(timeout: float | None = None) -> bool:
    """Wait for the native builds started so far (each at most ``timeout`` seconds); True when
    none is still running.

    >>> wait_builds()
    True
    """
    with _builds_lock:
        pending = list(_builds)
    for t in pending:
        t.join(timeout)
    return not any(t.is_alive() for t in pending)


def counting_run(entry: Any, run: Callable[[list, Any], Any], expr: Expr,
                 in_dtypes: Sequence[str], out_dtype: str, in_shapes: Sequence[tuple],
                 out_shape: tuple, hot_calls: int | None = None) -> Callable[[list, Any], Any]:
    """``run`` (the entry's numpy ``run(inputs, out)``) counting its calls: the call that
    reaches ``hot_calls`` (default :data:`HOT_CALLS`) sets ``entry.run`` back to plain ``run``
    (the count costs nothing afterwards) and builds the native loop (:func:`native_run`, on a
    background thread when :data:`BACKGROUND`), which replaces it once built. Races between
    threads only move the switch by a call or two.

    >>> import numpy as np
    >>> from tdflow.dialect.formula.expr import Input, exp
    >>> class Entry: run = None
    >>> e = Entry(); plain = lambda ins, out: None
    >>> e.run = counting_run(e, plain, exp(Input(0)), ("f32",), "f32", [(2,)], (2,), hot_calls=1)
    >>> e.run([np.zeros(2, np.float32)], np.empty(2, np.float32))
    >>> wait_builds() and e.run is plain  # libm's exp has no native loop
    True
    """
    left = [HOT_CALLS if hot_calls is None else hot_calls]

    def switch() -> None:
        try:
            fast = native_run(run, expr, in_dtypes, out_dtype, in_shapes, out_shape)
        except Exception:  # noqa: BLE001 - any failure to build means numpy, as documented
            fast = None
        if fast is not None:
            entry.run = fast

    def counting(ins: list, out: Any) -> Any:
        left[0] -= 1
        if left[0] == 0:
            entry.run = run  # the count stops here; the native loop replaces it when built
            if BACKGROUND:
                _in_background(switch)
            else:
                switch()
        return run(ins, out)

    return counting


def native_run(run: Callable[[list, Any], Any], expr: Expr, in_dtypes: Sequence[str],
               out_dtype: str, in_shapes: Sequence[tuple], out_shape: tuple
               ) -> Callable[[list, Any], Any] | None:
    """``run(inputs, out)`` on the native loop of ``expr`` for inputs of ``in_shapes`` into an
    output of ``out_shape`` (an input of another shape must be a trailing part of it, read
    again for every row: a last-axis bias), falling back to ``run`` (numpy) for a call the
    loop refuses; ``None`` when there is no native loop (see the module docstring).

    >>> import numpy as np
    >>> from tdflow.dialect.formula.expr import Input
    >>> def numpy_run(ins, out):
    ...     np.add(ins[0], ins[1], out=out)
    >>> fast = native_run(numpy_run, Input(0) + Input(1), ("f32", "f32"), "f32",
    ...                   [(2, 3), (3,)], (2, 3))
    >>> x, b, out = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32), np.empty((2, 3), np.float32)
    >>> (fast or numpy_run)([x, b], out); out.tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    used = sorted(inputs_used(expr))
    if not used or any(in_shapes[k] is None for k in used):
        return None
    rows: set[int] = set()
    row_shape = None
    for k in used:
        s = tuple(in_shapes[k])
        if s != tuple(out_shape):
            if not s or tuple(out_shape[len(out_shape) - len(s):]) != s or row_shape not in (None, s):
                return None  # a general broadcast: numpy's
            row_shape = s
            rows.add(k)
    # waited for here: this is its own thread (or the caller asked for a build in the call)
    fn = native_kernel(expr, in_dtypes, out_dtype, frozenset(rows), frozenset(), True)
    if fn is None:
        return None
    if used == [0]:
        def run1(ins: list, out: Any) -> Any:
            if not fn(ins[0], out):
                run(ins, out)

        return run1
    if used == [0, 1]:
        def run2(ins: list, out: Any) -> Any:
            if not fn(ins[0], ins[1], out):
                run(ins, out)

        return run2

    def runn(ins: list, out: Any) -> Any:
        if not fn(*[ins[k] for k in used], out):
            run(ins, out)

    return runn
