"""The dependency engine: MXNet's design, in Python.

Work is pushed as an *op*: a callable plus the variables it reads and the variables it writes.
The engine runs ops as soon as their dependencies allow, and never in an order a program could
observe as different from push order:

* reads of one variable may run together;
* a write runs after every earlier read and write of its variables (RAW, WAR, WAW), and every
  later op on those variables waits for it;
* an op that raises marks the variables it writes as *failed* (their values are poison); ops
  that later read a failed variable do not run and pass the failure on to what they write; an
  op that overwrites a failed variable without reading it runs, and its success clears the
  failure. A failure surfaces at every ``wait`` on a failed variable, and once at the next
  ``wait_all`` (unless a ``wait`` reported it first), as an :class:`EngineError` naming the
  failing op and its location, chained (``__cause__``) to the original exception.

Each variable keeps a FIFO queue of the ops waiting on it (MXNet's ``ThreadedVar``); an op
holds a counter of dependencies not yet granted, and runs when it reaches zero.

>>> eng = NaiveEngine()
>>> a, b = eng.new_var("a"), eng.new_var("b")
>>> box = {}
>>> eng.push(lambda: box.__setitem__("a", 2), reads=(), writes=(a,), name="init")
>>> eng.push(lambda: box.__setitem__("b", box["a"] * 21), reads=(a,), writes=(b,), name="mul")
>>> eng.wait(b); box["b"]
42

Threads and BLAS. :class:`ThreadedEngine` sizes its pool to the machine: ``os.cpu_count() - 1``
worker threads (at least one), because the calling thread works too: it runs ready tiny ops
inline at push time and helps drain the ready queue while it waits. On 2 cores that is one
worker plus the caller, never two workers. numpy's BLAS already spreads one large matmul over
every core, and a library cannot change BLAS's thread count after numpy is imported, so ops
pushed with ``uses_blas=True`` (or named in :data:`BLAS_OP_NAMES`) take a single *BLAS slot*:
at most one of them runs at a time, and it has all the cores to itself. ``TDFLOW_ENGINE_WORKERS`` overrides the pool size.

Ops never pay a thread hand-off for nothing: an op whose dependencies are all granted at push
time runs inline on the calling thread when it is cheap (``cost`` at most :data:`INLINE_COST`)
or when nothing else is in flight, whatever its cost (a worker would only add a hand-off and a
wake-up: the caller would block on the result next). A costly ready op goes to the pool only
while another op is still running or queued, where it can overlap that op. Ops that become ready when another op completes are run by the
thread that completed it, in a loop, without waking anybody (bulk execution). The eager path goes
one step further for pure kernels of at most :data:`NOW_COST`: :meth:`Engine.run_now` runs them at
once under the engine's lock when nothing is pending on their inputs, and their results need no
var at all.
"""

from .base import BLAS_OP_NAMES, INLINE_COST, MAX_UNREPORTED, NOW_COST, Engine, EngineError, Var
from .default import ENGINE_KINDS, get_engine, set_engine
from .naive import NaiveEngine
from .threaded import ThreadedEngine, default_workers

__all__ = [
    "BLAS_OP_NAMES",
    "ENGINE_KINDS",
    "INLINE_COST",
    "MAX_UNREPORTED",
    "NOW_COST",
    "Engine",
    "EngineError",
    "NaiveEngine",
    "ThreadedEngine",
    "Var",
    "default_workers",
    "get_engine",
    "set_engine",
]
