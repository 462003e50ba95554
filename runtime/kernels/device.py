"""Kernels of the GPU devices (``cuda``, ``cudasim``): every op is its generated CUDA code.

For each op with a CUDA generator (``tdflow.lowering.cuda``), a :class:`GeneratedKernel` is
registered on each GPU device (:func:`~tdflow.runtime.kernels.registry.register_generated`,
with the CPU kernel's constraints). Calling one asks the device's backend, found by name
(:func:`tdflow.runtime.backends.get_backend`), to generate (once per shapes, dtypes and
attributes), compile (once per source) and launch the op's code:
``backend.run_op(op, attrs, inputs, outs, opdef)``. The code is memoised here
(:func:`generated_code`), keyed by the buffers' :class:`TensorSpec` and the attributes, so a
plan's loader and ``tdflow lower --emit cuda`` need no backend.

>>> from tdflow.runtime.kernels.registry import kernel_table
>>> kernel_table("cudasim").select("tdflow.relu", ("f32",), {}).name
'cudasim.relu'
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tdflow.dialect.types import dtype_from_numpy
from tdflow.lowering.cuda import TensorSpec

if TYPE_CHECKING:
    from tdflow.dialect.opdef import OpDef

GPU_DEVICES = ("cudasim", "cuda")


class GeneratedKernel:
    """``fn(attrs, inputs, outs)`` of a GPU device: the backend runs the op's generated code."""

    def __init__(self, op: str, device: str, opdef: OpDef | None = None,
                 generators: Mapping[str, Any] | None = None) -> None:
        self.op, self.device, self.opdef = op, device, opdef
        # a context's own generator of the op (its hooks module's @cuda_generator), if any
        self.generator = generators.get(op) if generators else None
        self.__module__ = __name__
        self.__qualname__ = f"GeneratedKernel[{device}:{op}]"
        self.__doc__ = f"{op} on {device}: generated CUDA C"
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        backend = self._backend
        if backend is None:
            from tdflow.runtime.backends import get_backend

            backend = self._backend = get_backend(self.device)
        return backend

    def __call__(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> list[Any]:
        return self.backend.run_op(self.op, attrs, inputs, outs, self.opdef,
                                   generator=self.generator)

    def code_for(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> Any:
        """The :class:`KernelCode` a call with buffers of these shapes and dtypes runs
        (anything with ``.shape`` and a numpy ``.dtype`` will do): what a plan's loader
        compiles in one go (``backend.prepare``)."""
        return generated_code(self.op, attrs, inputs, outs, self.opdef, self.generator)


_CODES: dict[Any, Any] = {}
# Generating is cheap (Python); compiling is what the digest-keyed module caches keep. Codes that
# differ only in their scalars share one compiled object, so forgetting them costs a re-render.
_CODES_LIMIT = 4096


def generated_code(op: str, attrs: Mapping[str, Any], inputs: Sequence[Any],
                   outs: Sequence[Any], opdef: OpDef | None = None, generator: Any = None) -> Any:
    """``op``'s generated code for buffers of these shapes and dtypes (memoised); needs no
    backend, so ``tdflow lower --emit cuda`` works on machines without CUDA. ``generator``:
    a context's own generator of ``op`` (default: the registered one)."""
    from tdflow.dialect.infer import holds_constant
    from tdflow.lowering.cuda import generate
    ins, res = specs_of(inputs), specs_of(outs)
    attrs = with_segments(attrs, inputs, opdef)  # as the backends do: the same digest
    if holds_constant(attrs):
        # a tensor constant's attribute compares by name and type (a dense_resource blob's
        # data is the module's): two models' same-named weights would share one upload
        return generate(op, ins, res, attrs, opdef, generator)
    key = (op, ins, res, attrs_key(attrs), id(opdef), id(generator))
    code = _CODES.get(key)
    if code is None:
        if len(_CODES) >= _CODES_LIMIT:  # scalar values vary without bound (an lr schedule)
            _CODES.clear()
        code = _CODES[key] = generate(op, ins, res, attrs, opdef, generator)
    return code


# -- user CUDA kernels -------------------------------------------------------------------------
USER_KERNEL_DOC = """How a hand-written CUDA kernel body is templated (``register_kernel(op, device="cuda",
source=BODY)``), as OneFlow's ``.cu`` kernels are on dtype and shape. BODY is the body of

    extern "C" __global__ void kernel(const T_IN0* __restrict__ in0, ..., T_OUT0* out0, ...)

(one pointer per present operand, then one per result), compiled once per input/output
shapes, dtypes and attribute values, with these constants defined before it:

* ``T``: the C type of input 0 (of result 0 for an op without operands); ``T_IN<i>`` and
  ``T_OUT<k>`` the C type of each operand and result (``__half``/``__nv_bfloat16`` for
  f16/bf16: load and store them with ``__half2float``/``__float2half`` and friends);
* ``N``: the number of elements of result 0 (of input 0 for an op without results);
* ``IN<i>_NUMEL``, ``IN<i>_NDIM``, ``IN<i>_DIM<d>`` (and ``OUT<k>_...``): each tensor's
  element count, rank and sizes, and ``IN0_SHAPE``/``OUT0_SHAPE`` as ``{d0, d1, ...}``
  initialiser text for a local array;
* ``ATTR_<name>``: each bool, integer or float attribute's value (``bool``, ``long long``,
  ``double``).

All are ``constexpr`` (``long long`` for sizes). The decorated function returns the launch
shape from the static types: ``launch(ins, outs, attrs) -> (grid, block)`` where ``ins`` and
``outs`` are :class:`~tdflow.lowering.cuda.TensorSpec` lists; grid and block are an int or a
1-3 tuple. The same source serves ``cuda`` (nvcc) and ``cudasim`` (g++), cached like
generated kernels.
"""


class UserCudaKernel(GeneratedKernel):
    """A user's CUDA kernel body (see :data:`USER_KERNEL_DOC`) as a GPU device's kernel."""

    def __init__(self, op: str, device: str, source: str, launch: Any) -> None:
        super().__init__(op, device)
        self.source, self.launch = source, launch
        self.__qualname__ = f"UserCudaKernel[{device}:{op}]"
        self.__doc__ = f"{op} on {device}: a user's CUDA C kernel"
        self._codes: dict[Any, Any] = {}

    def __call__(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> list[Any]:
        if any(o is None for o in outs):
            raise ValueError(f"{self.op}: a CUDA kernel writes into preallocated results")
        return self.backend.run(self.code_for(attrs, inputs, outs), inputs, outs)

    def code_for(self, attrs: Mapping[str, Any], inputs: Sequence[Any],
                 outs: Sequence[Any]) -> Any:
        ins, res = specs_of(inputs), specs_of(outs)
        key = (ins, res, attrs_key(attrs))
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = user_kernel_code(self.op, self.source, self.launch,
                                                       ins, res, attrs)
        return code


def user_kernel_code(op: str, body: str, launch: Any, ins: Sequence[Any], outs: Sequence[Any],
                     attrs: Mapping[str, Any]) -> Any:
    """The :class:`KernelCode` of a user's kernel body at these types (USER_KERNEL_DOC).

    >>> from tdflow.lowering.cuda import TensorSpec
    >>> c = user_kernel_code("my.neg", "for (long long i = threadIdx.x; i < N; i += blockDim.x)"
    ...                      " out0[i] = -in0[i];", lambda i, o, a: (1, 32),
    ...                      [TensorSpec((5,), "f32")], [TensorSpec((5,), "f32")], {})
    >>> "constexpr long long N = 5;" in c.source, c.launches[0].block
    (True, (32, 1, 1))
    """
    from tdflow.lowering.cuda import KernelCode, LaunchSpec
    from tdflow.lowering.cuda.code import CudaCodegenError, uniquified
    from tdflow.lowering.cuda.common import ctype

    lines = [f"// {op}: a user's kernel"]
    params = []
    for side, specs in (("IN", ins), ("OUT", outs)):
        for i, s in enumerate(specs):
            p = f"{side}{i}"
            lines.append(f"typedef {ctype(s.dtype)} T_{p};")
            lines.append(f"constexpr long long {p}_NUMEL = {s.numel}; "
                         f"constexpr int {p}_NDIM = {s.ndim};")
            lines.extend(f"constexpr long long {p}_DIM{d} = {n};" for d, n in enumerate(s.shape))
            lines.append(f"#define {p}_SHAPE {{{', '.join(map(str, s.shape)) or '1'}}}")
            params.append(f"const T_{p}* __restrict__ in{i}" if side == "IN"
                          else f"T_{p}* out{i}")
    first = ins[0] if ins else outs[0]
    lines.append(f"typedef {ctype(first.dtype)} T;")
    lines.append(f"constexpr long long N = {(outs[0] if outs else ins[0]).numel};")
    for name, v in sorted(attrs.items()):
        if not name.isidentifier():
            continue
        if isinstance(v, bool):
            lines.append(f"constexpr bool ATTR_{name} = {'true' if v else 'false'};")
        elif isinstance(v, int):
            lines.append(f"constexpr long long ATTR_{name} = {v}LL;")
        elif isinstance(v, float):
            lines.append(f"constexpr double ATTR_{name} = {float(v)!r};".replace("inf", "1e999")
                         if v == v else f"constexpr double ATTR_{name} = 0.0 / 0.0;")
    name = "user_" + "".join(c if c.isalnum() else "_" for c in op)
    head = "\n".join(lines) + f'\nextern "C" __global__ void {name}({", ".join(params)}) {{\n'
    origin = body_origin(body, launch)
    if origin is not None:
        # The compiler's messages then point at the body's lines in the user's hooks file,
        # not at the generated translation unit; the generated tail is named as such.
        path, line = origin
        after = head.count("\n") + body.strip().count("\n") + 2
        src = (f'{head}#line {line} "{_c_string(path)}"\n{body.strip()}\n'
               f'#line {after} "{name}.cu"\n}}\n')
    else:
        src = f"{head}{body.strip()}\n}}\n"
    # the #defines would leak into the next code object of a translation unit
    src += "".join(f"#undef {side}{i}_SHAPE\n" for side, specs in (("IN", ins), ("OUT", outs))
                   for i in range(len(specs)))
    try:
        grid, block = launch(list(ins), list(outs), dict(attrs))
        spec = LaunchSpec(name, grid, block, [f"in{i}" for i in range(len(ins))]
                          + [f"out{k}" for k in range(len(outs))])
    except (TypeError, ValueError) as e:
        raise CudaCodegenError(f"{op}: the kernel's launch function failed: {e}") from e
    return uniquified(KernelCode(op, src, (spec,)), op, ins, outs)


def body_origin(body: str, launch: Any) -> tuple[str, int] | None:
    """(file, line) of the first line of a kernel ``body`` in the module that defines its
    ``launch`` function (the hooks file), when the body's text is found there verbatim.

    >>> path, line = body_origin("import functools", body_origin)  # found in this module
    >>> path.endswith("device.py"), line > 1
    (True, True)
    """
    import inspect

    try:
        path = inspect.getsourcefile(launch)
    except TypeError:
        return None
    if not path:
        return None
    return _origin_in(path, body)


@functools.lru_cache(maxsize=256)
def _origin_in(path: str, body: str) -> tuple[str, int] | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    start = body.strip()
    at = text.find(start) if start else -1
    if at < 0:
        return None
    return path, text.count("\n", 0, at) + 1


def _c_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


# -- what a generated code is keyed by ---------------------------------------------------------
def specs_of(arrays: Sequence[Any]) -> tuple[TensorSpec, ...]:
    """The :class:`TensorSpec` of each present buffer (``None`` entries are absent operands)."""
    return tuple(TensorSpec(a.shape, dtype_from_numpy(a.dtype)) for a in arrays if a is not None)


def with_segments(attrs: Mapping[str, Any], inputs: Sequence[Any], opdef: OpDef | None = None
                  ) -> Mapping[str, Any]:
    """``attrs`` plus ``operandSegmentSizes`` when some optional operands are absent (``None``
    in ``inputs``, as eager calls pass them), so a generator, which sees only the present
    operands, knows which they are. A compiled program's op carries the attribute already.

    >>> with_segments({}, [1, None, 2])["operandSegmentSizes"]
    [1, 0, 1]
    """
    operands = getattr(opdef, "operands", None)
    padded = list(inputs)
    if operands is not None and not any(o.is_variadic for o in operands):
        padded += [None] * (len(operands) - len(padded))  # trailing absent operands left off
    if "operandSegmentSizes" in attrs or all(a is not None for a in padded):
        return attrs
    return {**attrs, "operandSegmentSizes": [0 if a is None else 1 for a in padded]}


def attrs_key(attrs: Mapping[str, Any]) -> tuple:
    """A hashable form of kernel attributes (lists become tuples, arrays their bytes, floats
    their exact ``hex``: ``-0.0 == 0.0`` would share a memoised code's scalars, and a NaN would
    never be found).

    >>> attrs_key({"a": -0.0}) == attrs_key({"a": 0.0})
    False
    """

    def h(v: Any) -> Any:
        if isinstance(v, float):
            return ("float", float(v).hex())
        if isinstance(v, np.ndarray):
            return ("ndarray", v.shape, str(v.dtype), v.tobytes())
        if isinstance(v, list | tuple):
            return tuple(h(x) for x in v)
        if isinstance(v, dict):
            return tuple(sorted((k, h(x)) for k, x in v.items()))
        try:
            hash(v)
        except TypeError:
            return repr(v)
        return v

    return tuple(sorted((k, h(v)) for k, v in attrs.items()))
