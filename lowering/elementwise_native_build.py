"""Native modules built concurrently, and used once they are ready.

A compiled plan asks for its native loops while it binds its launches, one after the other;
each used to be compiled there and then, one compiler run at a time (a cold ResNet step waited
for ~26 of them in a row). Here a request starts the build on a small pool of worker threads
(each waits on one compiler child process, so the builds run side by side, at most
:func:`jobs` at once, and start while the plan is still binding) and hands back at once a stand-in for each function
(:func:`deferred`): called before its module is ready, it either waits for it
(``TDFLOW_NATIVE_BUILDS=wait``) or answers ``False`` (``background``, the default), the
native loops' refusal, on which every caller runs the numpy path, whose values are the same
bit for bit, so the switch to the native loop once it is ready is invisible except for speed.
``background`` is the default since a cold first run that waited for its compilers lost the
ONNX ResNet-50's import + compile target (3 s): 0.9 s of g++ in a 1.2 s first run. The test
session sets ``wait`` (the repository's root ``conftest.py``), so a test or doctest that
checks a native function's own answer does not depend on a cold cache's timing.

Safety is the builder's (``kernel_build``: a private cache folder, MAC-checked entries, written
to a temporary file and renamed, loaded from a process-private copy). A worker takes no new
job once the main thread has finished (the interpreter is exiting): the build it is running
completes, its compiler child is waited for, and nothing queued is started. A ``fork()`` child
starts with no pool and no queue (the parent's threads do not exist there).

>>> job = submit(lambda: 41 + 1)
>>> job.result()
42
>>> f = deferred(job, lambda value: (lambda x: x + value))
>>> f(1)
43
"""

from __future__ import annotations

import os
import sysconfig
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a build is queued: a warm process queues none
    from concurrent.futures import Future

#: ``build(source, flags) -> Path``; it may carry ``cached(source, flags) -> Path | None``
Builder = Callable[..., Path]

__all__ = ["BACKGROUND", "deferred", "jobs", "load_or_build", "request", "submit", "wait_all"]

#: True: a stand-in answers ``False`` (numpy runs) until its module is ready; False: its first
#: call waits for the build. Read at every call; from ``TDFLOW_NATIVE_BUILDS`` at import
#: (``wait`` waits; anything else, unset included, is ``background``).
BACKGROUND = os.environ.get("TDFLOW_NATIVE_BUILDS", "background").strip().lower() != "wait"

_lock = threading.Lock()  # the loaded modules and the jobs in flight
_pool_lock = threading.Lock()  # the queue and the workers
_queue: deque[tuple[Future, Callable[[], Any]]] = deque()
_workers: list[threading.Thread] = []
_all: list[Future] = []


def jobs() -> int:
    """How many builds run at once: ``TDFLOW_NATIVE_JOBS``, else one less than the CPUs this
    process may use (at least one): a core is left to the step itself, which runs numpy
    meanwhile under ``background``. Measured on the 2 shared cores of the CI machine (load ~5):
    two compilers at once took 1.8 s each against 0.45 s one at a time, a loss.

    >>> jobs() >= 1
    True
    """
    given = os.environ.get("TDFLOW_NATIVE_JOBS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus - 1)


def submit(build: Callable[[], Any]) -> Future:
    """Run ``build()`` on the pool; its future (an exception in ``build`` is the future's).

    >>> submit(lambda: "done").result()
    'done'
    """
    # here, not at import: concurrent.futures (with logging) is ~3 ms of a warm `tdflow run`,
    # whose native modules all come from the cache
    from concurrent.futures import Future

    fut: Future = Future()
    with _pool_lock:
        _queue.append((fut, build))
        _all.append(fut)
        _workers[:] = [w for w in _workers if w.is_alive()]
        if len(_workers) < min(jobs(), len(_queue) + len(_workers)):
            # not a daemon: an exiting interpreter waits for the compiler child it runs
            w = threading.Thread(target=_work, name="tdflow-native-build")
            _workers.append(w)
            w.start()
    return fut


def _work() -> None:
    while True:
        with _pool_lock:
            if not _queue or not threading.main_thread().is_alive():
                # idle, or the program is exiting: start nothing more (queued jobs are
                # cancelled: a later process builds them)
                if not threading.main_thread().is_alive():
                    while _queue:
                        _queue.popleft()[0].cancel()
                _workers[:] = [w for w in _workers if w is not threading.current_thread()]
                return
            fut, build = _queue.popleft()
        if not fut.set_running_or_notify_cancel():
            continue
        try:
            fut.set_result(build())
        except BaseException as e:  # noqa: BLE001 - the future carries it to whoever asks
            fut.set_exception(e)


def wait_all(timeout: float | None = None) -> bool:
    """Wait for every build submitted so far; whether all are finished.

    >>> wait_all()
    True
    """
    import concurrent.futures

    with _pool_lock:
        pending = list(_all)
    done, not_done = concurrent.futures.wait(pending, timeout=timeout)
    with _pool_lock:
        _all[:] = [f for f in _all if not f.done()]
    return not not_done


def deferred(job: Future, pick: Callable[[Any], Callable[..., Any] | None]) -> Callable[..., Any]:
    """A stand-in for the function ``pick(job.result())`` (``None``: the build failed): called
    before the job is done it waits for it, or answers ``False`` when :data:`BACKGROUND`;
    after, it calls the function (``False`` forever when there is none or the job raised).

    >>> from concurrent.futures import Future
    >>> job = Future()
    >>> f = deferred(job, lambda fns: fns[0])
    >>> job.set_result([lambda x: x * 10]); f(2)
    20
    >>> failed = Future(); failed.set_result(None)
    >>> deferred(failed, lambda fns: None)(2)   # no module: refused, the caller runs numpy
    False
    """
    real: Callable[..., Any] | None = None

    def call(*args: Any) -> Any:
        nonlocal real
        if real is None:
            if BACKGROUND and not job.done():
                return False
            try:
                fn = pick(job.result())
            except Exception:  # noqa: BLE001 - a failed or cancelled build: numpy's path
                fn = None
            real = fn if fn is not None else _refuse
        return real(*args)

    return call


def _refuse(*_args: Any) -> bool:
    return False


_built: dict[str, list[Callable[..., Any]] | None] = {}
_jobs: dict[str, Future] = {}


def request(key: str, builder: Builder | None, source: Callable[[], str | None], module: str,
            names: list[str], flags: tuple[str, ...], wait: bool = False
            ) -> list[Callable[..., Any]] | None:
    """The functions ``names`` of extension ``module`` (``key``: what it is made of), compiled
    from ``source()`` with ``flags`` by ``builder``: the loaded functions when the module is
    loaded or in the builder's cache, else stand-ins (:func:`deferred`) for a build started on
    the pool (``wait``: the build's own answer, waited for). ``None`` when nothing can be
    built: no builder (not remembered: one may be installed later), no Python headers, no
    source, or (``wait``) a failed build.

    >>> request("doc-none", None, lambda: None, "m", ["run"], ()) is None
    True
    """
    with _lock:
        if key in _built:
            return _built[key]
        if builder is None:
            return None
        job = _jobs.get(key)
        if job is None:
            text = source()
            include = sysconfig.get_paths().get("include")
            if text is None or not include or not os.path.isfile(os.path.join(include, "Python.h")):
                _built[key] = None
                return None
            all_flags = (*flags, f"-I{include}")
            cached = getattr(builder, "cached", None)
            path = None if cached is None else _quiet(cached, text, all_flags)
            if path is not None:  # on disk already: load it here (a few ms), no stand-ins
                mod = _load(path, module)
                _built[key] = fns = None if mod is None else [getattr(mod, n) for n in names]
                return fns
            job = _jobs[key] = submit(lambda: _finish(key, builder, text, all_flags, module, names))
    if wait:
        try:
            return job.result()
        except Exception:  # noqa: BLE001 - a cancelled job: no answer
            return None
    return [deferred(job, lambda fns, k=k: None if fns is None else fns[k])
            for k in range(len(names))]


def _quiet(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except (RuntimeError, OSError):  # kernel_build's CompileError is a RuntimeError
        return None


def _finish(key: str, builder: Builder, source: str, flags: tuple[str, ...], module: str,
            names: list[str]) -> list[Callable[..., Any]] | None:
    path = _quiet(builder, source, flags)
    mod = None if path is None else _load(path, module)
    fns = None if mod is None else [getattr(mod, n) for n in names]
    with _lock:
        _built[key] = fns
        _jobs.pop(key, None)
    return fns


def load_or_build(builder: Builder | None, source: str | None, module: str,
                  flags: tuple[str, ...]) -> Any:
    """Compile (or load from the builder's cache) and import extension ``module``, here and
    now; ``None`` on any failure.

    >>> load_or_build(None, "", "tdf_doc", ()) is None
    True
    """
    include = sysconfig.get_paths().get("include")
    if (source is None or builder is None or not include
            or not os.path.isfile(os.path.join(include, "Python.h"))):
        return None
    path = _quiet(builder, source, (*flags, f"-I{include}"))
    return None if path is None else _load(path, module)


def _load(path: Path, module: str) -> Any:
    import importlib.machinery
    import importlib.util

    # The verified file is loaded as it is (an in-memory file's /proc path included): CPython
    # finds an extension's PyInit_<name> from the module's name, the spec's, not the file's.
    loader = importlib.machinery.ExtensionFileLoader(module, str(path))
    spec = importlib.util.spec_from_file_location(module, str(path), loader=loader)
    if spec is None:
        return None
    try:
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
    except ImportError:
        return None
    return mod


def _after_fork_in_child() -> None:
    # the parent's workers do not exist in the child; its queued jobs are the parent's
    global _lock, _pool_lock
    _lock, _pool_lock = threading.Lock(), threading.Lock()
    _queue.clear()
    _workers.clear()
    _all.clear()
    _jobs.clear()  # the parent's builds: the child starts its own


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
