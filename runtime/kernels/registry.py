"""Kernel registry: kernels keyed by op, chosen by a match on device, dtypes and attributes.

This is OneFlow's ``REGISTER_USER_KERNEL(...).SetIsMatchedHob(...)``::

    @register_kernel("tdflow.relu", device="cpu", dtypes=FLOATS, inplace={0: 0})
    def relu(attrs, inputs, outs):
        x, = inputs
        return [np.maximum(x, 0, out=outs[0])]

    k = select_kernel("tdflow.relu", "cpu", ("f32",), {})
    (y,) = k(attrs, [x])                      # outs default to [None, ...]: allocate
    (y,) = k(attrs, [x], [buf])               # write into a preallocated buffer

Calling convention (every kernel): ``kernel.fn(attrs, inputs, outs) -> list[np.ndarray]``.

* ``attrs``: a mapping of typed Python values (``bool``/``int``/``float``/``str``, lists or
  tuples for arrays and shapes, dtype as its MLIR spelling ``"f32"``), complete and normalized
  by the caller (the dialect's ``complete_attrs``: every ``.td`` default filled, axes
  non-negative, window pairs expanded): kernels read ``attrs[name]`` and trust it. Calling a
  :class:`Kernel` object (``k(attrs, inputs)``, for direct callers) completes them first
  (:func:`complete_kernel_attrs`); the runtime's seams call ``k.fn`` with complete ones.
* ``inputs``: one array per operand, in ``ops.td`` order. An absent ``Optional`` operand is
  ``None`` (trailing ones may be left out); a ``Variadic`` operand (``cat``) is spread flat.
* ``outs``: one entry per result, a preallocated array of the result's shape and dtype or
  ``None`` (allocate). A kernel writes into every given buffer and returns the result arrays
  (the given buffers themselves, or new ones). ``inplace={0: 0}`` declares that output 0 may be
  the very buffer of input 0 (the planner still checks shapes and dtypes agree).
* Ops without results (``sgd_update``) update an input and return ``[]``.

Selection: ``select_kernel(op, device, input_dtypes, attrs)`` keeps the kernels of ``op`` whose
device equals ``device``, whose ``dtypes`` (if given) contain ``input_dtypes[0]`` and whose
``match(input_dtypes, attrs)`` (if given) is true, and returns the one with the highest
``priority`` (ties: first registered). No match raises :class:`KernelNotFoundError` listing
every candidate and its constraints. ``kernel_table(device)`` is the same, bound to one device,
as plain data for the lowering's ``select-kernels`` pass (which must not import the runtime):
it offers ``.select(op, input_dtypes, attrs)``, ``.candidates(op)``, ``.get(name)`` and ``.ops()``.

This module imports no kernel module: kernels register into it, and the built-in ones are
loaded before the first query by the loader ``tdflow.runtime.kernels`` adds
(:func:`add_builtin_loader`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from tdflow.dialect.element_types import FLOAT_DTYPES, INT_DTYPES
from tdflow.lowering.kernel_data import best_match
from tdflow.runtime.kernels._blas import blas_scoped
from tdflow.runtime.kernels._kernel_set import KernelSet

from tdflow.core.declarations import ambient, record
from tdflow.core.errors import TdflowError
from tdflow.core.valueclass import field, value_class

KernelFn = Callable[[Mapping[str, Any], Sequence[Any], Sequence[Any]], list[np.ndarray]]
MatchFn = Callable[[tuple[str, ...], Mapping[str, Any]], bool]


class KernelNotFoundError(TdflowError, LookupError):
    """No registered kernel matches; the message lists every candidate and its constraints."""

    def __init__(self, op: str, device: str, input_dtypes: Sequence[str],
                 attrs: Mapping[str, Any], candidates: Sequence[Kernel]) -> None:
        self.op, self.device, self.input_dtypes = op, device, tuple(input_dtypes)
        self.candidates = tuple(candidates)
        # None is an absent optional operand
        dts = ", ".join("none" if d is None else d for d in input_dtypes) or "no inputs"
        if candidates:
            lines = "\n".join(f"  {c.describe()}" for c in candidates)
            msg = (f"no kernel for {op} on device {device!r} with input dtypes ({dts}); "
                   f"registered candidates:\n{lines}")
        else:
            msg = f"no kernel registered for {op} (device {device!r}, input dtypes ({dts}))"
        super().__init__(msg)


def complete_kernel_attrs(op: str, attrs: Mapping[str, Any],
                          inputs: Sequence[Any] | None = None) -> dict[str, Any]:
    """``attrs`` of the standard op ``op`` as a kernel receives them: every ``.td`` default
    filled as the IR holds it, axes made non-negative and pairs expanded at the ``inputs``'
    shapes (arrays, or shapes; flat, as kernels receive them), by the dialect's one
    normalization (``tdflow.dialect.attr_normalize.complete_attrs``). An op the standard
    dialect does not define keeps its attributes as given.

    >>> complete_kernel_attrs("tdflow.reduce_sum", {"axis": [-1]}, [np.zeros((2, 3))])
    {'keepdims': False, 'axis': [1]}
    """
    from tdflow.dialect import standard_dialect
    from tdflow.dialect.attr_normalize import complete_attrs

    shapes = None if inputs is None else [getattr(a, "shape", a) for a in inputs]
    return complete_attrs(standard_dialect().lookup(op), attrs, shapes)


@value_class(frozen=True, eq=False)
class Kernel:
    """A registered kernel; calling it is calling ``fn`` (``outs`` defaults to all ``None``)."""

    name: str
    op: str
    device: str
    fn: KernelFn
    num_outputs: int = 1
    dtypes: frozenset[str] | None = None
    match: MatchFn | None = None
    priority: int = 0
    inplace: Mapping[int, int] = field(default_factory=dict)
    elementwise: Any = None  # an ElementwiseDef when the kernel is built from ELEMENTWISE_OPS
    uses_blas: bool = False  # multithreaded BLAS inside: an engine should not run two at once
    doc: str = ""

    def matches(self, device: str, input_dtypes: Sequence[str], attrs: Mapping[str, Any]) -> bool:
        if device != self.device:
            return False
        if self.dtypes is not None and (not input_dtypes or input_dtypes[0] not in self.dtypes):
            return False
        return self.match is None or bool(self.match(tuple(input_dtypes), attrs))

    def __call__(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any] | None = None) -> list[np.ndarray]:
        """Run with ``attrs`` completed and normalized at the inputs' shapes (a direct call may
        leave defaults out or give a negative axis), into ``outs`` (``None``: allocate)."""
        return self.fn(complete_kernel_attrs(self.op, attrs, inputs), inputs,
                       outs if outs is not None else [None] * self.num_outputs)

    def describe(self) -> str:
        parts = [f"device={self.device}"]
        parts.append("dtypes=" + ("any" if self.dtypes is None else "|".join(_ordered(self.dtypes))))
        if self.match is not None:
            parts.append(f"match={_describe_match(self.match)}")
        if self.priority:
            parts.append(f"priority={self.priority}")
        if self.inplace:
            parts.append("inplace=" + ",".join(f"out{o}<-in{i}" for o, i in self.inplace.items()))
        return f"{self.name} ({', '.join(parts)})"

    def __repr__(self) -> str:
        return f"<Kernel {self.describe()}>"


_DTYPE_ORDER = ("i1",) + INT_DTYPES + FLOAT_DTYPES


def _ordered(dtypes: Iterable[str]) -> list[str]:
    return sorted(dtypes, key=lambda d: (_DTYPE_ORDER.index(d) if d in _DTYPE_ORDER else 99, d))


def _describe_match(fn: Any) -> str:
    return getattr(fn, "description", None) or getattr(fn, "__name__", None) or repr(fn)


class Predicate:
    """A named match predicate (its ``description`` appears in error messages).

    ``spec`` says the same as plain data (``["same_dtype", [1]]``, ``["and", a, b]``...), so the
    shipped kernel-selection table (:mod:`tdflow.lowering.kernel_data`) can evaluate it without
    the runtime; ``None`` for a predicate only Python can evaluate.
    """

    def __init__(self, description: str, fn: MatchFn, spec: Any = None) -> None:
        self.description = description
        self.fn = fn
        self.spec = spec

    def __call__(self, input_dtypes: tuple[str, ...], attrs: Mapping[str, Any]) -> bool:
        return self.fn(input_dtypes, attrs)

    def __and__(self, other: Predicate) -> Predicate:
        spec = (["and", self.spec, other.spec]
                if self.spec is not None and getattr(other, "spec", None) is not None else None)
        return Predicate(f"{self.description} and {other.description}",
                         lambda d, a: self(d, a) and other(d, a), spec)

    def __repr__(self) -> str:
        return self.description


def same_dtype(*indices: int) -> Predicate:
    """Inputs ``indices`` (when present) have input 0's dtype: ``same_dtype(1)``."""

    def check(d: tuple[str, ...], _a: Mapping[str, Any]) -> bool:
        return all(i >= len(d) or d[i] is None or d[i] == d[0] for i in indices)

    return Predicate(f"inputs {list(indices)} have input 0's dtype", check,
                     ["same_dtype", list(indices)])


def all_same_dtype() -> Predicate:
    """Every input has input 0's dtype (``cat``, ``add_n``)."""

    def check(d: tuple[str, ...], _a: Mapping[str, Any]) -> bool:
        return all(t == d[0] for t in d)

    return Predicate("all inputs have input 0's dtype", check, ["all_same_dtype"])


def input_dtype_in(index: int, dtypes: Collection[str]) -> Predicate:
    """Input ``index`` (when present) has one of ``dtypes``."""
    allowed = frozenset(dtypes)

    def check(d: tuple[str, ...], _a: Mapping[str, Any]) -> bool:
        return index >= len(d) or d[index] is None or d[index] in allowed

    return Predicate(f"input {index} in {'|'.join(_ordered(allowed))}", check,
                     ["input_dtype_in", index, _ordered(allowed)])


def attr_in(name: str, values: Collection[Any], default: Any = None) -> Predicate:
    """Attribute ``name`` (default ``default``) is one of ``values``."""
    allowed = tuple(values)

    def check(_d: tuple[str, ...], a: Mapping[str, Any]) -> bool:
        return a.get(name, default) in allowed

    return Predicate(f"{name} in {list(allowed)}", check)


class KernelTable:
    """The kernels of one device (or of all devices when ``device`` is ``None``).

    ``aliases`` maps an op with no kernels of its own to the op whose kernels serve it (a
    context's ``served_by``: ``{"oneflow.relu": "tdflow.relu"}``).
    """

    def __init__(self, kernels: Mapping[str, list[Kernel]] | KernelSet, device: str | None,
                 aliases: Mapping[str, str] | None = None) -> None:
        self.device = device
        if not isinstance(kernels, KernelSet):
            plain = KernelSet()
            for ks in kernels.values():
                for k in ks:
                    plain.add(k)
            kernels = plain
        self.kernels = kernels
        self._aliases = dict(aliases or {})

    def _kernels_of(self, op: str) -> Sequence[Kernel]:
        own = self.kernels.kernels_of(op)
        if own:
            return own
        serving = self._aliases.get(op)
        return self.kernels.kernels_of(serving) if serving is not None else ()

    def ops(self) -> list[str]:
        names = self.kernels.op_names() | set(self._aliases)
        return sorted(op for op in names
                      if any(self.device is None or k.device == self.device
                             for k in self._kernels_of(op)))

    def candidates(self, op: str) -> list[Kernel]:
        return [k for k in self._kernels_of(op)
                if self.device is None or k.device == self.device]

    def get(self, name: str) -> Kernel:
        """A kernel by its unique name (what an ``ExecutablePlan`` launch records)."""
        k = self.kernels.named(name)
        if k is None or (self.device is not None and k.device != self.device):
            raise KeyError(f"no kernel named {name!r} on device {self.device!r}")
        return k

    def select(self, op: str, input_dtypes: Sequence[str], attrs: Mapping[str, Any] | None = None,
               device: str | None = None) -> Kernel:
        device = device or self.device
        if device is None:
            raise ValueError("select() needs a device on an all-devices table")
        attrs = attrs or {}
        candidates = self._kernels_of(op)
        best: Kernel | None = best_match(candidates, device, input_dtypes, attrs)
        if best is None:
            raise KernelNotFoundError(op, device, input_dtypes, attrs, list(candidates))
        return best

    def __contains__(self, op: str) -> bool:
        return bool(self.candidates(op))

    def __repr__(self) -> str:
        n = sum(len(self.candidates(op)) for op in self.ops())
        return f"<KernelTable device={self.device} ops={len(self.ops())} kernels={n}>"


AMBIENT = KernelSet()
"""The process-wide kernels: tdflow's, and those registered outside a context's hooks import."""
_loaded: list[bool] = []
# >0 while tdflow's own kernel modules are being imported (all of them, or one: below)
_loading: list[bool] = []
# names of the kernels added to AMBIENT outside those imports (a user's, a test's)
_foreign: list[str] = []
# >0 while builtin_kernel imports one module for one kernel (see on_demand)
_on_demand: list[bool] = []


def on_demand() -> bool:
    """Whether a kernel module imported now is imported for one kernel of a plan
    (:func:`builtin_kernel`), not by the full load or a user: a module that defines
    ``register_builtin(name=None)`` then registers nothing at import, and the registry calls
    ``register_builtin(name)`` for the kernel asked for (the full load calls it with ``None``:
    every kernel not registered yet).

    >>> on_demand()
    False
    """
    return bool(_on_demand)


def add_kernel(kernel: Kernel, defined_in: str | None = None) -> Kernel:
    """Register an already built :class:`Kernel` (names are unique; see
    :meth:`KernelSet.add`): for the context being loaded when a hooks module of it runs
    (:mod:`tdflow.core.declarations`), in the process-wide set otherwise. ``defined_in`` is
    the module of the user's function (default: that of ``kernel.fn``).
    """
    if defined_in is None:
        defined_in = getattr(inspect.unwrap(kernel.fn), "__module__", None)
    if record("kernel", kernel, defined_in):
        return kernel
    if not _loading:  # a user's (or a test's) kernel: the shipped table no longer says it all
        _foreign.append(kernel.name)
    return AMBIENT.add(kernel)


def default_kernel_name(op: str, device: str) -> str:
    """``cpu.relu`` for a standard op, ``cpu.mylib.twice`` for an op of another dialect (so a
    user's ``mylib.relu`` never takes the standard kernel's name).

    >>> default_kernel_name("tdflow.relu", "cpu"), default_kernel_name("my.relu", "cuda")
    ('cpu.relu', 'cuda.my.relu')
    """
    dialect, _, mnemonic = op.rpartition(".")
    return f"{device}.{mnemonic}" if dialect in ("", "tdflow") else f"{device}.{op}"


def register_kernel(op: str, device: str = "cpu", dtypes: Collection[str] | None = None,
                    match: MatchFn | None = None, priority: int = 0,
                    inplace: Mapping[int, int] | None = None, num_outputs: int = 1,
                    name: str | None = None, elementwise: Any = None,
                    uses_blas: bool = False, source: str | None = None
                    ) -> Callable[[KernelFn], KernelFn]:
    """Decorator registering ``fn(attrs, inputs, outs)`` as a kernel of ``op``.

    This is the public way to give a user's op a kernel (OneFlow's ``REGISTER_USER_KERNEL(...)
    .SetIsMatchedHob(...)``): put it in the op library's hooks module. ``name`` defaults to
    :func:`default_kernel_name` (``"cpu.relu"``, ``"cpu.mylib.twice"``); give a distinct name
    when registering several kernels for one op and device. Re-importing the module that
    registers it is harmless. Returns ``fn`` unchanged. ``uses_blas=True`` (a kernel calling
    numpy's multithreaded BLAS) runs it with tdflow's BLAS thread count, the caller's restored
    after (:mod:`tdflow.runtime.kernels._blas`), and the engine runs one such kernel at a time.

    >>> @register_kernel("doc.twice", device="cpu", dtypes=("f32", "f64"))
    ... def twice(attrs, inputs, outs):
    ...     return [np.multiply(inputs[0], 2, out=outs[0])]
    >>> kernel_table("cpu").select("doc.twice", ("f32",)).name
    'cpu.doc.twice'

    With ``source`` (``device="cuda"``), the kernel is hand-written CUDA C: ``source`` is the
    body of a kernel templated on dtype and shape (``T``, ``N``, ``IN0_DIM0``, ``ATTR_<name>``...:
    :data:`tdflow.runtime.kernels.device.USER_KERNEL_DOC`), registered on ``cuda`` and
    ``cudasim``, and the decorated function gives the launch shape from the static types:
    ``launch(ins, outs, attrs) -> (grid, block)``.

    >>> @register_kernel("doc.neg", device="cuda", dtypes=("f32",), source='''
    ...     for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < N;
    ...          i += gridDim.x * blockDim.x) out0[i] = -in0[i];''')
    ... def neg_launch(ins, outs, attrs):
    ...     return min(1024, (outs[0].numel + 255) // 256), 256
    >>> kernel_table("cudasim").select("doc.neg", ("f32",)).name
    'cudasim.doc.neg'
    """
    if source is not None:
        if device not in ("cuda", "cudasim"):
            raise ValueError(f"register_kernel({op!r}): a CUDA source needs device='cuda', "
                             f"not {device!r}")

        def deco_cuda(launch: Callable[..., Any]) -> Callable[..., Any]:
            register_user_cuda(op, source, launch, num_outputs=num_outputs,
                               dtypes=frozenset(dtypes) if dtypes is not None else None,
                               match=match, priority=priority, name=name)
            return launch

        return deco_cuda

    def deco(fn: KernelFn) -> KernelFn:
        add_kernel(Kernel(
            name=name or default_kernel_name(op, device), op=op, device=device,
            fn=blas_scoped(fn) if uses_blas else fn,
            num_outputs=num_outputs, dtypes=frozenset(dtypes) if dtypes is not None else None,
            match=match, priority=priority, inplace=dict(inplace or {}),
            elementwise=elementwise, uses_blas=uses_blas,
            doc=(fn.__doc__ or "").strip().split("\n")[0]))
        return fn

    return deco


# What fills the registry with the built-in kernels before its first query: the kernel package
# sets it when it is imported (always before this module), so the registry imports no kernel
# module; a loader may query the registry (it sees what is registered so far).
_builtin_loaders: list[Callable[[], None]] = []


def add_builtin_loader(loader: Callable[[], None]) -> None:
    """Run ``loader`` once, before the registry first answers :func:`kernel_table`,
    :func:`select_kernel` or :func:`registered_kernels` (``tdflow.runtime.kernels`` adds its
    ``load_builtin_kernels`` so), or now when the registry has answered already.

    >>> calls = []
    >>> add_builtin_loader(lambda: calls.append("loaded")); kernel_table("cpu") is not None
    True
    >>> calls
    ['loaded']
    """
    if loader in _builtin_loaders:
        return
    _builtin_loaders.append(loader)
    if _loaded:
        loader()


def _load_builtin_kernels() -> None:
    if _loaded:
        return
    _loaded.append(True)  # first: the loaders ask the registry for what is registered
    _loading.append(True)
    try:
        with ambient():  # tdflow's kernels, even when a user's hooks import loads them first
            for loader in list(_builtin_loaders):
                loader()
    except BaseException:
        _loaded.clear()
        raise
    finally:
        _loading.pop()


#: The module whose import installs the native loops' builder (``elementwise_native``), which
#: the full load imports before any kernel runs (``conv`` imports it first); a kernel module
#: loaded alone gets it first too, so its kernels build the same native code.
_FIRST_MODULE = "tdflow.runtime.kernels.elementwise"


def has_foreign_kernels() -> bool:
    """Whether a kernel was registered process-wide outside tdflow's kernel modules (a user's
    ``@register_kernel`` outside a hooks import, a test's): the shipped selection table then
    no longer says which kernel an op of the standard library gets."""
    return bool(_foreign)


def builtin_kernel(name: str, module: str) -> Kernel | None:
    """tdflow's kernel ``name`` with only ``module`` imported (the module whose import registers
    it, as the shipped selection table records), not every kernel module: a CPU program needs
    the few families its ops are in (``tdflow run`` of a small program: ~3 modules of 15, no
    GPU devices' or boxing kernels). ``None`` when that cannot stand for the full load: the
    built-ins are loaded already (then the registry answers), kernels other than tdflow's were
    registered (a user's kernel may take an op's selection: the shipped table does not know
    it), or ``module`` does not register ``name``; the caller then builds the full table.

    >>> builtin_kernel("cpu.softmax", "tdflow.runtime.kernels.softmax") in (
    ...     None, AMBIENT.named("cpu.softmax"))
    True
    """
    if _loaded or _foreign or not module.startswith("tdflow."):
        return None
    import importlib

    _loading.append(True)
    _on_demand.append(True)
    try:
        with ambient():
            importlib.import_module(_FIRST_MODULE)
            mod = importlib.import_module(module)
            register = getattr(mod, "register_builtin", None)
            if register is not None:  # a module that registers its kernels one at a time
                register(name)
    finally:
        _on_demand.pop()
        _loading.pop()
    if _foreign:  # the import ran a user's registration (a plugin's side effect)
        return None
    return AMBIENT.named(name)


def kernel_table(device: str | None = None, aliases: Mapping[str, str] | None = None,
                 kernels: KernelSet | None = None) -> KernelTable:
    """The registered kernels of ``device`` (all devices for ``None``); loads the built-ins.
    ``aliases`` is a context's ``served_by`` (ops served by a standard op's kernels);
    ``kernels`` a context's own set (default: the process-wide one).

    >>> kernel_table("cpu").select("tdflow.relu", ("f32",), {}).name
    'cpu.relu'
    >>> kernel_table("cpu", {"oneflow.relu": "tdflow.relu"}).select("oneflow.relu", ("f32",)).name
    'cpu.relu'
    """
    _load_builtin_kernels()
    return KernelTable(kernels if kernels is not None else AMBIENT, device, aliases)


def select_kernel(op: str, device: str, input_dtypes: Sequence[str],
                  attrs: Mapping[str, Any] | None = None,
                  aliases: Mapping[str, str] | None = None) -> Kernel:
    """The best matching kernel or :class:`KernelNotFoundError` listing the candidates."""
    _load_builtin_kernels()
    return KernelTable(AMBIENT, device, aliases).select(op, input_dtypes, attrs)


def registered_kernels() -> list[Kernel]:
    _load_builtin_kernels()
    return list(AMBIENT)


# -- the GPU devices' kernels ------------------------------------------------------------------
def register_user_cuda(op: str, source: str, launch: Callable[..., Any],
                       **kernel_args: Any) -> None:
    """Register ``source`` (a kernel body: :data:`~tdflow.runtime.kernels.device.USER_KERNEL_DOC`)
    as ``op``'s kernel on ``cuda`` and ``cudasim``; ``kernel_args`` as :class:`Kernel` takes them
    (``name`` gets the device appended)."""
    from tdflow.runtime.kernels.device import GPU_DEVICES, UserCudaKernel

    name = kernel_args.pop("name", None)
    for device in GPU_DEVICES:
        add_kernel(Kernel(
            name=(f"{name}.{device}" if name else default_kernel_name(op, device)), op=op,
            device=device, fn=UserCudaKernel(op, device, source, launch),
            doc=f"a user's CUDA C kernel for {op}", **kernel_args),
            defined_in=getattr(launch, "__module__", None))


def register_generated(op: str, opdef: Any = None, kernels: KernelSet | None = None,
                       generators: Mapping[str, Any] | None = None) -> bool:
    """Register ``op``'s generated CUDA C as its kernel on each GPU device, with the constraints
    of its CPU kernel (dtypes and match predicate; for an elementwise kernel also ``inplace``),
    so ``select-kernels{device=cudasim}`` accepts exactly what the CPU accepts. False when the
    op has no CUDA generator. Idempotent; a device that has a kernel of ``op`` keeps it.
    ``kernels`` is the set to add to (a context's own; default the process-wide one),
    ``generators`` a context's own generators (:func:`tdflow.lowering.cuda.generator_for`).

    >>> register_generated("doc.nothing")  # no generator: an op of no dialect
    False
    """
    from tdflow.lowering.cuda import generator_for
    from tdflow.runtime.kernels.device import GPU_DEVICES, GeneratedKernel

    if generator_for(op, opdef, generators) is None:
        return False
    kernels = kernels if kernels is not None else AMBIENT
    cpu = [k for k in kernels.kernels_of(op) if k.device == "cpu"]
    model = cpu[0] if cpu else None
    for device in GPU_DEVICES:
        if any(k.device == device for k in kernels.kernels_of(op)):
            continue
        num_outputs = len(opdef.results) if opdef is not None else (
            model.num_outputs if model is not None else 1)
        kernels.add(Kernel(
            name=default_kernel_name(op, device), op=op, device=device,
            fn=GeneratedKernel(op, device, opdef, generators), num_outputs=num_outputs,
            dtypes=model.dtypes if model is not None else None,
            match=model.match if model is not None else None,
            inplace=dict(model.inplace) if model is not None and model.elementwise is not None
            else {},
            doc=f"generated CUDA C for {op}"))
    return True
