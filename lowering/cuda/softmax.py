"""CUDA kernels of the softmax family and the cross entropies (all over the last axis).

``softmax``, ``log_softmax``, ``softmax_grad``, ``sparse_softmax_cross_entropy`` and
``softmax_cross_entropy`` give each row to a warp (rows up to 256) or a block (256 threads,
512 past 4096).
A row that fits in registers (:class:`~tdflow.lowering.cuda._rows.Rows`: up to 16 values a thread) is read from global
memory once: the max is exact, then the sum of ``exp(x - max)``, then the results, as the numpy
kernels compute them. A longer row is read twice: an online pass keeps ``(max, sum)`` pairs
(rescaling the sum when the max grows) and merges them across lanes, then the results pass.
``softmax``/``log_softmax`` of fewer than 132 rows of 16384 or more split each row over blocks
(chunk pairs in scratch, then every chunk's block merges its row's pairs and writes).
The two ``_grad`` ops of the cross entropies are elementwise grid-stride kernels;
``sparse_softmax_cross_entropy_with_grad`` (made by ``fuse-elementwise``) is the sparse loss's
row kernel writing its gradient for ``dy`` where that one wrote ``prob``.

Half types compute in float, f64 in double. Labels of ``sparse_*`` are any integer type (or
``i1``); one outside ``[0, depth)`` gives a loss of 0 and no one-hot term, as on the CPU.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> Rows(64, 200, "float").warp, Rows(64, 4000, "float").cached, Rows(8, 9000, "float").cached
(True, True, False)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tdflow.dialect.element_types import INT_DTYPES

from ._rows import Rows, math_fn
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import MAX_GRID, acc_type, ctype, launch_1d, load, store

FLOATS = ("f16", "bf16", "f32", "f64")


LABELS = ("i1",) + INT_DTYPES


def params(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           mutable: Sequence[int] = ()) -> tuple[list[str], list[str]]:
    """C parameters ``in<i>``/``out<k>`` (inputs in ``mutable`` writable) and launch args.

    >>> params([TensorSpec((2,), "f16")], [TensorSpec((2,), "f32")])
    (['const __half* __restrict__ in0', 'float* __restrict__ out0'], ['in0', 'out0'])
    """
    c = [f"{'' if i in mutable else 'const '}{ctype(s.dtype)}* __restrict__ in{i}"
         for i, s in enumerate(ins)]
    c += [f"{ctype(s.dtype)}* __restrict__ out{k}" for k, s in enumerate(outs)]
    return c, [f"in{i}" for i in range(len(ins))] + [f"out{k}" for k in range(len(outs))]


def _floats(op: str, *specs: TensorSpec) -> None:
    for s in specs:
        if s.dtype not in FLOATS:
            raise CudaCodegenError(f"{op}: no CUDA kernel for dtype {s.dtype}")


def _rows_of(x: TensorSpec) -> tuple[int, int]:
    return (_prod(x.shape[:-1]), x.shape[-1]) if x.ndim else (1, 1)


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _code(op: str, rows: Rows, name: str, ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
          body: str) -> KernelCode:
    if rows.n == 0:
        return KernelCode(op, rows.helpers(), ())
    src, launch = rows.kernel(name, params(ins, outs), body)
    return KernelCode(op, rows.helpers() + src, (launch,))


def _x(dt: str, ptr: str = "in0") -> str:
    """Column ``c`` of this row of ``ptr`` as acc_t."""
    return f"(acc_t){load(dt, f'{ptr}[(long long)row * L + c]')}"


SPLIT_MIN, SPLIT_CHUNK = 16384, 4096  # rows this long, this few (< 132), split over blocks


def _split(op: str, kind: str, x: TensorSpec, out: TensorSpec, n: int, length: int
           ) -> KernelCode:
    """softmax / log_softmax of a few long rows: chunks of each row spread over blocks.

    A first kernel reduces each chunk to an online ``(max, sum)`` pair in scratch; a second
    merges a row's pairs (every block of the row, redundantly: there are few) and writes its
    chunk, so the GPU fills when one block per row would leave most SMs idle.
    """
    acc = acc_type(x.dtype)
    e, lg = math_fn("exp", acc), math_fn("log", acc)
    s = min(-(-length // SPLIT_CHUNK), max(2, MAX_GRID // n))
    ch = -(-length // s)
    s = -(-length // ch)
    rows = Rows(n * s, ch, acc)  # a chunk per "row": 256 threads (ch <= 4096)
    where = (f"    const long long r = row / {s}, c0 = (long long)(row % {s}) * {ch};\n"
             f"    const long long c1 = c0 + {ch} < {length} ? c0 + {ch} : {length};\n")
    xv = f"(acc_t){load(x.dtype, f'in0[r * {length} + c]')}"
    part = (where + "    acc_t m = -INFINITY, s = 0;\n"
            "    for (long long c = c0 + tid; c < c1; c += 256) {\n"
            f"      const acc_t x = {xv};\n"
            f"      if (x > m) {{ s = s * {e}(m - x) + 1; m = x; }}"
            f" else if (x != -INFINITY) s += {e}(x - m);\n    }}\n"
            "    const acc_t mrow = rmax(m, sh);\n"
            f"    s = rsum(m == -INFINITY ? (acc_t)0 : s * {e}(m - mrow), sh);\n"
            "    if (tid == 0) { tmp0[2 * row] = mrow; tmp0[2 * row + 1] = s; }\n")
    res = f"{e}(x - m) / s" if kind == "softmax" else "(x - m) - ls"
    write = (where + "    acc_t m = -INFINITY, s = 0;\n"
             f"    for (int k = 0; k < {s}; ++k) m = mx(m, tmp0[2 * (r * {s} + k)]);\n"
             f"    for (int k = 0; k < {s}; ++k) {{\n"
             f"      const acc_t mk = tmp0[2 * (r * {s} + k)];\n"
             f"      if (mk != -INFINITY) s += tmp0[2 * (r * {s} + k) + 1] * {e}(mk - m);\n"
             "    }\n    if (m == INFINITY) s = NAN;  // x - max is NaN in numpy\n"
             f"    const acc_t ls = {lg}(s);\n    (void)ls;\n"
             "    for (long long c = c0 + tid; c < c1; c += 256) {\n"
             f"      const acc_t x = {xv};\n"
             f"      out0[r * {length} + c] = {store(out.dtype, res)};\n    }}\n")
    c_x = f"const {ctype(x.dtype)}* __restrict__ in0"
    src1, l1 = rows.kernel("softmax_part", ([c_x, "acc_t* __restrict__ tmp0"], ["in0", "tmp0"]),
                           part)
    src2, l2 = rows.kernel("softmax_write", ([c_x, "const acc_t* __restrict__ tmp0",
                                              f"{ctype(out.dtype)}* __restrict__ out0"],
                                             ["in0", "tmp0", "out0"]), write)
    size = 8 if acc == "double" else 4
    return KernelCode(op, rows.helpers() + src1 + src2, (l1, l2), (2 * n * s * size,))


def _row_op(op: str, kind: str):
    def gen(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
            attrs: Mapping[str, Any]) -> KernelCode:
        x = ins[0]
        _floats(op, x, outs[0])
        acc = acc_type(x.dtype)
        n, length = _rows_of(x)
        if kind in ("softmax", "log") and 0 < n < 132 and length >= SPLIT_MIN:
            return _split(op, kind, x, outs[0], n, length)
        rows = Rows(n, length, acc, 2 if kind in ("grad", "ce") else 1)
        e, lg = math_fn("exp", acc), math_fn("log", acc)
        xv = rows.val("xv", _x(x.dtype))
        o0 = "out0[(long long)row * L + c]"
        body = f"    const {rows.idx} L = {length};\n" + rows.cache("xv", _x(x.dtype))
        st0 = outs[0].dtype
        if kind == "softmax":
            body += rows.stats(xv) + rows.loop(f"{o0} = {store(st0, f'{e}({xv} - m) / s')};")
        elif kind == "log":
            body += (rows.stats(xv) + f"    const acc_t ls = {lg}(s);\n"
                     + rows.loop(f"{o0} = {store(st0, f'({xv} - m) - ls')};"))
        elif kind == "grad":  # dx = y * (dy - sum(y * dy))
            _floats(op, ins[1])
            dv = rows.val("dv", _x(ins[1].dtype, "in1"))
            body += (rows.cache("dv", _x(ins[1].dtype, "in1")) + "    acc_t dot = 0;\n"
                     + rows.loop(f"dot += {xv} * {dv};") + "    dot = rsum(dot, sh);\n"
                     + rows.loop(f"{o0} = {store(st0, f'{xv} * ({dv} - dot)')};"))
        elif kind == "sparse":
            lab = ins[1]
            if lab.dtype not in LABELS:
                raise CudaCodegenError(f"{op}: label dtype {lab.dtype} is not an integer type")
            depth = int(attrs["depth"]) or length
            if depth != length or lab.shape != x.shape[:-1]:
                raise CudaCodegenError(f"{op}: prediction {x.shape} has {length} classes, depth "
                                       f"{depth}, label shape {lab.shape}")
            pick = _x(x.dtype).replace(" + c]", " + lab]")
            body += (rows.stats(xv) + f"    const acc_t ls = {lg}(s);\n"
                     + rows.loop(f"{o0} = {store(st0, f'{e}(({xv} - m) - ls)')};")
                     + "    if (tid == 0) {\n      const long long lab = (long long)in1[row];\n"
                     f"      out1[row] = lab >= 0 && lab < {depth} ? "
                     f"{store(outs[1].dtype, f'-(({pick} - m) - ls)')} : "
                     f"{store(outs[1].dtype, '(acc_t)0')};\n    }}\n")
        else:  # soft-label cross entropy: loss = -sum(label * ((x - m) - log s))
            _floats(op, ins[1])
            lv = rows.val("lv", _x(ins[1].dtype, "in1"))
            body += (rows.stats(xv) + f"    const acc_t ls = {lg}(s);\n"
                     + rows.cache("lv", _x(ins[1].dtype, "in1")) + "    acc_t t = 0;\n"
                     + rows.loop(f"t += {lv} * (({xv} - m) - ls);") + "    t = rsum(t, sh);\n"
                     + rows.loop(f"{o0} = {store(st0, f'{e}({xv} - m) / s')};")
                     + f"    if (tid == 0) out1[row] = {store(outs[1].dtype, '-t')};\n")
        return _code(op, rows, op.split(".")[1], ins, outs, body)

    gen.__name__ = gen.__qualname__ = op.split(".")[1]
    gen.__doc__ = f"CUDA code of ``{op}``: one warp or block per row (see the module docstring)."
    cuda_generator(op)(gen)


for _op, _kind in (("tdflow.softmax", "softmax"), ("tdflow.log_softmax", "log"),
                   ("tdflow.softmax_grad", "grad"),
                   ("tdflow.sparse_softmax_cross_entropy", "sparse"),
                   ("tdflow.softmax_cross_entropy", "ce")):
    _row_op(_op, _kind)


@cuda_generator("tdflow.sparse_softmax_cross_entropy_with_grad")
def sparse_softmax_cross_entropy_with_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                                           attrs: Mapping[str, Any]) -> KernelCode:
    """The loss of ``sparse_softmax_cross_entropy`` and its gradient for ``dy`` in one kernel,
    a warp or block per row: the row's softmax as that kernel computes it, rounded to the
    prediction's type as its ``prob`` output was, then ``(prob - onehot) * dy[row]`` as the
    gradient's kernel computes it; so the bits are those of the two launches.

    >>> f = TensorSpec((4, 10), "f32")
    >>> code = sparse_softmax_cross_entropy_with_grad(
    ...     [f, TensorSpec((4,), "i64"), TensorSpec((4,), "f32")], [TensorSpec((4,), "f32"), f],
    ...     {"depth": 10})
    >>> code.launches[0].args
    ('in0', 'in1', 'in2', 'out0', 'out1')
    """
    op = "tdflow.sparse_softmax_cross_entropy_with_grad"
    x, lab, dy = ins
    _floats(op, x, dy, *outs)
    if lab.dtype not in LABELS:
        raise CudaCodegenError(f"{op}: label dtype {lab.dtype} is not an integer type")
    n, length = _rows_of(x)
    depth = int(attrs["depth"]) or length
    if depth != length or lab.shape != x.shape[:-1] or dy.shape != lab.shape:
        raise CudaCodegenError(f"{op}: prediction {x.shape} has {length} classes, depth "
                               f"{depth}, label shape {lab.shape}, dy shape {dy.shape}")
    acc = acc_type(x.dtype)
    rows = Rows(n, length, acc)
    e, lg = math_fn("exp", acc), math_fn("log", acc)
    xv = rows.val("xv", _x(x.dtype))
    pick = _x(x.dtype).replace(" + c]", " + lab]")
    prob = load(x.dtype, store(x.dtype, f"{e}(({xv} - m) - ls)"))  # as the loss stored it
    o1 = "out1[(long long)row * L + c]"
    body = (f"    const {rows.idx} L = {length};\n" + rows.cache("xv", _x(x.dtype))
            + rows.stats(xv) + f"    const acc_t ls = {lg}(s);\n"
            + "    const long long lab = (long long)in1[row];\n"
            + f"    const acc_t d = (acc_t){load(dy.dtype, 'in2[row]')};\n"
            + rows.loop(f"acc_t g = (acc_t){prob}; if (lab == c && lab < {depth}) g -= 1; "
                        f"g *= d; {o1} = {store(outs[1].dtype, 'g')};")
            + f"    if (tid == 0) out0[row] = lab >= 0 && lab < {depth} ? "
            f"{store(outs[0].dtype, f'-(({pick} - m) - ls)')} : "
            f"{store(outs[0].dtype, '(acc_t)0')};\n")
    return _code(op, rows, "sparse_ce_with_grad", ins, outs, body)


def _pointwise(op: str, name: str, ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               length: int, stmt: str) -> KernelCode:
    """A grid-stride loop over ``outs[0]``: ``stmt`` sets ``g`` from ``i``, ``row``, ``c``."""
    out = outs[0]
    n = out.numel
    acc = acc_type(out.dtype)
    if n == 0:
        return KernelCode(op, "", ())
    cparams, args = params(ins, outs)
    grid, block = launch_1d(n)
    cdecl = f", c = i % {length}" if "== c" in stmt else ""
    src = (f"typedef {acc} acc_t;\n"
           f'extern "C" __global__ void {name}({", ".join(cparams)}) {{\n'
           f"  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < {n}LL;"
           " i += (long long)blockDim.x * gridDim.x) {\n"
           f"    const long long row = i / {length}{cdecl};\n"
           f"    {stmt}\n    out0[i] = {store(out.dtype, 'g')};\n  }}\n}}\n")
    return KernelCode(op, src, (LaunchSpec(name, grid, block, args),))


@cuda_generator("tdflow.sparse_softmax_cross_entropy_grad")
def sparse_softmax_cross_entropy_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                                      attrs: Mapping[str, Any]) -> KernelCode:
    """``(prob - onehot(label)) * dy[row]``, one thread per element (a grid-stride loop).

    >>> code = sparse_softmax_cross_entropy_grad(
    ...     [TensorSpec((4,), "i64"), TensorSpec((4,), "f32"), TensorSpec((4, 10), "f32")],
    ...     [TensorSpec((4, 10), "f32")], {"depth": 10})
    >>> code.launches[0].args
    ('in0', 'in1', 'in2', 'out0')
    """
    op = "tdflow.sparse_softmax_cross_entropy_grad"
    label, dy, prob = ins
    if label.dtype not in LABELS:
        raise CudaCodegenError(f"{op}: label dtype {label.dtype} is not an integer type")
    _floats(op, dy, prob, outs[0])
    length = prob.shape[-1] if prob.ndim else 1
    depth = int(attrs["depth"]) or length
    stmt = (f"const long long lab = (long long)in0[row];\n"
            f"    acc_t g = (acc_t){load(prob.dtype, 'in2[i]')};\n"
            f"    if (lab == c && lab < {depth}) g -= 1;\n"
            f"    g *= (acc_t){load(dy.dtype, 'in1[row]')};")
    return _pointwise(op, "sparse_ce_grad", ins, outs, max(length, 1), stmt)


@cuda_generator("tdflow.softmax_cross_entropy_grad")
def softmax_cross_entropy_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                               attrs: Mapping[str, Any]) -> KernelCode:
    """``(prob - label) * dy[row]``, one thread per element (a grid-stride loop).

    >>> p = TensorSpec((4, 10), "f64")
    >>> softmax_cross_entropy_grad([TensorSpec((4,), "f64"), p, p], [p], {}).launches[0].grid
    (1, 1, 1)
    """
    op = "tdflow.softmax_cross_entropy_grad"
    dy, label, prob = ins
    _floats(op, dy, label, prob, outs[0])
    length = prob.shape[-1] if prob.ndim else 1
    stmt = (f"const acc_t g = ((acc_t){load(prob.dtype, 'in2[i]')} - "
            f"(acc_t){load(label.dtype, 'in1[i]')}) * (acc_t){load(dy.dtype, 'in0[row]')};")
    return _pointwise(op, "ce_grad", ins, outs, max(length, 1), stmt)
