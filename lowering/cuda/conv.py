"""CUDA kernels of ``conv2d``, ``conv_data_grad`` and ``conv_filter_grad``: implicit GEMM.

Each op is one batched GEMM of :func:`~tdflow.lowering.cuda._gemm.gemm_code` (the tiled
SIMT kernel, or tensor cores for f16/bf16), batched over ``groups``, whose operand loaders
gather the im2col matrix on the fly instead of materialising it (no scratch, one pass over
the input per tile):

* ``conv2d``: ``out[g](o, (n, oh, ow)) = w[g](o, (c, r, s)) @ x[g]((c, r, s), (n, oh, ow))``
  with ``x`` read at ``(oh*sh - ph + r*dh, ow*sw - pw + s*dw)`` (zero outside), then ``+ bias[o]``
  and ``+ _add_to_output``;
* ``conv_data_grad``: ``dx[g](c, (n, h, w)) = w^T[g](c, (o, r, s)) @ dy[g]((o, r, s), (n, h, w))``
  where ``dy`` is read at ``((h + ph - r*dh) / sh, (w + pw - s*dw) / sw)`` when both divide
  exactly and land inside ``dy`` (a transposed convolution as a gather: no atomics);
* ``conv_filter_grad``: ``dw[g](o, (c, r, s)) = dy[g](o, (n, oh, ow)) @ x^T[g]((n, oh, ow),
  (c, r, s))``, whose long K is split across blocks when the filter alone is too small to fill
  the GPU.

For ``channels_last`` the reduction index runs channel-fastest (``(r, s, c)``), which is how
such tensors lie in memory, so loads still coalesce. Sums run in float for f32 and half types,
double for f64 and wrap-around unsigned integers for the integer types (numpy's integer matmul).

>>> from tdflow.lowering.cuda.code import TensorSpec
>>> attrs = {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [1, 1],
...          "dilation_rate": [1, 1], "padding_before": [1, 1], "groups": 1}
>>> code = conv2d([TensorSpec((2, 3, 8, 8), "f32"), TensorSpec((4, 3, 3, 3), "f32")],
...               [TensorSpec((2, 4, 8, 8), "f32")], attrs)
>>> [ln.args for ln in code.launches]
[('in0', 'in1', 'out0')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._attrs import channels_last
from ._gemm import Gemm, gemm_acc, gemm_code
from .code import CudaCodegenError, KernelCode, TensorSpec, cuda_generator
from .common import ctype, load, store


@dataclass(frozen=True)
class Geometry:
    """Sizes of one 2-D convolution, in channels-first terms (``last`` records the layout)."""

    op: str
    last: bool
    n: int
    c: int
    h: int
    w: int
    o: int
    kh: int
    kw: int
    oh: int
    ow: int
    pad: tuple[int, int]
    stride: tuple[int, int]
    dil: tuple[int, int]
    groups: int

    @property
    def cg(self) -> int:
        return self.c // self.groups

    @property
    def og(self) -> int:
        return self.o // self.groups

    # C expressions of flat offsets (variables named as in the docstring above)
    def x_at(self, b: str, ch: str, h: str, w: str) -> str:
        b, ch, h, w = (f"({v})" for v in (b, ch, h, w))
        if self.last:
            return f"(((I){b} * {self.h} + {h}) * {self.w} + {w}) * {self.c} + {ch}"
        return f"(((I){b} * {self.c} + {ch}) * {self.h} + {h}) * {self.w} + {w}"

    def y_at(self, b: str, ch: str, h: str, w: str) -> str:
        b, ch, h, w = (f"({v})" for v in (b, ch, h, w))
        if self.last:
            return f"(((I){b} * {self.oh} + {h}) * {self.ow} + {w}) * {self.o} + {ch}"
        return f"(((I){b} * {self.o} + {ch}) * {self.oh} + {h}) * {self.ow} + {w}"

    def w_at(self, o: str, c: str, r: str, s: str) -> str:
        o, c, r, s = (f"({v})" for v in (o, c, r, s))
        if self.last:
            return f"((((I){o} * {self.kh} + {r}) * {self.kw} + {s}) * {self.cg} + {c})"
        return f"((((I){o} * {self.cg} + {c}) * {self.kh} + {r}) * {self.kw} + {s})"

    def window(self, inner: str, size: int) -> str:
        """Declarations of ``(c, r, s)`` (``size`` channels) from a window index ``inner``, in
        the layout's order (channel-fastest when channels_last)."""
        kk = self.kh * self.kw
        if self.last:
            return (f"const int r = {inner} / {self.kw * size}, s = ({inner} / {size}) % "
                    f"{self.kw}, c = {inner} % {size};")
        return f"const int c = {inner} / {kk}, r = ({inner} / {self.kw}) % {self.kh}, " \
               f"s = {inner} % {self.kw};"


def geometry(op: str, x: TensorSpec, w_or_dw: TensorSpec, dy_or_out: TensorSpec,
             attrs: Mapping[str, Any]) -> Geometry:
    """The convolution ``x`` (activation) ``*`` filter ``->`` output, checked as the CPU
    kernel checks it (``CudaCodegenError`` naming ``op`` otherwise).

    >>> g = geometry("tdflow.conv2d", TensorSpec((2, 6, 9, 9), "f32"),
    ...              TensorSpec((4, 3, 3, 3), "f32"), TensorSpec((2, 4, 4, 4), "f32"),
    ...              {"data_format": "channels_first", "kernel_size": [3, 3], "strides": [2, 2],
    ...               "dilation_rate": [1, 1], "padding_before": [0, 0], "groups": 2})
    >>> (g.cg, g.og, g.oh, g.ow)
    (3, 2, 4, 4)
    """
    last = channels_last(op, attrs["data_format"])
    # conv2d has no num_spatial_dims attribute (its grads do, where the default 0 means 2)
    spatial = 2 if op == "tdflow.conv2d" else int(attrs["num_spatial_dims"] or 2)
    if spatial != 2 or x.ndim != 4 or w_or_dw.ndim != 4:
        raise CudaCodegenError(f"{op}: only 2-D convolutions (4-D tensors) are generated")
    n, c, h, w = (x.shape[0], x.shape[3], *x.shape[1:3]) if last else x.shape
    fs = w_or_dw.shape
    o, cgw, kh, kw = (fs[0], fs[3], fs[1], fs[2]) if last else fs
    ks = attrs["kernel_size"]
    if ks and (tuple(int(t) for t in ks) != (kh, kw)):
        raise CudaCodegenError(f"{op}: kernel_size {list(ks)} does not match the filter "
                               f"{list(fs)}")
    groups = int(attrs["groups"] or 1)  # the grads' .td default is 0: one group
    if c % groups or o % groups or cgw != c // groups:
        raise CudaCodegenError(f"{op}: {c} input channels, {o} filters of {cgw} channels and "
                               f"groups={groups} do not fit")
    # TDF_PairAttr: two entries each, checked
    pad, stride, dil = (tuple(attrs[n]) for n in ("padding_before", "strides", "dilation_rate"))
    out = [(s + 2 * p - (d * (k - 1) + 1)) // st + 1
           for s, k, p, st, d in zip((h, w), (kh, kw), pad, stride, dil)]
    ys = dy_or_out.shape
    want = (n, out[0], out[1], o) if last else (n, o, out[0], out[1])
    if min(out) <= 0 or ys != want:
        raise CudaCodegenError(f"{op}: output shape {list(ys)} is not the convolution's "
                               f"{list(want)}")
    return Geometry(op, last, n, c, h, w, o, kh, kw, out[0], out[1], pad, stride, dil, groups)


def _index_type(*specs: TensorSpec) -> str:
    return "long long" if max(s.numel for s in specs) >= 2 ** 31 else "int"


def _code(op: str, g: Gemm) -> KernelCode:
    if g.m * g.n * g.z == 0:
        return KernelCode(op, "", ())
    source, launches, scratch = gemm_code(g)
    return KernelCode(op, source, tuple(launches), scratch)


@cuda_generator("tdflow.conv2d")
def conv2d(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
           attrs: Mapping[str, Any]) -> KernelCode:
    """``out = conv(in, weight) (+ bias) (+ _add_to_output)``: one implicit GEMM per group."""
    op = "tdflow.conv2d"
    x, w, out = ins[0], ins[1], outs[0]
    bias = add = None
    for extra in ins[2:]:  # both optional: a 1-D one is the bias, the result-shaped one the add
        if extra.ndim == 1 and bias is None and add is None:
            bias = extra
        else:
            add = extra
    dt = x.dtype
    geo = geometry(op, x, w, out, attrs)
    if any(s.dtype != dt for s in (*ins, out)) or (bias is not None and bias.shape != (geo.o,)) \
            or (add is not None and add.shape != out.shape):
        raise CudaCodegenError(f"{op}: operands {[(s.shape, s.dtype) for s in ins]} do not fit")
    t, acc = ctype(dt), gemm_acc(dt)
    fields = [(f"const {t}* __restrict__", "x", "in0"), (f"const {t}* __restrict__", "w", "in1")]
    value = "acc"
    if bias is not None:
        fields.append((f"const {t}* __restrict__", "bias", "in2"))
        value += f" + ({acc}){load(dt, 'P.bias[o]')}"
    if add is not None:
        fields.append((f"const {t}*", "add", f"in{len(fields)}"))
        value += f" + ({acc}){load(dt, 'P.add[e]')}"
    fields.append((f"{t}*", "y", "out0"))
    (sh, sw), (ph, pw), (dh, dw) = geo.stride, geo.pad, geo.dil
    spatial = geo.oh * geo.ow
    pix = (f"const int b = n / {spatial}, oh = (n / {geo.ow}) % {geo.oh}, ow = n % {geo.ow};")
    load_b = (f"{pix} {geo.window('k', geo.cg)}\n"
              f"  const int h = oh * {sh} - {ph} + r * {dh}, w = ow * {sw} - {pw} + s * {dw};\n"
              f"  return (h >= 0 && h < {geo.h} && w >= 0 && w < {geo.w}) ? "
              f"P.x[{geo.x_at('b', f'z * {geo.cg} + c', 'h', 'w')}] : {store(dt, '0')};")
    g = Gemm(f"conv2d_{dt}", dt, geo.groups, geo.og, geo.n * spatial, geo.cg * geo.kh * geo.kw,
             fields, load_a=f"return P.w[(I)(z * {geo.og} + m) * "
                             f"{geo.cg * geo.kh * geo.kw} + k];",
             load_b=load_b,
             store_c=f"{pix} const int o = z * {geo.og} + m; "
                     f"const I e = {geo.y_at('b', 'o', 'oh', 'ow')}; P.y[e] = {store(dt, value)};",
             a_k_fast=True, b_n_fast=not geo.last, index=_index_type(*ins, out), gather=True)
    return _code(op, g)


@cuda_generator("tdflow.conv_data_grad")
def conv_data_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                   attrs: Mapping[str, Any]) -> KernelCode:
    """``dx`` (shaped like ``x_like``, + ``_add_to_output``) as a gather over ``dy``."""
    op = "tdflow.conv_data_grad"
    dy, w, x_like, out = ins[0], ins[1], ins[2], outs[0]
    add = ins[3] if len(ins) > 3 else None
    dt = dy.dtype
    geo = geometry(op, x_like, w, dy, attrs)
    if w.dtype != dt or out.dtype != dt or out.shape != x_like.shape or (
            add is not None and add.shape != out.shape):
        raise CudaCodegenError(f"{op}: operands {[(s.shape, s.dtype) for s in ins]} do not fit")
    t, acc = ctype(dt), gemm_acc(dt)
    fields = [(f"const {t}* __restrict__", "dy", "in0"), (f"const {t}* __restrict__", "w", "in1")]
    value = "acc"
    if add is not None:
        fields.append((f"const {t}*", "add", "in3"))
        value += f" + ({acc}){load(dt, 'P.add[e]')}"
    fields.append((f"{t}*", "dx", "out0"))
    (sh, sw), (ph, pw), (dh, dw) = geo.stride, geo.pad, geo.dil
    pix = (f"const int b = n / {geo.h * geo.w}, h = (n / {geo.w}) % {geo.h}, "
           f"w = n % {geo.w};")
    # k runs over (o, r, s), filter-fastest channels_last: the same helper with o for c
    win = geo.window("k", geo.og).replace("c =", "o =")
    load_a = (f"{win} return P.w[{geo.w_at(f'z * {geo.og} + o', 'm', 'r', 's')}];")
    load_b = (f"{pix} {win}\n"
              f"  const int th = h + {ph} - r * {dh}, tw = w + {pw} - s * {dw};\n"
              f"  if (th < 0 || tw < 0 || th % {sh} || tw % {sw}) return {store(dt, '0')};\n"
              f"  const int oh = th / {sh}, ow = tw / {sw};\n"
              f"  return (oh < {geo.oh} && ow < {geo.ow}) ? "
              f"P.dy[{geo.y_at('b', f'z * {geo.og} + o', 'oh', 'ow')}] : {store(dt, '0')};")
    g = Gemm(f"conv_data_grad_{dt}", dt, geo.groups, geo.cg, geo.n * geo.h * geo.w,
             geo.og * geo.kh * geo.kw, fields, load_a=load_a, load_b=load_b,
             store_c=f"{pix} const I e = {geo.x_at('b', f'z * {geo.cg} + m', 'h', 'w')}; "
                     f"P.dx[e] = {store(dt, value)};",
             a_k_fast=not geo.last, b_n_fast=not geo.last, index=_index_type(*ins, out), gather=True)
    return _code(op, g)


@cuda_generator("tdflow.conv_filter_grad")
def conv_filter_grad(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                     attrs: Mapping[str, Any]) -> KernelCode:
    """``dw`` (the filter's layout) as ``dy @ im2col(x)^T`` per group, K split when long."""
    op = "tdflow.conv_filter_grad"
    dy, x, out = ins[0], ins[1], outs[0]
    dt = dy.dtype
    geo = geometry(op, x, out, dy, attrs)
    if x.dtype != dt or out.dtype != dt:
        raise CudaCodegenError(f"{op}: operands {[(s.shape, s.dtype) for s in ins]} do not fit")
    t = ctype(dt)
    fields = [(f"const {t}* __restrict__", "dy", "in0"), (f"const {t}* __restrict__", "x", "in1"),
              (f"{t}*", "dw", "out0")]
    (sh, sw), (ph, pw), (dh, dw) = geo.stride, geo.pad, geo.dil
    spatial = geo.oh * geo.ow
    pix = (f"const int b = k / {spatial}, oh = (k / {geo.ow}) % {geo.oh}, ow = k % {geo.ow};")
    load_b = (f"{pix} {geo.window('n', geo.cg)}\n"
              f"  const int h = oh * {sh} - {ph} + r * {dh}, w = ow * {sw} - {pw} + s * {dw};\n"
              f"  return (h >= 0 && h < {geo.h} && w >= 0 && w < {geo.w}) ? "
              f"P.x[{geo.x_at('b', f'z * {geo.cg} + c', 'h', 'w')}] : {store(dt, '0')};")
    n_cols = geo.cg * geo.kh * geo.kw
    g = Gemm(f"conv_filter_grad_{dt}", dt, geo.groups, geo.og, n_cols, geo.n * spatial, fields,
             load_a=f"{pix} return P.dy[{geo.y_at('b', f'z * {geo.og} + m', 'oh', 'ow')}];",
             load_b=load_b,
             store_c=f"P.dw[(I)(z * {geo.og} + m) * {n_cols} + n] = {store(dt, 'acc')};",
             a_k_fast=not geo.last, b_n_fast=geo.last, index=_index_type(*ins, out), gather=True)
    return _code(op, g)
