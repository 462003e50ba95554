"""CUDA kernels of the 2-D pools and their gradients: max, average, adaptive average.

Forward kernels give one output element per thread in a grid-stride loop over the result in
its own layout (channels fastest for ``channels_last``, so neighbouring threads read
neighbouring channels; columns fastest for ``channels_first``), each walking its window in
the CPU kernel's order (rows, then columns). The gradients are gathers, not scatters: each
``dx`` element visits the few outputs whose window covers it, so overlapping windows need no
atomics and every element's sum has a fixed order (the CPU kernel's).

* ``max_pool_2d``: NaN wins a window, the first maximum (row-major in the window) gives
  ``indice = h * W + w`` within its plane, padding holds the lowest value and is never an
  index; a window wholly in the padding gives the lowest value and ``-1``.
* ``max_pool_2d_grad``: ``dx[h, w] = sum of dy over the windows covering (h, w) whose indice
  is h * W + w`` (indices are max_pool_2d's of the same attributes, as the op defines them).
* ``avg_pool_2d`` (and grad): PyTorch's divisor rule (``divisor_override``, else the window
  clipped to the padded input when ``count_include_pad``, else to the input).
* ``adaptive_avg_pool2d`` (and grad): cell ``i`` covers ``[floor(i*in/out), ceil((i+1)*in/out))``.

Half types compute in float; f64 in double; integers (max pool only) in their own type.

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> attrs = {"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
...          "data_format": "channels_first", "ceil_mode": False}
>>> code = max_pool_2d([TensorSpec((1, 2, 5, 5), "f32")],
...                    [TensorSpec((1, 2, 2, 2), "f32"), TensorSpec((1, 2, 2, 2), "i64")], attrs)
>>> code.launches[0].args
('in0', 'out0', 'out1')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._attrs import channels_last
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import INT_LIMITS, acc_type, ctype, launch_1d, load, store

_LOWEST = {n: low for n, (low, _) in INT_LIMITS.items()}


def _dims(x: TensorSpec, last: bool, op: str) -> tuple[int, int, int, int]:
    """``(N, C, H, W)`` of a 4-D activation."""
    if x.ndim != 4:
        raise CudaCodegenError(f"{op}: expected a 4-D input, got shape {x.shape}")
    n, a, b, c = x.shape
    return (n, c, a, b) if last else (n, a, b, c)


def _windows(attrs: Mapping[str, Any], op: str, dilation: bool = True) -> dict[str, Any]:
    # TDF_PairAttr: two entries each, checked
    k, s, p = (tuple(attrs[n]) for n in ("kernel_size", "stride", "padding"))
    d = tuple(attrs["dilation"]) if dilation else (1, 1)
    if any(pp > kk // 2 for kk, pp in zip(k, p)):
        raise CudaCodegenError(f"{op}: padding {list(p)} must be at most half the kernel size "
                               f"{list(k)}")
    return {"k": k, "s": s, "p": p, "d": d}


def _loop(n: int) -> str:
    return ("for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
            f"i < {n}LL; i += (long long)blockDim.x * gridDim.x) {{")


def _coords(last: bool, n: int, c: int, h: int, w: int, hn: str = "oh", wn: str = "ow") -> str:
    """Declarations of ``b, c, <hn>, <wn>`` from the flat index ``i`` of an (n, c, h, w)
    tensor in its layout."""
    if last:
        return (f"const long long c = i % {c}, {wn} = (i / {c}) % {w}, {hn} = (i / {c * w}) % "
                f"{h}, b = i / {c * w * h};")
    return (f"const long long {wn} = i % {w}, {hn} = (i / {w}) % {h}, c = (i / {w * h}) % {c}, "
            f"b = i / {w * h * c};")


def _at(last: bool, c: int, h: int, w: int, hv: str, wv: str) -> str:
    """Flat offset of ``(b, c, hv, wv)`` in a tensor of ``c`` channels and ``h x w`` planes."""
    if last:
        return f"((b * {h} + ({hv})) * {w} + ({wv})) * {c} + c"
    return f"((b * {c} + c) * {h} + ({hv})) * {w} + ({wv})"


def _kernel(op: str, name: str, params: Sequence[str], body: str, n: int,
            args: Sequence[str]) -> KernelCode:
    src = f'extern "C" __global__ void {name}({", ".join(params)}) {{\n  {_loop(n)}\n{body}  }}\n}}\n'
    grid, block = launch_1d(n)
    return KernelCode(op, src, (LaunchSpec(name, grid, block, args),) if n else ())


@cuda_generator("tdflow.max_pool_2d")
def max_pool_2d(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                attrs: Mapping[str, Any]) -> KernelCode:
    """``y`` = the max of each window, ``indice`` = the flat plane index of its first max."""
    op = "tdflow.max_pool_2d"
    x, y, ind = ins[0], outs[0], outs[1]
    last = channels_last(op, attrs["data_format"])
    n, c, h, w = _dims(x, last, op)
    _, _, oh, ow = _dims(y, last, op)
    if ind.shape != y.shape or ind.dtype != "i64":
        raise CudaCodegenError(f"{op}: indice must be i64 of y's shape {y.shape}")
    g = _windows(attrs, op)
    dt, t, acc = x.dtype, ctype(x.dtype), acc_type(x.dtype)
    floats = dt in ("f16", "bf16", "f32", "f64")
    lowest = "(-INFINITY)" if floats else _LOWEST[dt]
    nan = "if (best != best) break;\n        if (v != v || v > best" if floats else "if (v > best"
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = g["k"], g["s"], g["p"], g["d"]
    body = f"""    {_coords(last, n, c, oh, ow)}
    {acc} best = ({acc}){lowest};
    long long arg = -1;
    for (int a = 0; a < {kh}; ++a) {{
      const long long hh = oh * {sh} - {ph} + a * {dh};
      if (hh < 0 || hh >= {h}) continue;
      for (int e = 0; e < {kw}; ++e) {{
        const long long ww = ow * {sw} - {pw} + e * {dw};
        if (ww < 0 || ww >= {w}) continue;
        const {acc} v = {load(dt, f"x[{_at(last, c, h, w, 'hh', 'ww')}]")};
        {nan} || (arg < 0 && v == best)) {{ best = v; arg = hh * {w} + ww; }}
      }}
      {"if (best != best) break;" if floats else ""}
    }}
    y[i] = {store(dt, "best")};
    ind[i] = arg;
"""
    return _kernel(op, f"max_pool_2d_{dt}", [f"const {t}* __restrict__ x", f"{t}* __restrict__ y",
                                             "int64_t* __restrict__ ind"],
                   body, y.numel, ["in0", "out0", "out1"])


@cuda_generator("tdflow.max_pool_2d_grad")
def max_pool_2d_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                     attrs: Mapping[str, Any]) -> KernelCode:
    """``dx[h, w]`` = the ``dy`` of every window whose recorded maximum is ``(h, w)``."""
    op = "tdflow.max_pool_2d_grad"
    x, ind, dy, dx = ins[0], ins[1], ins[2], outs[0]
    last = channels_last(op, attrs["data_format"])
    n, c, h, w = _dims(x, last, op)
    _, _, oh, ow = _dims(dy, last, op)
    if ind.shape != dy.shape or dx.shape != x.shape:
        raise CudaCodegenError(f"{op}: indice {ind.shape}, dy {dy.shape} and x {x.shape} differ")
    g = _windows(attrs, op)
    dt, t = x.dtype, ctype(x.dtype)
    acc = {"f16": "float", "bf16": "float", "f32": "float", "f64": "double"}.get(dt, "long long")
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = g["k"], g["s"], g["p"], g["d"]
    body = f"""    {_coords(last, n, c, h, w, "hh", "ww")}
    const long long self = hh * {w} + ww;
    {acc} sum = 0;
    for (int a = 0; a < {kh}; ++a) {{  // the windows covering (hh, ww): oh * sh - ph + a * dh
      const long long th = hh + {ph} - a * {dh};
      if (th < 0 || th % {sh}) continue;
      const long long oh = th / {sh};
      if (oh >= {oh}) continue;
      for (int e = 0; e < {kw}; ++e) {{
        const long long tw = ww + {pw} - e * {dw};
        if (tw < 0 || tw % {sw}) continue;
        const long long ow = tw / {sw};
        if (ow >= {ow}) continue;
        const long long o = {_at(last, c, oh, ow, 'oh', 'ow')};
        if ((long long)ind[o] == self) sum += ({acc}){load(dt, 'dy[o]')};
      }}
    }}
    dx[i] = {store(dt, "sum")};
"""
    return _kernel(op, f"max_pool_2d_grad_{dt}",
                   [f"const {ctype(ind.dtype)}* __restrict__ ind", f"const {t}* __restrict__ dy",
                    f"{t}* __restrict__ dx"], body, dx.numel, ["in1", "in2", "out0"])


def _divisor(g: Mapping[str, Any], attrs: Mapping[str, Any], h: int, w: int) -> str:
    """C declarations ending in ``div``: the divisor of output ``(oh, ow)``."""
    override = int(attrs["divisor_override"] or 0)
    if override:
        return f"const int div = {override};"
    include = bool(attrs["count_include_pad"])
    parts = []
    for ax, n, k, s, p in (("h", h, g["k"][0], g["s"][0], g["p"][0]),
                           ("w", w, g["k"][1], g["s"][1], g["p"][1])):
        o = "oh" if ax == "h" else "ow"
        parts.append(f"const int s{ax} = (int){o} * {s} - {p}, e{ax} = min(s{ax} + {k}, {n + p});")
        if include:
            parts.append(f"const int n{ax} = e{ax} - s{ax};")
        else:
            parts.append(f"const int n{ax} = min(e{ax}, {n}) - max(s{ax}, 0);")
    return " ".join(parts) + " const int div = nh * nw;"


def _avg_setup(op: str, x: TensorSpec, y: TensorSpec, attrs: Mapping[str, Any]):
    last = channels_last(op, attrs["data_format"])
    n, c, h, w = _dims(x, last, op)
    _, _, oh, ow = _dims(y, last, op)
    wide = "float" if x.dtype in ("f16", "bf16") else acc_type(x.dtype)
    if x.dtype not in ("f16", "bf16", "f32", "f64"):
        raise CudaCodegenError(f"{op}: dtype {x.dtype} is not pooled (floats only)")
    return last, n, c, h, w, oh, ow, wide


@cuda_generator("tdflow.avg_pool_2d")
def avg_pool_2d(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                attrs: Mapping[str, Any]) -> KernelCode:
    """``y`` = each window's sum over its divisor."""
    op = "tdflow.avg_pool_2d"
    x, y = ins[0], outs[0]
    last, n, c, h, w, oh, ow, wide = _avg_setup(op, x, y, attrs)
    g = _windows(attrs, op, dilation=False)
    (kh, kw), (sh, sw), (ph, pw) = g["k"], g["s"], g["p"]
    dt, t = x.dtype, ctype(x.dtype)
    body = f"""    {_coords(last, n, c, oh, ow)}
    {wide} sum = 0;
    for (int a = 0; a < {kh}; ++a) {{
      const long long hh = oh * {sh} - {ph} + a;
      if (hh < 0 || hh >= {h}) continue;
      for (int e = 0; e < {kw}; ++e) {{
        const long long ww = ow * {sw} - {pw} + e;
        if (ww >= 0 && ww < {w}) sum += {load(dt, f"x[{_at(last, c, h, w, 'hh', 'ww')}]")};
      }}
    }}
    {_divisor(g, attrs, h, w)}
    y[i] = {store(dt, f"sum / ({wide})div")};
"""
    return _kernel(op, f"avg_pool_2d_{dt}", [f"const {t}* __restrict__ x", f"{t}* __restrict__ y"],
                   body, y.numel, ["in0", "out0"])


@cuda_generator("tdflow.avg_pool_2d_grad")
def avg_pool_2d_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                     attrs: Mapping[str, Any]) -> KernelCode:
    """``dx[h, w]`` = the sum of ``dy / divisor`` over the windows covering ``(h, w)``."""
    op = "tdflow.avg_pool_2d_grad"
    x, dy, dx = ins[0], ins[1], outs[0]
    last, n, c, h, w, oh, ow, wide = _avg_setup(op, x, dy, attrs)
    g = _windows(attrs, op, dilation=False)
    (kh, kw), (sh, sw), (ph, pw) = g["k"], g["s"], g["p"]
    dt, t = x.dtype, ctype(x.dtype)
    body = f"""    {_coords(last, n, c, h, w, "hh", "ww")}
    {wide} sum = 0;
    for (int a = 0; a < {kh}; ++a) {{  // offset a of window oh covers hh = oh * sh - ph + a
      const long long th = hh + {ph} - a;
      if (th < 0 || th % {sh} || th / {sh} >= {oh}) continue;
      const long long oh = th / {sh};
      for (int e = 0; e < {kw}; ++e) {{
        const long long tw = ww + {pw} - e;
        if (tw < 0 || tw % {sw} || tw / {sw} >= {ow}) continue;
        const long long ow = tw / {sw};
        {_divisor(g, attrs, h, w)}
        sum += ({wide}){load(dt, f"dy[{_at(last, c, oh, ow, 'oh', 'ow')}]")} / ({wide})div;
      }}
    }}
    dx[i] = {store(dt, "sum")};
"""
    return _kernel(op, f"avg_pool_2d_grad_{dt}",
                   [f"const {t}* __restrict__ dy", f"{t}* __restrict__ dx"], body, dx.numel,
                   ["in1", "out0"])


def _cell(ax: str, i: str, n: int, out: int) -> str:
    """Declarations of ``<ax>0, <ax>1``: the input range of adaptive cell ``i``."""
    return (f"const long long {ax}0 = ({i} * {n}) / {out}, "
            f"{ax}1 = (({i} + 1) * {n} + {out - 1}) / {out};")


@cuda_generator("tdflow.adaptive_avg_pool2d")
def adaptive_avg_pool2d(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                        attrs: Mapping[str, Any]) -> KernelCode:
    """``y[i, j]`` = the mean of ``x`` over cell ``(i, j)``."""
    op = "tdflow.adaptive_avg_pool2d"
    x, y = ins[0], outs[0]
    last, n, c, h, w, oh, ow, wide = _avg_setup(op, x, y, attrs)
    dt, t = x.dtype, ctype(x.dtype)
    body = f"""    {_coords(last, n, c, oh, ow)}
    {_cell("r", "oh", h, oh)} {_cell("q", "ow", w, ow)}
    {wide} sum = 0;
    for (long long hh = r0; hh < r1; ++hh) {{
      {wide} row = 0;
      for (long long ww = q0; ww < q1; ++ww) row += {load(dt, f"x[{_at(last, c, h, w, 'hh', 'ww')}]")};
      sum += row;
    }}
    y[i] = {store(dt, f"sum / ({wide})((r1 - r0) * (q1 - q0))")};
"""
    return _kernel(op, f"adaptive_avg_pool2d_{dt}",
                   [f"const {t}* __restrict__ x", f"{t}* __restrict__ y"], body, y.numel,
                   ["in0", "out0"])


@cuda_generator("tdflow.adaptive_avg_pool2d_grad")
def adaptive_avg_pool2d_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                             attrs: Mapping[str, Any]) -> KernelCode:
    """``dx[h, w]`` = the sum of ``dy / cell size`` over the cells covering ``(h, w)``."""
    op = "tdflow.adaptive_avg_pool2d_grad"
    x, dy, dx = ins[0], ins[1], outs[0]
    last, n, c, h, w, oh, ow, wide = _avg_setup(op, x, dy, attrs)
    dt, t = x.dtype, ctype(x.dtype)
    # the cells covering hh lie in (hh * out / in - 1, (hh + 1) * out / in]: scan that range
    body = f"""    {_coords(last, n, c, h, w, "hh", "ww")}
    {wide} sum = 0;
    const long long i0 = max(0LL, hh * {oh} / {h} - 1), i1 = min({oh - 1}LL, (hh + 1) * {oh} / {h});
    const long long j0 = max(0LL, ww * {ow} / {w} - 1), j1 = min({ow - 1}LL, (ww + 1) * {ow} / {w});
    for (long long oh = i0; oh <= i1; ++oh) {{
      {_cell("r", "oh", h, oh)}
      if (hh < r0 || hh >= r1) continue;
      for (long long ow = j0; ow <= j1; ++ow) {{
        {_cell("q", "ow", w, ow)}
        if (ww < q0 || ww >= q1) continue;
        sum += ({wide}){load(dt, f"dy[{_at(last, c, oh, ow, 'oh', 'ow')}]")} / ({wide})((r1 - r0) * (q1 - q0));
      }}
    }}
    dx[i] = {store(dt, "sum")};
"""
    return _kernel(op, f"adaptive_avg_pool2d_grad_{dt}",
                   [f"const {t}* __restrict__ dy", f"{t}* __restrict__ dx"], body, dx.numel,
                   ["in1", "out0"])
