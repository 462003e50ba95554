"""What CUDA code generation produces: kernel source plus the launches that run it.

A generator turns one op, at static input/output shapes and dtypes and fixed attributes, into a
:class:`KernelCode`: self-contained CUDA C (one or more ``extern "C" __global__`` kernels and the
``__device__`` helpers they use) and the ordered :class:`LaunchSpec` list that computes the op.
Everything a kernel needs to know about sizes is baked into its source as constants (kernels are
specialised on shape and dtype, as the issue asks); a kernel's arguments are buffer pointers and,
for scalar attributes that vary between calls (a ``scalar_mul``'s operand, a learning rate),
values passed at launch, so the source, its digest and the compiled object do not depend on
them:

* ``"in<i>"``: operand ``i``'s device buffer (``None`` for an absent optional operand is
  never passed: generators only name operands that are present);
* ``"out<i>"``: result ``i``'s buffer (or, for an op without results, nothing);
* ``"tmp<i>"``: scratch buffer ``i`` of ``KernelCode.scratch`` (bytes), owned by the backend for
  the duration of the op's launches;
* ``"rng"``: a device ``uint64_t[2]`` holding ``(seed, offset)``, filled by the backend at launch
  time from the host's counter-based RNG state (:mod:`tdflow.runtime.rng`), for ops that draw
  random numbers (``dropout``);
* ``"s<k>"``: scalar ``k`` of ``KernelCode.scalars``, a ``(dtype, value)`` pair passed by value
  in the kernel parameter's C type (``f32`` a ``float``, ``f64`` a ``double``, ``i64`` an
  ``int64_t``, ...). Attributes that decide the code's shape (an axis, a permutation, a dtype,
  a flag choosing a branch) stay baked, and so are the values of the kernels not listed in
  ``docs/cuda.md``.

Kernel names in a generator's source may be anything; :func:`generate` makes them unique by
suffixing the source's digest, and :func:`translation_unit` wraps every code object in its own
namespace, so many ops' kernels compile together in one ``nvcc`` call (``extern "C"`` names are
the only names visible outside).

>>> from tdflow.lowering.cuda import generate
>>> code = generate("tdflow.relu", [TensorSpec((4,), "f32")], [TensorSpec((4,), "f32")], {})
>>> [(ln.args, ln.grid, ln.block) for ln in code.launches], code.scalars  # relu's 0 is s0
([(('in0', 'out0', 's0'), (1, 1, 1), (32, 1, 1))], (('f32', 0.0),))
>>> code.launches[0].kernel.startswith("relu_f32_")
True
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tdflow.core.declarations import Declaring, ambient, declared_by, record
from tdflow.core.errors import TdflowError

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

__all__ = ["TensorSpec", "LaunchSpec", "KernelCode", "CudaCodegenError", "cuda_generator",
           "SCALAR_FORMATS",
           "generate", "generator_for", "generated_ops", "translation_unit", "uniquified",
           "with_defaults",
           "Generator"]


class CudaCodegenError(TdflowError, ValueError):
    """An op (or its shapes, dtypes or attributes) has no CUDA code generator."""


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """A dense, row-major tensor's static shape and MLIR dtype: ``TensorSpec((2, 3), "f32")``."""

    shape: tuple[int, ...]
    dtype: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)


def _dim3(v: int | Sequence[int]) -> tuple[int, int, int]:
    t = (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)
    t = t + (1,) * (3 - len(t))
    if len(t) != 3 or min(t) < 1:
        raise ValueError(f"a launch dimension must be 1-3 positive integers, got {v!r}")
    return t  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """One kernel launch: ``kernel<<<grid, block>>>(args...)`` (static shared memory only).

    >>> LaunchSpec("k", 4, 256, ("in0", "out0")).grid
    (4, 1, 1)
    """

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[str, ...]

    def __init__(self, kernel: str, grid: int | Sequence[int], block: int | Sequence[int],
                 args: Sequence[str]) -> None:
        object.__setattr__(self, "kernel", kernel)
        object.__setattr__(self, "grid", _dim3(grid))
        object.__setattr__(self, "block", _dim3(block))
        object.__setattr__(self, "args", tuple(args))
        for a in self.args:
            if not _ARG.fullmatch(a):
                raise ValueError(f"kernel argument {a!r} is not in<i>, out<i>, tmp<i>, s<i> "
                                 f"or rng")
        threads = self.block[0] * self.block[1] * self.block[2]
        if threads > 1024:
            raise ValueError(f"{kernel}: {threads} threads per block (at most 1024)")

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


#: How each scalar argument type is passed: its ``struct`` format (pycuda's ``prepare``) and
#: its ctypes type (cudasim's launcher reads the value through a pointer).
SCALAR_FORMATS = {"f32": "f", "f64": "d", "i8": "b", "i16": "h", "i32": "i", "i64": "q",
                  "ui8": "B", "ui16": "H", "ui32": "I", "ui64": "Q"}

_ARG = re.compile(r"(in|out|tmp|s)\d+|rng")
_KERNEL_DEF = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(\w+)')


@dataclass(frozen=True)
class KernelCode:
    """Generated code for one op at static types: source, launches, scratch and host uploads.

    ``scratch`` is the byte size of each ``tmp<i>`` buffer; ``zero_outputs`` lists results the
    backend must zero before the launches (accumulating kernels such as scatter-adds);
    ``uploads`` are ``(result index, bytes)`` pairs the backend copies from the host into that
    result before the launches (a ``constant``'s value, too big to bake into source);
    ``op`` and ``key`` say what it was generated for (shown by ``tdflow lower --emit cuda``);
    ``scalars`` are the ``(dtype, value)`` pairs launches pass as ``s<k>``: they are not part of
    the source or the digest (one compiled object serves every value).
    """

    op: str
    source: str
    launches: tuple[LaunchSpec, ...]
    scratch: tuple[int, ...] = ()
    zero_outputs: tuple[int, ...] = ()
    uploads: tuple[tuple[int, bytes], ...] = ()
    key: str = ""
    digest: str = field(default="", compare=False)
    scalars: tuple[tuple[str, int | float], ...] = ()

    def __post_init__(self) -> None:
        for dt, _ in self.scalars:
            if dt not in SCALAR_FORMATS:
                raise ValueError(f"{self.op}: a scalar kernel argument of type {dt} (have: "
                                 f"{', '.join(SCALAR_FORMATS)})")
        for ln in self.launches:
            for a in ln.args:
                if a[0] == "s" and int(a[1:]) >= len(self.scalars):
                    raise ValueError(f"{self.op}: {ln.kernel} passes {a}, but the code has "
                                     f"{len(self.scalars)} scalars")

    @property
    def kernels(self) -> tuple[str, ...]:
        """The distinct kernel names the launches use, in first-use order."""
        return tuple(dict.fromkeys(ln.kernel for ln in self.launches))


Generator = Callable[[Sequence[TensorSpec], Sequence[TensorSpec], Mapping[str, Any]], KernelCode]

_GENERATORS: dict[str, Generator] = {}
_FALLBACKS: list[Callable[[str, OpDef | None], Generator | None]] = []


def cuda_generator(*ops: str) -> Callable[[Generator], Generator]:
    """Register ``gen(inputs, outputs, attrs) -> KernelCode`` as the CUDA generator of ``ops``.

    ``inputs``/``outputs`` are :class:`TensorSpec` lists in the op's operand/result order
    (a variadic operand spread flat; absent optional operands left out), ``attrs`` the
    kernel attributes with every ``.td`` default filled (see :func:`generate`): a generator
    reads ``attrs[name]`` and never restates a default; what a value means (a negative axis,
    a one-entry window) is decided by the helpers of :mod:`tdflow.lowering.cuda._attrs`.
    """

    def deco(fn: Generator) -> Generator:
        if record("generator", (ops, fn), getattr(fn, "__module__", None)):
            return fn  # a hooks module imported for a context: that context's
        for op in ops:
            _GENERATORS[op] = fn
        return fn

    return deco


def own_generators(context: Declaring) -> dict[str, Generator]:
    """The generators ``context``'s hooks modules declare (``@cuda_generator`` in a file given
    to ``load_ops(hooks=...)``), by op: they serve that context only.

    >>> from tdflow.dialect import standard_dialect
    >>> own_generators(standard_dialect())
    {}
    """
    out: dict[str, Generator] = {}
    for ops, fn in declared_by(context, "generator"):
        for op in ops:
            out[op] = fn
    return out


def add_fallback(finder: Callable[[str, OpDef | None], Generator | None]) -> None:
    """A finder asked, for an op without a registered generator, whether it can make one from
    the op's definition (``finder(op_name, opdef)``): formula ops get theirs this way."""
    _FALLBACKS.append(finder)


#: Modules of this package that hold no generators (the rest, but ``_``-prefixed helpers, do).
_INFRASTRUCTURE = frozenset({"code", "common"})
_loaded = False


def _load_builtin() -> None:
    """Import every generator module of this package once, so that they register.

    The modules are found by listing the package's folder, so a new family module needs no
    edit here; importing them by name (not through the package object) keeps this module out
    of an import cycle with ``tdflow.lowering.cuda`` and its generator modules.
    """
    global _loaded
    if _loaded:
        return
    package = __name__.rpartition(".")[0]
    with ambient():  # tdflow's generators, even when a user's hooks import loads them first
        for name in sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])):
            if name not in _INFRASTRUCTURE and not name.startswith("_"):
                importlib.import_module(f"{package}.{name}")
    _loaded = True


def generator_for(op: str, opdef: OpDef | None = None,
                  own: Mapping[str, Generator] | None = None) -> Generator | None:
    """The generator of ``op``: a context's ``own`` (:func:`own_generators`), else a registered
    one, else one derived from ``opdef``'s formula."""
    _load_builtin()
    gen = own.get(op) if own else None
    if gen is None:
        gen = _GENERATORS.get(op)
    if gen is not None:
        return gen
    for finder in _FALLBACKS:
        gen = finder(op, opdef)
        if gen is not None:
            return gen
    return None


def generated_ops() -> list[str]:
    """Every op with a registered CUDA generator (formula ops of user libraries come on top)."""
    _load_builtin()
    return sorted(_GENERATORS)


def generate(op: str, inputs: Sequence[TensorSpec], outputs: Sequence[TensorSpec],
             attrs: Mapping[str, Any], opdef: OpDef | None = None,
             generator: Generator | None = None) -> KernelCode:
    """Generate CUDA C for ``op`` at these static types; kernel names made unique.

    The attributes contract: the generator receives ``attrs`` complete and normalized
    (:func:`with_defaults`, from ``opdef`` or the standard dialect's definition of ``op``, at
    the inputs' shapes): it reads ``attrs[name]`` and trusts it. Its callers in tdflow already
    pass such attributes (a compiled program's ``select_kernels.kernel_attrs``, an eager
    call's ``OpRunner``), so for them this changes nothing; a direct call may leave defaults
    out or give a negative axis.

    Raises :class:`CudaCodegenError` naming the op when it has no generator or the generator
    refuses the types (a dtype it does not implement, say). ``generator``: the one to use (a
    context's own), instead of looking ``op``'s up.
    """
    gen = generator if generator is not None else generator_for(op, opdef)
    if gen is None:
        raise CudaCodegenError(f"no CUDA code generator for {op}")
    ins, outs = tuple(inputs), tuple(outputs)
    try:
        code = gen(ins, outs, with_defaults(op, attrs, opdef, ins))
    except CudaCodegenError:
        raise
    except (ValueError, KeyError, TypeError, NotImplementedError) as e:
        types = ", ".join(f"{'x'.join(map(str, s.shape)) or 'scalar'}x{s.dtype}" for s in ins)
        raise CudaCodegenError(f"{op}: cannot generate CUDA code for inputs ({types}): {e}") from e
    return uniquified(code, op, ins, outs)


def with_defaults(op: str, attrs: Mapping[str, Any], opdef: OpDef | None = None,
                  inputs: Sequence[TensorSpec] | None = None) -> dict[str, Any]:
    """``attrs`` as generators receive them: the dialect's one normalization
    (:func:`~tdflow.dialect.attr_normalize.complete_attrs`): every ``.td`` default filled as
    the IR would hold it (an ``f32`` default rounded), and, given the ``inputs``' specs, axes
    made non-negative and checked, pairs expanded. The definition is ``opdef``, else the
    standard dialect's ``op``; an op known to neither keeps its attributes as given.

    >>> with_defaults("tdflow.tril", {"diagonal": 1})["is_floating_fill_value"]
    False
    >>> with_defaults("tdflow.cat", {"axis": -1}, inputs=[TensorSpec((2, 3), "f32")] * 2)["axis"]
    1
    """
    from tdflow.dialect.attr_normalize import complete_attrs

    d = opdef
    if d is None:
        from tdflow.dialect import standard_dialect

        d = standard_dialect().lookup(op)
    shapes = None if inputs is None else [s.shape for s in inputs]
    return complete_attrs(d, attrs, shapes)


def uniquified(code: KernelCode, op: str, ins: Sequence[TensorSpec],
               outs: Sequence[TensorSpec]) -> KernelCode:
    """``code`` with every kernel name suffixed by the digest of its source, and its ``key``
    and ``digest`` set: what :func:`generate` returns for a generator's code (a user's kernel
    body goes through it too), so many codes compile together in one translation unit.

    >>> c = KernelCode("my.op", 'extern "C" __global__ void k(float* y) {}',
    ...                (LaunchSpec("k", 1, 32, ("out0",)),))
    >>> u = uniquified(c, "my.op", [], [TensorSpec((4,), "f32")])
    >>> u.launches[0].kernel == f"k_{u.digest}", u.key
    (True, 'my.op() -> ((4,):f32)')
    """
    # every kernel of the source gets the suffix (extern "C" names ignore namespaces), not
    # only the launched ones; the launched kernels are part of the identity too, since the
    # simulator makes its entry points from them
    names = tuple(dict.fromkeys((*_KERNEL_DEF.findall(code.source), *code.kernels)))
    digest = hashlib.sha256("\0".join((code.source, *code.kernels)).encode()).hexdigest()[:12]
    source = code.source
    rename = {n: f"{n}_{digest}" for n in names}
    if names:
        source = re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b",
                        lambda m: rename[m.group(1)], source)
    launches = tuple(LaunchSpec(rename[ln.kernel], ln.grid, ln.block, ln.args)
                     for ln in code.launches)
    key = code.key or (f"{op}(" + ", ".join(f"{s.shape}:{s.dtype}" for s in ins) + ") -> ("
                       + ", ".join(f"{s.shape}:{s.dtype}" for s in outs) + ")")
    return KernelCode(op, source, launches, code.scratch, code.zero_outputs, code.uploads, key,
                      digest, code.scalars)


def translation_unit(codes: Sequence[KernelCode], prelude: str) -> str:
    """One ``.cu`` file holding every distinct code object, each in its own namespace, after
    ``prelude`` (the CUDA headers for nvcc, the simulator's shim for g++)."""
    seen: dict[str, KernelCode] = {}
    for c in codes:
        seen.setdefault(c.digest, c)
    parts = [prelude.rstrip() + "\n"]
    for digest, c in seen.items():
        parts.append(f"// ---- {c.key}\nnamespace tdf_{digest} {{\n{c.source.rstrip()}\n}}"
                     f"  // namespace tdf_{digest}\n")
    return "\n".join(parts)
