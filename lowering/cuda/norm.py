"""CUDA kernels of ``layer_norm``, ``group_norm`` and ``normalization`` (batch norm).

``layer_norm`` and ``group_norm`` give each normalised row (a sample's trailing dims; a sample's
channel group) to a warp or a block (:class:`~tdflow.lowering.cuda._rows.Rows`, the row held
in registers when it fits): the mean, then the biased variance as the mean of squared
deviations (two passes over the row, as numpy computes them), then ``y``. ``group_norm``'s
``channels_last`` rows gather their group's channels by index.

``normalization`` views ``x`` as ``(O, C, I)`` around the channel dim. Training reduces each
channel over ``O * I`` elements in chunks spread over many blocks (coalesced along ``I``, or,
when ``I < 32``, 32x8 tiles walking the channels), partial sums in scratch, then one warp per
channel finishes the mean; the same again for the variance, whose finishing kernel also
writes ``inv_variance`` and updates ``moving_mean``/``moving_variance`` in place
(``moving * momentum + stat * (1 - momentum)``, the variance unbiased). A grid-stride kernel
applies ``(x - mean) * (inv * gamma) + beta (+ _add_to_output)``.

Sums accumulate in double; the rest computes in the numpy kernels' type (float for half).

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> spec = TensorSpec((8, 4, 5, 5), "f32")
>>> code = batch_norm_code(spec, 1, None, None, spec, True, 1e-5, 0.9)
>>> len(code.launches)      # two (partials, finish) passes and the apply kernel
5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._rows import Rows, math_fn
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import MAX_GRID, acc_type, ctype, launch_1d, load, store

DTYPES = ("f16", "f32", "f64")


def _lit(v: float) -> str:
    v = float(v)
    if v != v or v in (float("inf"), float("-inf")):
        raise CudaCodegenError(f"attribute value {v} is not a finite number")
    return f"((acc_t){v!r})"


def _optional(ins: Sequence[TensorSpec], attrs: Mapping[str, Any], count: int,
              guess: dict[int, tuple[bool, ...]], op: str) -> list[TensorSpec | None]:
    """``ins`` (present operands only) spread over the op's ``count`` operands: by
    ``operandSegmentSizes`` when given, else by ``guess[len(ins)]`` (which are present)."""
    seg = attrs.get("operandSegmentSizes")
    if seg is not None and len(seg) == count and sum(seg) == len(ins):
        present = tuple(bool(n) for n in seg)
    elif len(ins) in guess:
        present = guess[len(ins)]
    else:
        raise CudaCodegenError(f"{op}: cannot tell which of the optional operands the "
                               f"{len(ins)} given are (pass operandSegmentSizes)")
    it = iter(ins)
    return [next(it) if p else None for p in present]


def _check(op: str, *specs: TensorSpec | None) -> None:
    for s in specs:
        if s is not None and s.dtype not in DTYPES:
            raise CudaCodegenError(f"{op}: no CUDA kernel for dtype {s.dtype}")


def _ld(s: TensorSpec, ptr: str, index: str) -> str:
    return f"(acc_t){load(s.dtype, f'{ptr}[{index}]')}"


def _row_norm(op: str, name: str, rows: Rows, x: TensorSpec, index: str, outs: Sequence[TensorSpec],
              eps: float, affine: str, cparams: list[str], args: list[str]) -> KernelCode:
    """Mean, biased variance and ``y`` per row; ``index`` is the element of column ``c`` of
    ``row``; ``affine`` transforms ``y`` (C statements, ``ch`` in scope)."""
    sq = math_fn("sqrt", rows.acc)
    xv = rows.val("xv", _ld(x, "in0", index))
    body = (rows.cache("xv", _ld(x, "in0", index))
            + "    __shared__ double shs[32];\n    double t = 0;\n"
            + rows.loop(f"t += (double){xv};") + "    t = rsum(t, shs);\n"
            + f"    const acc_t mean = (acc_t)(t / {rows.length});\n    double q = 0;\n"
            + rows.loop(f"const acc_t d = {xv} - mean; q += (double)(d * d);")
            + "    q = rsum(q, shs);\n"
            + f"    const acc_t var = (acc_t)(q / {rows.length});\n"
            + f"    const acc_t inv = (acc_t)1 / {sq}(var + {_lit(eps)});\n"
            + rows.loop(f"acc_t y = ({xv} - mean) * inv; {affine} "
                        f"out0[{index}] = {store(outs[0].dtype, 'y')};")
            + f"    if (tid == 0) {{ out1[row] = {store(outs[1].dtype, 'mean')}; "
            f"out2[row] = {store(outs[2].dtype, 'inv')}; }}\n")
    if rows.n == 0 or rows.length == 0:
        return KernelCode(op, rows.helpers(), ())
    src, launch = rows.kernel(name, (cparams, args), body)
    return KernelCode(op, rows.helpers() + src, (launch,))


def _sig(specs: Sequence[tuple[str, TensorSpec]], outs: Sequence[TensorSpec]) -> tuple[list, list]:
    c = [f"const {ctype(s.dtype)}* __restrict__ {n}" for n, s in specs]
    c += [f"{ctype(s.dtype)}* __restrict__ out{k}" for k, s in enumerate(outs)]
    return c, [n for n, _ in specs] + [f"out{k}" for k in range(len(outs))]


@cuda_generator("tdflow.layer_norm")
def layer_norm(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               attrs: Mapping[str, Any]) -> KernelCode:
    """A warp or block per row of ``x.shape[begin_norm_axis:]``.

    >>> x, s = TensorSpec((64, 768), "f32"), TensorSpec((64,), "f32")
    >>> from tdflow.lowering.cuda.code import with_defaults  # generate() fills the defaults
    >>> code = layer_norm([x], [x, s, s], with_defaults("tdflow.layer_norm",
    ...                                                {"begin_norm_axis": 1, "epsilon": 1e-5}))
    >>> code.launches[0].grid, code.launches[0].block   # a 256-thread block per row
    ((64, 1, 1), (256, 1, 1))
    """
    op = "tdflow.layer_norm"
    scale, center = bool(attrs["scale"]), bool(attrs["center"])
    x, beta, gamma = _optional(ins, attrs, 3, {1: (True, False, False), 3: (True,) * 3,
                                               2: (True, not (scale and not center),
                                                   scale and not center)}, op)
    _check(op, x, beta, gamma, *outs)
    a = attrs["begin_norm_axis"]  # TDF_AxisAttr of x: non-negative, checked
    d = 1
    for n in x.shape[a:]:
        d *= n
    rows = Rows(x.numel // d if d else 0, d, acc_type(x.dtype))
    # present operands are numbered in order: x, then beta, then gamma
    names = {"beta": "in1", "gamma": "in2" if beta is not None else "in1"}
    specs = [("in0", x)]
    affine = ""
    for flag, spec, opname, role in ((scale, gamma, "*=", "gamma"), (center, beta, "+=", "beta")):
        if flag and spec is not None:
            g = spec.numel
            at = f"c % {g}" if g and d % g == 0 else f"((long long)row * {d} + c) % {g}"
            p = names[role]
            affine += f"y {opname} {_ld(spec, p, at)};"
            specs.append((p, spec))
    cparams, args = _sig(specs, outs)
    return _row_norm(op, "layer_norm", rows, x, f"(long long)row * {d} + c", outs,
                     attrs["epsilon"], affine, cparams, args)


@cuda_generator("tdflow.group_norm")
def group_norm(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               attrs: Mapping[str, Any]) -> KernelCode:
    """A warp or block per (sample, group); ``channels_last`` gathers the group's channels.

    >>> x, s = TensorSpec((2, 4, 3, 3), "f32"), TensorSpec((2, 2), "f32")
    >>> from tdflow.lowering.cuda.code import with_defaults  # generate() fills the defaults
    >>> attrs = with_defaults("tdflow.group_norm", {"num_groups": 2})
    >>> group_norm([x], [x, s, s], attrs).launches[0].block  # 4 rows of 18: warps
    (128, 1, 1)
    """
    op = "tdflow.group_norm"
    x, beta, gamma = _optional(ins, attrs, 3, {1: (True, False, False), 3: (True,) * 3}, op)
    _check(op, x, beta, gamma, *outs)
    last = attrs["data_format"] == "channels_last"
    groups = int(attrs["num_groups"])
    if x.ndim < 2:
        raise CudaCodegenError(f"{op}: x of shape {x.shape} has no channel dim")
    n, c = x.shape[0], x.shape[-1 if last else 1]
    if groups <= 0 or c % groups:
        raise CudaCodegenError(f"{op}: {c} channels do not split into {groups} groups")
    cg, sp = c // groups, x.numel // max(1, n * c)
    rows = Rows(n * groups, cg * sp, acc_type(x.dtype))
    if last:  # column c of row (n, g): spatial position c / cg, channel g * cg + c % cg
        index = (f"(long long)(row / {groups}) * {sp * c} + (long long)(c / {cg}) * {c} + "
                 f"(row % {groups}) * {cg} + c % {cg}")
        ch = f"(row % {groups}) * {cg} + c % {cg}"
    else:
        index, ch = f"(long long)row * {cg * sp} + c", f"(row % {groups}) * {cg} + c / {sp}"
    affine = f"const long long ch = {ch};"
    specs = [("in0", x)]
    if attrs["affine"]:
        if beta is None or gamma is None:
            raise CudaCodegenError(f"{op}: affine needs beta and gamma")
        affine += f"y = y * {_ld(gamma, 'in2', 'ch')} + {_ld(beta, 'in1', 'ch')};"
        specs += [("in1", beta), ("in2", gamma)]
    act = attrs["activation"]
    if act == "silu":
        affine += f"y = y / ((acc_t)1 + {math_fn('exp', rows.acc)}(-y));"
    elif act != "none":
        raise CudaCodegenError(f"{op}: unknown activation {act!r} (none or silu)")
    cparams, args = _sig(specs, outs)
    return _row_norm(op, "group_norm", rows, x, index, outs, attrs["epsilon"], affine,
                     cparams, args)


FEW_BLOCKS = 2 * 132  # fewer blocks than this leave H200 SMs idle


def batch_norm_code(x: TensorSpec, axis: int, moving: tuple[TensorSpec, TensorSpec] | None,
                    add: TensorSpec | None, params: TensorSpec | tuple[TensorSpec, TensorSpec],
                    training: bool, eps: float, momentum: float,
                    outs: Sequence[TensorSpec] | None = None, op: str = "tdflow.normalization"
                    ) -> KernelCode:
    """Batch norm over every dim of ``x`` but ``axis``; ``params`` are (gamma, beta) (one spec
    for both), ``moving`` (moving_mean, moving_variance) or None; ``outs`` default to y alone.
    Operands are numbered x, moving..., gamma, beta, add as the op orders them."""
    gamma, beta = params if isinstance(params, tuple) else (params, params)
    outs = list(outs) if outs is not None else [x]
    cc = x.shape[axis]
    o = i = 1
    for d, n in enumerate(x.shape):
        o, i = (o * n, i) if d < axis else (o, i * n) if d > axis else (o, i)
    k = o * i
    acc = acc_type(x.dtype)
    names = iter(f"in{j}" for j in range(6))
    xin = next(names)
    mm, mv = (next(names), next(names)) if moving else (None, None)
    gin, bin_ = next(names), next(names)
    ain = next(names) if add is not None else None
    sq = math_fn("sqrt", acc)
    src = [f"typedef {acc} acc_t;\n"]
    launches: list[LaunchSpec] = []
    scratch: list[int] = []
    stats = ("tmp1", "tmp2")  # mean and inv_variance per channel, acc_t
    has_stats = len(outs) == 3
    st_out = (f"out1[c] = {store(outs[1].dtype, 'mean')}; out2[c] = {store(outs[2].dtype, 'inv')};"
              if has_stats else "")
    out_params = ([f"{ctype(outs[1].dtype)}* __restrict__ out1",
                   f"{ctype(outs[2].dtype)}* __restrict__ out2"] if has_stats else [])
    out_args = ["out1", "out2"] if has_stats else []
    if training and k:
        col = i < 32
        if col:
            tiles = -(-(cc * i) // 32)
            s = max(1, min(-(-o // 64), -(-FEW_BLOCKS // tiles)))
            ch = -(-o // s)
            s = -(-o // ch)
            nb, per = tiles * s, i * s
        else:
            s = max(1, min(-(-k // 1024), -(-FEW_BLOCKS // cc)))
            ch = -(-k // s)
            s = -(-k // ch)
            nb, per = cc * s, s
        scratch = [8 * cc * per, _size(acc) * cc, _size(acc) * cc]
        for p in (1, 2):
            val = (f"t += (double){_ld(x, 'in0', 'e')};" if p == 1 else
                   f"const acc_t d = {_ld(x, 'in0', 'e')} - tmp1[c]; t += (double)(d * d);")
            head = (f'extern "C" __global__ void bn_part{p}(const {ctype(x.dtype)}* __restrict__ '
                    "in0, double* __restrict__ tmp0, const acc_t* __restrict__ tmp1) {\n")
            if col:  # 32 columns (channel, inner) x 8 slices of the outer dims per block
                body = (
                    "  __shared__ double sh[8][33];\n"
                    "  const int tx = threadIdx.x, ty = threadIdx.y;\n"
                    f"  for (int b = blockIdx.x; b < {nb}; b += gridDim.x) {{\n"
                    f"    const long long j = (long long)(b / {s}) * 32 + tx;\n"
                    f"    const long long o0 = (long long)(b % {s}) * {ch};\n"
                    f"    const long long o1 = o0 + {ch} < {o} ? o0 + {ch} : {o};\n"
                    "    double t = 0;\n"
                    f"    if (j < {cc * i}) {{\n"
                    + (f"      const long long c = j / {i};\n" if p == 2 else "") +
                    f"      for (long long r = o0 + ty; r < o1; r += 8) {{\n"
                    f"        const long long e = r * {cc * i} + j; {val}\n      }}\n    }}\n"
                    "    sh[ty][tx] = t;\n    __syncthreads();\n"
                    f"    if (ty == 0 && j < {cc * i}) {{\n"
                    "      for (int q = 1; q < 8; ++q) t += sh[q][tx];\n"
                    f"      tmp0[j * {s} + b % {s}] = t;\n    }}\n"
                    "    __syncthreads();  // sh is rewritten by the next tile\n  }\n}\n")
                block: tuple[int, ...] = (32, 8)
            else:  # a block per (channel, chunk of the O*I elements), coalesced along I
                body = (
                    "  __shared__ double sh[32];\n"
                    f"  for (int b = blockIdx.x; b < {nb}; b += gridDim.x) {{\n"
                    f"    const long long c = b / {s}, k0 = (long long)(b % {s}) * {ch};\n"
                    f"    const long long k1 = k0 + {ch} < {k} ? k0 + {ch} : {k};\n"
                    "    double t = 0;\n"
                    "    for (long long q = k0 + threadIdx.x; q < k1; q += blockDim.x) {\n"
                    f"      const long long e = (q / {i}) * {cc * i} + c * {i} + q % {i}; {val}\n"
                    "    }\n"
                    "    t = tdf_block_sum(t, sh);\n"
                    "    if (threadIdx.x == 0) tmp0[b] = t;\n  }\n}\n")
                block = (256,)
            src.append(head + body)
            launches.append(LaunchSpec(f"bn_part{p}", min(MAX_GRID, nb), block,
                                       ("in0", "tmp0", "tmp1")))
            # one warp per channel adds its partials
            if p == 1:
                fin = f"tmp1[c] = (acc_t)(t / {k});"
            else:
                fin = ("const acc_t mean = tmp1[c];\n"
                       f"      const acc_t var = (acc_t)(t / {k});\n"
                       f"      const acc_t inv = (acc_t)1 / {sq}(var + {_lit(eps)});\n"
                       f"      tmp2[c] = inv; {st_out}\n")
                if moving:
                    mom = _lit(momentum)
                    unb = f"var * {_lit(k / (k - 1))}" if k > 1 else "var"
                    new_m = f"{_ld(moving[0], 'in1', 'c')} * {mom} + mean * ((acc_t)1 - {mom})"
                    new_v = f"{_ld(moving[1], 'in2', 'c')} * {mom} + ({unb}) * ((acc_t)1 - {mom})"
                    fin += (f"      in1[c] = {store(moving[0].dtype, new_m)};\n"
                            f"      in2[c] = {store(moving[1].dtype, new_v)};\n")
            mparams = ([f"{ctype(moving[0].dtype)}* __restrict__ in1",
                        f"{ctype(moving[1].dtype)}* __restrict__ in2"] if moving and p == 2
                       else [])
            sig = ", ".join(["const double* __restrict__ tmp0", "acc_t* __restrict__ tmp1",
                             "acc_t* __restrict__ tmp2", *mparams,
                             *(out_params if p == 2 else [])])
            src.append(
                f'extern "C" __global__ void bn_fin{p}({sig}) {{\n'
                "  const int lane = threadIdx.x & 31;\n"
                f"  for (int c = blockIdx.x * 8 + (threadIdx.x >> 5); c < {cc}; "
                "c += gridDim.x * 8) {\n    double t = 0;\n"
                f"    for (int q = lane; q < {per}; q += 32) t += tmp0[(long long)c * {per} + q];\n"
                "    t = tdf_warp_sum(t);\n"
                f"    if (lane == 0) {{\n      {fin}\n    }}\n  }}\n}}\n")
            launches.append(LaunchSpec(
                f"bn_fin{p}", min(MAX_GRID, -(-cc // 8)), 32 * min(8, cc),
                ("tmp0", "tmp1", "tmp2", *(("in1", "in2") if moving and p == 2 else ()),
                 *(out_args if p == 2 else ()))))
    else:  # inference (or an empty batch): the moving statistics, one thread per channel
        if not moving:
            raise CudaCodegenError(f"{op}: inference needs moving_mean and moving_variance")
        scratch = [8, _size(acc) * cc, _size(acc) * cc]
        sig = ", ".join([f"const {ctype(moving[0].dtype)}* __restrict__ in1",
                         f"const {ctype(moving[1].dtype)}* __restrict__ in2",
                         "acc_t* __restrict__ tmp1", "acc_t* __restrict__ tmp2", *out_params])
        src.append(
            f'extern "C" __global__ void bn_stats({sig}) {{\n'
            f"  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < {cc}; "
            "c += gridDim.x * blockDim.x) {\n"
            f"    const acc_t mean = {_ld(moving[0], 'in1', 'c')};\n"
            f"    const acc_t inv = (acc_t)1 / {sq}({_ld(moving[1], 'in2', 'c')} + {_lit(eps)});\n"
            f"    tmp1[c] = mean; tmp2[c] = inv; {st_out}\n  }}\n}}\n")
        grid, blk = launch_1d(cc)
        launches.append(LaunchSpec("bn_stats", grid, blk, ("in1", "in2", *stats, *out_args)))
    # y = (x - mean) * (inv * gamma) + beta (+ add), as the numpy kernel orders it
    n = x.numel
    addp = [f"const {ctype(add.dtype)}* __restrict__ {ain}"] if add is not None else []
    sig = ", ".join([f"const {ctype(x.dtype)}* __restrict__ in0",
                     f"const {ctype(gamma.dtype)}* __restrict__ {gin}",
                     f"const {ctype(beta.dtype)}* __restrict__ {bin_}", *addp,
                     "const acc_t* __restrict__ tmp1", "const acc_t* __restrict__ tmp2",
                     f"{ctype(outs[0].dtype)}* __restrict__ out0"])
    extra = f" y += {_ld(add, ain, 'e')};" if add is not None else ""
    src.append(
        f'extern "C" __global__ void bn_apply({sig}) {{\n'
        f"  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < {n}LL; "
        "e += (long long)blockDim.x * gridDim.x) {\n"
        f"    const long long c = (e / {max(i, 1)}) % {max(cc, 1)};\n"
        f"    acc_t y = ({_ld(x, 'in0', 'e')} - tmp1[c]) * (tmp2[c] * {_ld(gamma, gin, 'c')});\n"
        f"    y += {_ld(beta, bin_, 'c')};{extra}\n"
        f"    out0[e] = {store(outs[0].dtype, 'y')};\n  }}\n}}\n")
    if n:
        grid, blk = launch_1d(n)
        launches.append(LaunchSpec("bn_apply", grid, blk,
                                   (xin, gin, bin_, *((ain,) if ain else ()), *stats, "out0")))
    return KernelCode(op, "".join(src), tuple(launches), tuple(scratch))


def _size(acc: str) -> int:
    return 8 if acc == "double" else 4


@cuda_generator("tdflow.normalization")
def normalization(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                  attrs: Mapping[str, Any]) -> KernelCode:
    """Batch norm (see :func:`batch_norm_code`); ``moving_*`` are updated in place.

    >>> x, c = TensorSpec((8, 4, 5, 5), "f32"), TensorSpec((4,), "f32")
    >>> from tdflow.lowering.cuda.code import with_defaults  # generate() fills the defaults
    >>> attrs = with_defaults("tdflow.normalization", {"axis": 1, "training": False})
    >>> code = normalization([x, c, c, c, c], [x], attrs)
    >>> [ln.kernel for ln in code.launches]   # inference: the moving statistics, then y
    ['bn_stats', 'bn_apply']
    """
    op = "tdflow.normalization"
    x, mm, mv, gamma, beta, add = _optional(
        ins, attrs, 6, {3: (True, False, False, True, True, False),
                        4: (True, False, False, True, True, True),
                        5: (True, True, True, True, True, False), 6: (True,) * 6}, op)
    _check(op, x, mm, mv, gamma, beta, add, *outs)
    if (mm is None) != (mv is None):
        raise CudaCodegenError(f"{op}: moving_mean and moving_variance come together")
    axis = attrs["axis"]  # TDF_AxisAttr of x
    if len(outs) not in (1, 3):
        raise CudaCodegenError(f"{op}: expected 1 or 3 results, got {len(outs)}")
    return batch_norm_code(x, axis, (mm, mv) if mm is not None else None, add, (gamma, beta),
                           bool(attrs["training"]), attrs["epsilon"],
                           attrs["momentum"], outs, op)
