"""Kernel selection from data: the standard ops' CPU kernels as shipped, without the runtime.

``select-kernels`` only needs each kernel's name, device, dtypes, match constraints, priority
and in-place pairs, not its numpy code; building the runtime's kernel table for that imports
numpy and ~35 runtime modules (~100 ms of a ~200 ms ``tdflow lower``). ``kernel_table_cpu.json``
holds those facts for the standard context's ``cpu`` table, written from the runtime's registry
by ``python -m tdflow.runtime.kernel_data_gen`` (a test checks that the shipped file equals a
fresh build, so it cannot drift). :class:`DataKernelTable` answers ``select``, ``candidates``,
``ops`` and ``__contains__`` from it exactly as the runtime's ``KernelTable`` does; ``get`` (a
kernel's code, for constant folding) asks the real table, built on first use by the ``load``
callable the caller hands in (lowering never imports the runtime).

>>> t = DataKernelTable(shipped_cpu_table(), load=None)
>>> t.select("tdflow.relu", ("f32",)).name, dict(t.select("tdflow.relu", ("f32",)).inplace)
('cpu.relu', {0: 0})
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tdflow.core.valueclass import value_class

SHIPPED = Path(__file__).with_name("kernel_table_cpu.json")
FORMAT = 1


@value_class(frozen=True)
class DataKernel:
    """One kernel as the shipped table describes it (what selection needs, no code)."""

    name: str
    op: str
    device: str
    dtypes: frozenset[str] | None
    match: Any  # a predicate's ``spec`` (plain data), or None
    priority: int
    inplace: Mapping[int, int]
    description: str  # the runtime kernel's ``describe()``, for the no-match message
    module: str | None = None  # the module whose import registers it (CPU kernels), or None

    def matches(self, device: str, input_dtypes: Sequence[str], attrs: Mapping[str, Any]) -> bool:
        """The runtime ``Kernel.matches``, with the match predicate read from its spec.

        >>> k = DataKernel("cpu.x", "t.x", "cpu", frozenset({"f32"}), ["same_dtype", [1]], 0,
        ...                {}, "")
        >>> k.matches("cpu", ("f32", "f32"), {}), k.matches("cpu", ("f32", "i32"), {})
        (True, False)
        """
        if device != self.device:
            return False
        if self.dtypes is not None and (not input_dtypes or input_dtypes[0] not in self.dtypes):
            return False
        return self.match is None or evaluate(self.match, tuple(input_dtypes), attrs)

    def describe(self) -> str:
        """As the runtime kernel describes itself (error messages)."""
        return self.description


def evaluate(spec: Any, d: tuple[Any, ...], attrs: Mapping[str, Any]) -> bool:
    """A predicate spec (``runtime.kernels.registry.Predicate.spec``) on input dtypes ``d``.

    >>> evaluate(["input_dtype_in", 1, ["i32", "i64"]], ("f32", "i64"), {})
    True
    >>> evaluate(["and", ["all_same_dtype"], ["same_dtype", [1]]], ("f32", "f16"), {})
    False
    """
    kind = spec[0]
    if kind == "same_dtype":
        return all(i >= len(d) or d[i] is None or d[i] == d[0] for i in spec[1])
    if kind == "input_dtype_in":
        i = spec[1]
        return i >= len(d) or d[i] is None or d[i] in spec[2]
    if kind == "all_same_dtype":
        return all(t == d[0] for t in d)
    if kind == "and":
        return evaluate(spec[1], d, attrs) and evaluate(spec[2], d, attrs)
    raise ValueError(f"unknown kernel match spec {spec!r}")


def best_match(candidates: Sequence[Any], device: str, input_dtypes: Sequence[str],
               attrs: Mapping[str, Any]) -> Any:
    """The candidate kernel (anything with ``matches`` and ``priority``) that matches, of
    highest priority, the first registered among equals; ``None`` when none matches. The
    runtime's kernel table selects with it too, so the two tables choose alike.

    >>> class K:
    ...     def __init__(self, p, ok): self.priority, self.ok = p, ok
    ...     def matches(self, device, dtypes, attrs): return self.ok
    >>> best_match([K(0, True), K(2, True), K(2, True), K(5, False)], "cpu", ["f32"], {}).priority
    2
    """
    best = None
    for k in candidates:
        if k.matches(device, input_dtypes, attrs) and (best is None or k.priority > best.priority):
            best = k
    return best


def shipped_cpu_table() -> dict[str, Any]:
    """The shipped table's JSON data (``{"format", "device", "kernels", "aliases"}``).

    >>> shipped_cpu_table()["device"]
    'cpu'
    """
    with open(SHIPPED, encoding="utf-8") as fh:
        return json.load(fh)


class DataKernelTable:
    """The runtime's ``KernelTable`` interface over the shipped data; ``load()`` gives the real
    table the first time a kernel's code is needed (``get``)."""

    def __init__(self, data: Mapping[str, Any], load: Callable[[], Any] | None) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"kernel table format {data.get('format')!r}, expected {FORMAT}")
        self.device = data["device"]
        # Each op's entries become DataKernels when the op is first asked about: a program
        # asks about a handful of the ~150 ops (~440 kernels: a few ms of `lower`'s start-up)
        self._entries: dict[str, list[Mapping[str, Any]]] = {}
        self._by_name: dict[str, Mapping[str, Any]] = {}
        for k in data["kernels"]:
            self._entries.setdefault(k["op"], []).append(k)
            self._by_name[k["name"]] = k
        self._by_op: dict[str, list[DataKernel]] = {}
        self._aliases = dict(data["aliases"])
        self._load = load
        self._real: Any = None

    def _own(self, op: str) -> list[DataKernel]:
        """``op``'s own kernels (made from their entries on first use)."""
        own = self._by_op.get(op)
        if own is None:
            own = self._by_op[op] = [
                DataKernel(k["name"], k["op"], k["device"],
                           None if k["dtypes"] is None else frozenset(k["dtypes"]), k["match"],
                           k["priority"], {o: i for o, i in k["inplace"]}, k["describe"],
                           k.get("module")) for k in self._entries.get(op, ())]
        return own

    def _kernels_of(self, op: str) -> Sequence[DataKernel]:
        own = self._own(op)
        if own:
            return own
        serving = self._aliases.get(op)
        return self._own(serving) if serving is not None else ()

    def ops(self) -> list[str]:
        """Every op with a kernel on this device, sorted."""
        names = set(self._entries) | set(self._aliases)
        return sorted(op for op in names
                      if any(k["device"] == self.device for k in self._entries_of(op)))

    def _entries_of(self, op: str) -> Sequence[Mapping[str, Any]]:
        """The entries ``_kernels_of`` makes its kernels from (an alias: its server's)."""
        own = self._entries.get(op)
        if own:
            return own
        serving = self._aliases.get(op)
        return self._entries.get(serving, ()) if serving is not None else ()

    def candidates(self, op: str) -> list[DataKernel]:
        """``op``'s kernels on this device, in registration order."""
        return [k for k in self._kernels_of(op) if k.device == self.device]

    def select(self, op: str, input_dtypes: Sequence[str], attrs: Mapping[str, Any] | None = None,
               device: str | None = None) -> DataKernel:
        """The matching kernel of highest priority (ties: first registered); ``LookupError``
        with the runtime's message listing every candidate when none matches."""
        device = device or self.device
        candidates = self._kernels_of(op)
        best = best_match(candidates, device, input_dtypes, attrs or {})
        if best is None:
            raise LookupError(_not_found(op, device, input_dtypes, candidates))
        return best

    def module_of(self, name: str) -> str | None:
        """The module whose import registers the kernel ``name`` (``None``: unknown here, or a
        kernel only the full load makes, such as a GPU device's generated one).

        >>> DataKernelTable(shipped_cpu_table(), load=None).module_of("cpu.softmax")
        'tdflow.runtime.kernels.softmax'
        """
        k = self._by_name.get(name)
        return None if k is None else k.get("module")

    def get(self, name: str) -> Any:
        """The runtime's kernel named ``name`` (its code), from the table ``load`` builds."""
        if self._real is None:
            if self._load is None:
                raise KeyError(f"no kernel code for {name!r}: this table holds no loader")
            self._real = self._load()
        return self._real.get(name)

    def __contains__(self, op: str) -> bool:
        return bool(self.candidates(op))


def _not_found(op: str, device: str, input_dtypes: Sequence[str],
               candidates: Sequence[DataKernel]) -> str:
    """``KernelNotFoundError``'s message, word for word."""
    dts = ", ".join("none" if d is None else d for d in input_dtypes) or "no inputs"
    if candidates:
        lines = "\n".join(f"  {c.describe()}" for c in candidates)
        return (f"no kernel for {op} on device {device!r} with input dtypes ({dts}); "
                f"registered candidates:\n{lines}")
    return f"no kernel registered for {op} (device {device!r}, input dtypes ({dts}))"
