"""Every differentiable standard op, backward, in both autograd modes.

Each case applies one op to float64 inputs; the loss is ``sum_k sum(result_k * w_k)`` with a
fixed random weight ``w_k`` per floating-point result used. The analytic gradient of eager
``backward()`` is checked against central finite differences of the op's forward (the
functional API, or an ``OpRunner`` for ops outside it), and ``tdflow.value_and_grad`` of the
same computation written as MLIR must give the eager gradients bit for bit.
``test_every_differentiable_op_has_a_case`` keeps the table complete: an op that gains a
gradient needs a case here.
"""

from __future__ import annotations

import importlib
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from tdflow.dialect.attr_convert import to_attr
from tdflow.dialect.context import standard_context
from tdflow.dialect.grad import Forward, GradError, gradient_of, input_gradients
from tdflow.runtime.eager import OpRunner

import tdflow

F = tdflow.functional
CTX = standard_context()
rng = np.random.default_rng(20261201)

EPS = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-3}
RTOL, ATOL = 1e-6, 1e-8


# ---- inputs ------------------------------------------------------------------------------

def normal(*shape: int) -> np.ndarray:
    return np.asarray(rng.normal(size=shape))


def positive(*shape: int) -> np.ndarray:
    """In [0.5, 2]: for log, sqrt, pow's base."""
    return np.asarray(rng.uniform(0.5, 2.0, size=shape))


def away(*shape: int) -> np.ndarray:
    """|x| in [0.3, 1.5]: away from relu's kink and from division by zero."""
    return np.asarray(rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.3, 1.5, size=shape))


def distinct(*shape: int) -> np.ndarray:
    """Values at least 0.1 apart: no ties for max, reduce_max, max_pool."""
    n = int(np.prod(shape, dtype=int))
    return (rng.permutation(n) * 0.1 - n * 0.05 + rng.uniform(0, 0.01, n)).reshape(shape)


def labels(n: int, depth: int) -> np.ndarray:
    return rng.integers(0, depth, size=n).astype(np.int64)


# ---- the case table ------------------------------------------------------------------------

@dataclass
class Case:
    """One application of ``op``: ``inputs`` by operand name (an array, or a list of arrays for
    a variadic operand), ``attrs`` Python attribute values, ``wrt`` the inputs differentiated,
    ``use`` the results in the loss (default: every floating-point one)."""

    op: str
    inputs: dict[str, Any]
    attrs: dict[str, Any] = field(default_factory=dict)
    wrt: tuple[str, ...] = ()
    use: tuple[str, ...] | None = None
    label: str = ""
    marks: tuple = ()

    @property
    def opdef(self) -> Any:
        return CTX.lookup(f"tdflow.{self.op}")

    @property
    def id(self) -> str:
        return f"{self.op}-{self.label}" if self.label else self.op


CASES: list[Case] = []


def case(op: str, inputs: dict[str, Any], attrs: dict[str, Any] | None = None, *,
         wrt: str, use: str | None = None, label: str = "", marks: tuple = ()) -> None:
    CASES.append(Case(op, inputs, attrs or {}, tuple(wrt.split()),
                      None if use is None else tuple(use.split()), label, marks))


def _shape_label(*arrays: np.ndarray) -> str:
    return "_".join("x".join(map(str, a.shape)) or "scalar" for a in arrays)


for name, make in (("relu", away), ("sigmoid", normal), ("tanh", normal), ("gelu", normal),
                   ("exp", normal), ("log", positive), ("sqrt", positive),
                   ("negative", normal), ("square", normal), ("reciprocal", away)):
    operand = CTX.lookup(f"tdflow.{name}").operands[0].name
    for shape in ((3, 4), (2, 3, 2), ()):
        x = make(*shape)
        case(name, {operand: x}, wrt=operand, label=_shape_label(x))

for alpha in (0.2, 1.5):
    for shape in ((3, 4), (5,)):
        case("leaky_relu", {"x": away(*shape)}, {"alpha": alpha}, wrt="x",
             label=f"alpha{alpha}_{'x'.join(map(str, shape))}")

for name, ints, floats, make in (("scalar_add", (2, -3), (-1.5, 0.25), normal),
                                 ("scalar_mul", (3, -2), (0.5, -2.25), normal),
                                 ("scalar_pow", (3, 2), (2.5, -0.5), positive)):
    for v in ints:
        case(name, {"in": make(3, 4)}, {"has_int_operand": True, "int_operand": v},
             wrt="in", label=f"int{v}")
    for v in floats:
        case(name, {"in": make(2, 3)}, {"has_float_operand": True, "float_operand": v},
             wrt="in", label=f"float{v}")

_BROADCASTS = (((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)),
               ((2, 3), ()), ((2, 1, 3), (4, 1)))
for name, mx, my in (("broadcast_add", normal, normal), ("broadcast_sub", normal, normal),
                     ("broadcast_mul", normal, normal), ("broadcast_div", normal, away),
                     ("broadcast_maximum", normal, normal),
                     ("broadcast_minimum", normal, normal),
                     ("broadcast_pow", positive, normal)):
    for sx, sy in _BROADCASTS:
        x, y = mx(*sx), my(*sy)
        case(name, {"x": x, "y": y}, wrt="x y", label=_shape_label(x, y))
case("broadcast_mul", {"x": normal(3, 4), "y": normal(4)}, wrt="y", label="wrt_y_only")

for a_shape, b_shape, axis in (((2, 3, 4), (3,), 1), ((2, 3, 4), (4,), -1), ((3, 4), (3,), 0),
                               ((4, 5), (5,), 1)):
    case("bias_add", {"a": normal(*a_shape), "b": normal(*b_shape)}, {"axis": axis},
         wrt="a b", label=f"{'x'.join(map(str, a_shape))}_axis{axis}")

for op, batch in (("matmul", ()), ("batch_matmul", (2,))):
    for ta in (False, True):
        for tb in (False, True):
            for alpha in (1.0, 0.5):
                a = normal(*batch, *((4, 3) if ta else (3, 4)))
                b = normal(*batch, *((2, 4) if tb else (4, 2)))
                case(op, {"a": a, "b": b},
                     {"transpose_a": ta, "transpose_b": tb, "alpha": alpha}, wrt="a b",
                     label=f"ta{int(ta)}_tb{int(tb)}_alpha{alpha}")
    case(op, {"a": normal(*batch, 3, 4), "b": normal(*batch, 4, 2),
              "_add_to_output": normal(*batch, 3, 2)}, {"alpha": 2.0},
         wrt="a b _add_to_output", label="add_to_output")

for axis in ([1], [0, 2], [-1], [-3, -1], [0, 1, 2], []):
    for keep in (False, True):
        case("reduce_sum", {"input_tensor": normal(2, 3, 4)},
             {"axis": axis, "keepdims": keep}, wrt="input_tensor",
             label=f"axis{axis}_keep{int(keep)}".replace(" ", ""))
        case("reduce_max", {"input_tensor": distinct(2, 3, 4)},
             {"axis": axis, "keepdims": keep}, wrt="input_tensor",
             label=f"axis{axis}_keep{int(keep)}".replace(" ", ""))

for shape in ((3, 4), (2, 2, 3), (5,)):
    x = normal(*shape) * 2
    case("softmax", {"in": x}, wrt="in", label=_shape_label(x))
    case("log_softmax", {"in": normal(*shape) * 2}, wrt="in", label=_shape_label(x))

for use in ("out", "prob", "prob out"):
    case("sparse_softmax_cross_entropy", {"prediction": normal(4, 5), "label": labels(4, 5)},
         {"depth": 5}, wrt="prediction", use=use, label=f"through_{use.replace(' ', '_')}")

for shape, new in (((3, 4), [2, -1]), ((2, 3, 2), [-1]), ((6,), [3, 2]), ((2, 3), [1, 6, 1]),
                   ((), [1, 1])):
    x = normal(*shape)
    case("reshape", {"in": x}, {"shape": new}, wrt="in",
         label=f"{_shape_label(x)}_to_{new}".replace(" ", ""))

for shape, perm in (((2, 3, 4), [2, 0, 1]), ((2, 3, 4), [1, 0, 2]), ((2, 3, 4), [0, 2, 1]),
                    ((3, 4), [1, 0]), ((2, 3, 4), [0, 1, 2])):
    case("transpose", {"input": normal(*shape)}, {"perm": perm}, wrt="input",
         label=f"{'x'.join(map(str, shape))}_perm{perm}".replace(" ", ""))

case("cast", {"in": normal(3, 4)}, {"dtype": "f64"}, wrt="in", label="f64_to_f64")
case("cast", {"in": normal(3, 4).astype(np.float32)}, {"dtype": "f64"}, wrt="in",
     label="f32_to_f64")

for x_shape, like_shape, axis in (((2, 3, 4), (3, 4), [0]), ((2, 3, 4), (2, 1, 4), [1]),
                                  ((2, 3, 4), (4,), [0, 1]), ((3, 4), (3, 1), [-1])):
    case("reduce_sum_like", {"x": normal(*x_shape), "like": normal(*like_shape)},
         {"axis": axis}, wrt="x", label=f"{'x'.join(map(str, x_shape))}_axis{axis}")

for x_shape, like_shape, axes in (((4,), (3, 4), [0]), ((3,), (3, 4), [1]),
                                  ((3, 1), (3, 4), []), ((4,), (2, 3, 4), [0, 1]),
                                  ((3,), (3, 4), [-1])):
    case("broadcast_like", {"x": normal(*x_shape), "like": normal(*like_shape)},
         {"broadcast_axes": axes}, wrt="x", label=f"{'x'.join(map(str, x_shape))}_axes{axes}")


def _conv(label: str, x: np.ndarray, w: np.ndarray, *, bias: bool = False, add: Any = None,
          fmt: str = "channels_first", k: int = 2, stride: int = 1, pad: int = 0,
          dil: int = 1, groups: int = 1) -> None:
    filters = w.shape[0]
    inputs = {"in": x, "weight": w}
    if bias:
        inputs["bias"] = normal(filters)
    if add is not None:
        inputs["_add_to_output"] = add
    case("conv2d", inputs, {"filters": filters, "padding_before": [pad, pad],
                            "data_format": fmt, "kernel_size": [k, k],
                            "strides": [stride, stride], "dilation_rate": [dil, dil],
                            "groups": groups},
         wrt=" ".join(inputs), label=label)


_conv("nchw", normal(1, 2, 4, 3), normal(2, 2, 2, 2))
_conv("nchw_bias_batch2", normal(2, 2, 3, 2), normal(3, 2, 2, 2), bias=True)
_conv("nchw_stride2_pad1", normal(1, 2, 4, 3), normal(2, 2, 2, 2), stride=2, pad=1, bias=True)
_conv("nchw_k3_pad1", normal(1, 2, 3, 3), normal(1, 2, 3, 3), k=3, pad=1)
_conv("nchw_dilation2", normal(1, 2, 4, 3), normal(2, 2, 2, 2), dil=2)
_conv("nchw_groups2", normal(1, 4, 3, 2), normal(2, 2, 2, 2), groups=2, bias=True)
_conv("nchw_add_to_output", normal(1, 2, 3, 3), normal(2, 2, 2, 2), add=normal(1, 2, 2, 2))
_conv("nhwc", normal(1, 4, 3, 2), normal(2, 2, 2, 2), fmt="channels_last")
_conv("nhwc_bias_stride2_pad1", normal(1, 4, 3, 2), normal(3, 2, 2, 2), fmt="channels_last",
      bias=True, stride=2, pad=1)


def _pool(label: str, x: np.ndarray, k: int, stride: int, pad: int, *, dil: int = 1,
          fmt: str = "channels_first", ceil: bool = False) -> None:
    case("max_pool_2d", {"x": x}, {"padding": [pad, pad], "data_format": fmt,
                                   "kernel_size": [k, k], "stride": [stride, stride],
                                   "dilation": [dil, dil], "ceil_mode": ceil},
         wrt="x", label=label)


_pool("k2_s2", distinct(1, 2, 4, 2), 2, 2, 0)
_pool("k3_s1_pad1", distinct(1, 1, 4, 4), 3, 1, 1)
_pool("k2_s1_dilation2", distinct(1, 1, 4, 5), 2, 1, 0, dil=2)
_pool("k2_s2_ceil", distinct(1, 2, 3, 3), 2, 2, 0, ceil=True)
_pool("nhwc_k2_s1", distinct(1, 3, 3, 2), 2, 1, 0, fmt="channels_last")

# rate 0 only: a seeded generator advances call after call, so a rate > 0 mask differs between
# the two forwards of a finite difference (test_dropout_gradient_uses_the_forward_mask)
case("dropout", {"in": normal(3, 4)}, {"rate": 0.0}, wrt="in", label="rate0")
case("dropout", {"in": normal(3, 4), "_add_to_output": normal(3, 4)}, {"rate": 0.0, "seed": 7},
     wrt="in _add_to_output", label="rate0_add_to_output")

for shape in ((3, 4), ()):
    y, dy = away(*shape), normal(*shape)
    case("relu_grad", {"y": y, "dy": dy}, wrt="y dy", label=_shape_label(y))
    case("leaky_relu_grad", {"x": away(*shape), "dy": normal(*shape)}, {"alpha": 0.2},
         wrt="x dy", label=_shape_label(y))
    case("sigmoid_grad", {"y": rng.uniform(0.1, 0.9, shape), "dy": normal(*shape)},
         wrt="y dy", label=_shape_label(y))
    case("tanh_grad", {"y": rng.uniform(-0.9, 0.9, shape), "dy": normal(*shape)},
         wrt="y dy", label=_shape_label(y))
    case("gelu_grad", {"x": normal(*shape), "dy": normal(*shape)}, wrt="x dy",
         label=_shape_label(y))
case("leaky_relu_grad", {"x": away(3, 4), "dy": normal(3, 4)}, {"alpha": 1.5}, wrt="x dy",
     label="alpha1.5")
for shape in ((3, 4), (2, 2, 3)):
    y = F.softmax(tdflow.tensor(normal(*shape))).numpy()
    case("softmax_grad", {"y": y, "dy": normal(*shape)}, wrt="y dy", label=_shape_label(y))
case("dropout_grad", {"dy": normal(3, 4), "mask": rng.random((3, 4)) < 0.5}, {"scale": 2.0},
     wrt="dy", label="i1_mask")
case("dropout_grad", {"dy": normal(3, 4), "mask": (rng.random((3, 4)) < 0.5).astype(np.int8)},
     {"scale": 1.25}, wrt="dy", label="i8_mask")

for expr, shapes, makers in (("mul(exp(in0), in1)", ((3, 4), (3, 4)), (normal, normal)),
                             ("mul(exp(in0), in1)", ((3, 4), (4,)), (normal, normal)),
                             ("where(gt(in0, in1), in0, mul(in1, 2.0))", ((3, 4), (3, 4)),
                              (distinct, normal)),
                             ("add(mul(in0, in0), tanh(in1))", ((2, 3), ()), (normal, normal)),
                             ("div(in0, add(mul(in1, in1), in2))", ((3, 4), (4,), (3, 1)),
                              (normal, normal, positive)),
                             ("sub(log(in0), mul(in0, 0.5))", ((2, 3),), (positive,))):
    arrays = [m(*s) for m, s in zip(makers, shapes)]
    case("fused_elementwise", {"in": arrays}, {"expr": expr}, wrt="in",
         label=f"{expr}_{_shape_label(*arrays)}".replace(" ", ""))


# The op families of tdflow/ops/*.td keep their cases next to their own tests, in
# grad_cases_<family>.py: ``add_cases(case, h)`` with ``case`` as above and ``h`` this module
# (for normal, positive, away, distinct, labels).
for _family in ("math", "elementwise_math", "norm", "index", "train", "boxing"):
    importlib.import_module(f"grad_cases_{_family}").add_cases(case, sys.modules[__name__])


def _has_gradient(op: str) -> bool:
    opdef = CTX.lookup(f"tdflow.{op}")
    return opdef is not None and gradient_of(CTX, opdef) is not None


# Ops a colleague is adding: cases once they exist with a gradient.
if _has_gradient("slice"):
    for shape, start, stop, step in (((4, 6), [0, -5], [4, 6], [2, 3]),
                                     ((3, 4), [1, 0], [3, 9223372036854775807], [1, 2]),
                                     ((2, 3, 4), [0, 1, 0], [2, 3, 4], [1, 1, 3])):
        case("slice", {"x": normal(*shape)}, {"start": start, "stop": stop, "step": step},
             wrt="x", label=f"{'x'.join(map(str, shape))}_step{step}".replace(" ", ""))
if _has_gradient("slice_grad"):
    for like, start, stop, step, dy_shape in (((4, 6), [0, -5], [4, 6], [2, 3], (2, 2)),
                                              ((3, 4), [1, 0], [3, 4], [1, 2], (2, 2))):
        case("slice_grad", {"dy": normal(*dy_shape)},
             {"like_shape": list(like), "start": start, "stop": stop, "step": step},
             wrt="dy", label=f"like{'x'.join(map(str, like))}")
if _has_gradient("cat"):
    for shapes, axis in ((((2, 3), (1, 3)), 0), (((2, 3), (2, 1), (2, 2)), 1),
                         (((2, 3), (2, 2)), -1), (((3,),), 0)):
        arrays = [normal(*s) for s in shapes]
        case("cat", {"in": arrays}, {"axis": axis}, wrt="in",
             label=f"{_shape_label(*arrays)}_axis{axis}")


# ---- running a case --------------------------------------------------------------------------

_RUNNERS: dict[tuple, OpRunner] = {}


def _forward(c: Case, tensors: dict[str, Any]) -> tuple:
    """The op's results on ``tensors``: the functional API, or an ``OpRunner`` for ops it does
    not have (``fused_elementwise`` is ``LoweringOnly``)."""
    fn = getattr(F, c.op, None)
    params = {p.name for s in getattr(fn, "signatures", ()) for p in s.params}
    if fn is not None and params >= set(c.inputs):  # (cat's function takes `inputs`, not `in`)
        args = {k: list(v) if isinstance(v, tuple) else v for k, v in tensors.items()}
        out = fn(**args, **c.attrs)
    else:
        names = tuple(sorted(c.attrs))
        runner = _RUNNERS.get((c.op, names))
        if runner is None:
            runner = _RUNNERS[(c.op, names)] = OpRunner(c.opdef, names, CTX)
        operands = tuple(tensors.get(d.name) for d in c.opdef.operands)
        out = runner.run(operands, tuple(c.attrs[k] for k in names))
    return out if isinstance(out, tuple) else (out,)


def _used(c: Case, results: tuple) -> list[int]:
    """Indices of the results in the loss."""
    names = [r.name for r in c.opdef.results]
    if c.use is not None:
        return [names.index(u) for u in c.use]
    return [k for k, r in enumerate(results) if np.issubdtype(r.numpy().dtype, np.floating)]


def _weights(c: Case, results: tuple) -> dict[int, np.ndarray]:
    w_rng = np.random.default_rng(zlib.crc32(c.id.encode()))
    return {k: w_rng.normal(size=results[k].shape).astype(results[k].numpy().dtype)
            for k in _used(c, results)}


def _tensors(c: Case, grad: bool = False) -> dict[str, Any]:
    def one(name: str, a: np.ndarray) -> Any:
        return tdflow.tensor(a, requires_grad=grad and name in c.wrt)

    return {k: tuple(one(k, e) for e in v) if isinstance(v, list) else one(k, v)
            for k, v in c.inputs.items()}


def _leaves(c: Case) -> list[tuple[str, int | None]]:
    """(operand, index in a variadic) of every array input, in argument order."""
    out: list[tuple[str, int | None]] = []
    for k, v in c.inputs.items():
        out.extend([(k, j) for j in range(len(v))] if isinstance(v, list) else [(k, None)])
    return out


def _array(c: Case, leaf: tuple[str, int | None]) -> np.ndarray:
    name, j = leaf
    return c.inputs[name] if j is None else c.inputs[name][j]


def _eager(c: Case) -> tuple[float, dict]:
    """Eager loss and ``{leaf: gradient}`` of the differentiated inputs."""
    ts = _tensors(c, grad=True)
    results = _forward(c, ts)
    w = _weights(c, results)
    loss = None
    for k, wk in w.items():
        s = F.reduce_sum(F.mul(results[k], tdflow.tensor(wk)), axis=[])
        loss = s if loss is None else F.add(loss, s)
    loss.backward()
    grads = {}
    for leaf in _leaves(c):
        if leaf[0] in c.wrt:
            t = ts[leaf[0]] if leaf[1] is None else ts[leaf[0]][leaf[1]]
            grads[leaf] = None if t.grad is None else t.grad.numpy()
    return float(loss.numpy()), grads


def _numeric_loss(c: Case, w: dict[int, np.ndarray], inputs: dict[str, Any]) -> float:
    ts = {k: tuple(tdflow.tensor(e) for e in v) if isinstance(v, list) else tdflow.tensor(v)
          for k, v in inputs.items()}
    results = _forward(c, ts)
    return float(sum(np.sum(results[k].numpy().astype(np.float64) * wk.astype(np.float64))
                     for k, wk in w.items()))


def _finite_difference(c: Case, leaf: tuple[str, int | None]) -> np.ndarray:
    results = _forward(c, _tensors(c))
    w = _weights(c, results)
    base = _array(c, leaf)
    eps = EPS[base.dtype]
    num = np.zeros(base.shape, np.float64)
    for idx in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[idx] += eps
        down[idx] -= eps
        losses = []
        for x in (up, down):
            inputs = dict(c.inputs)
            if leaf[1] is None:
                inputs[leaf[0]] = x
            else:
                inputs[leaf[0]] = [x if j == leaf[1] else e for j, e in enumerate(c.inputs[leaf[0]])]
            losses.append(_numeric_loss(c, w, inputs))
        # the step actually taken (a float32 input rounds it)
        num[idx] = (losses[0] - losses[1]) / (float(up[idx]) - float(down[idx]))
    return num


def _mlir_type(shape: tuple, dtype: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtype}>"


def _dtype_of(a: np.ndarray) -> str:
    return tdflow.tensor(a).dtype


def _program(c: Case) -> tuple[str, list[str], list[np.ndarray]]:
    """The case as MLIR text: the op, then the loss; with the argument names and arrays."""
    results = _forward(c, _tensors(c))
    w = _weights(c, results)
    opdef = c.opdef
    args, names, arrays = [], [], []
    operand_text: list[str] = []
    segments: list[int] = []
    for d in opdef.operands:
        v = c.inputs.get(d.name)
        group = [] if v is None else (v if isinstance(v, list) else [v])
        segments.append(len(group))
        for j, a in enumerate(group):
            n = f"{d.name}{j}" if isinstance(v, list) else d.name
            names.append(n)
            arrays.append(a)
            args.append(f"%{n}: {_mlir_type(a.shape, _dtype_of(a))}")
            operand_text.append(f"%{n}")
    for k, wk in w.items():
        names.append(f"w{k}")
        arrays.append(wk)
        args.append(f"%w{k}: {_mlir_type(wk.shape, _dtype_of(wk))}")
    attrs = [f"{k} = {to_attr(opdef.attr(k).kind, v)}" for k, v in c.attrs.items()]
    if opdef.has_trait("AttrSizedOperandSegments"):
        attrs.append(f"operandSegmentSizes = array<i32: {', '.join(map(str, segments))}>")
    in_types = ", ".join(_mlir_type(a.shape, _dtype_of(a)) for a in arrays[:len(operand_text)])
    out_types = [_mlir_type(r.shape, r.dtype) for r in results]
    res = [f"%r{k}" for k in range(len(results))]
    attr_text = f" {{{', '.join(attrs)}}}" if attrs else ""
    lines = [f'  {", ".join(res)} = "tdflow.{c.op}"({", ".join(operand_text)}){attr_text} : '
             f'({in_types}) -> ({", ".join(out_types)})']
    loss = None
    for k in w:
        t, s = out_types[k], _mlir_type((), results[k].dtype)
        lines.append(f'  %m{k} = "tdflow.broadcast_mul"(%r{k}, %w{k}) : ({t}, {t}) -> {t}')
        lines.append(f'  %s{k} = "tdflow.reduce_sum"(%m{k}) {{axis = []}} : ({t}) -> {s}')
        if loss is None:
            loss = f"%s{k}"
        else:
            lines.append(f'  %l{k} = "tdflow.broadcast_add"({loss}, %s{k}) : ({s}, {s}) -> {s}')
            loss = f"%l{k}"
    loss_type = _mlir_type((), results[next(iter(w))].dtype)
    text = (f"func.func @f({', '.join(args)}) -> {loss_type} {{\n" + "\n".join(lines)
            + f"\n  return {loss} : {loss_type}\n}}\n")
    return text, names, arrays


def _params() -> list:
    return [pytest.param(c, id=c.id, marks=c.marks) for c in CASES]


# ---- the tests ---------------------------------------------------------------------------------

def test_every_differentiable_op_has_a_case():
    with_grad = {op.mnemonic for op in CTX.ops.values() if gradient_of(CTX, op) is not None}
    covered = {c.op for c in CASES}
    assert not with_grad - covered, (
        f"ops with a gradient and no case in tests/runtime/test_grad_ops.py: "
        f"{sorted(with_grad - covered)}")
    assert not covered - with_grad, f"cases for ops without a gradient: {covered - with_grad}"


def test_case_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_finite_difference_inputs_are_small():
    # two forward calls per element: at most 72 elements (a few rows for pooling windows that
    # overlap or do not divide) keep the whole file at a few seconds
    for c in CASES:
        for leaf in _leaves(c):
            if leaf[0] in c.wrt:
                assert _array(c, leaf).size <= 72, (c.id, leaf)


def _zero_if_none(c: Case, leaf: tuple[str, int | None], g: np.ndarray | None) -> np.ndarray:
    """A gradient that is identically zero comes back as ``None`` in eager mode."""
    a = _array(c, leaf)
    return np.zeros(a.shape, a.dtype) if g is None else g


@pytest.mark.parametrize("c", _params())
def test_gradient_matches_finite_differences(c: Case):
    _, eager = _eager(c)
    assert set(eager) == {leaf for leaf in _leaves(c) if leaf[0] in c.wrt}
    for leaf, g in eager.items():
        num = _finite_difference(c, leaf)
        if g is None:  # a symbolic zero (relu_grad's y): the op must not depend on the input
            np.testing.assert_array_equal(num, 0.0, err_msg=f"{c.id} {leaf}")
            continue
        assert g.shape == _array(c, leaf).shape and g.dtype == _array(c, leaf).dtype
        np.testing.assert_allclose(g, num, rtol=RTOL, atol=ATOL, err_msg=f"{c.id} {leaf}")


@pytest.mark.parametrize("c", _params())
def test_graph_mode_matches_eager_bit_for_bit(c: Case):
    eager_loss, eager = _eager(c)
    text, names, arrays = _program(c)
    wrt = [n for n, leaf in zip(names, _leaves(c)) if leaf[0] in c.wrt]
    loss, grads = tdflow.value_and_grad(text, wrt=wrt)(*arrays)
    assert float(loss) == eager_loss
    assert len(grads) == len(eager)
    for n, g, (leaf, ge) in zip(wrt, grads, eager.items()):
        ge = _zero_if_none(c, leaf, ge)
        assert g.dtype == ge.dtype and np.array_equal(g, ge), (
            f"{c.id}: graph-mode gradient of %{n} differs from eager's by up to "
            f"{np.max(np.abs(g - ge))}")


# ---- no gradient, and results the loss does not use -----------------------------------------

def _fwd(op: str, inputs: dict, outputs: dict, douts: dict, wants: set, attrs=None) -> Forward:
    opdef = CTX.lookup(f"tdflow.{op}")
    full = {a.name: a.default if a.has_default else None for a in opdef.attributes}
    full.update(attrs or {})
    return Forward(opdef, full, inputs, outputs, douts, frozenset(wants))


def test_integer_input_has_no_gradient():
    from tdflow.runtime.autograd import EagerEmitter

    logits = tdflow.tensor(normal(4, 5))
    label = tdflow.tensor(labels(4, 5))
    prob, out = F.sparse_softmax_cross_entropy(logits, label, depth=5)
    fwd = _fwd("sparse_softmax_cross_entropy", {"prediction": logits, "label": label},
               {"prob": prob, "out": out}, {"prob": None, "out": tdflow.tensor(np.ones(4))},
               {"label"}, {"depth": 5})
    with pytest.raises(GradError, match="no gradient for input 'label'"):
        input_gradients(CTX, EagerEmitter(CTX), fwd)
    with pytest.raises(TypeError, match="floating-point"):
        tdflow.tensor(labels(4, 5), requires_grad=True)
    prog = _program(CASES[[c.op for c in CASES].index("sparse_softmax_cross_entropy")])[0]
    with pytest.raises(GradError, match="not floating-point"):
        tdflow.value_and_grad(prog, wrt=["label"])


def test_nograd_op_asked_directly_is_an_error():
    from tdflow.runtime.autograd import EagerEmitter

    x = tdflow.tensor(normal(3))
    fwd = _fwd("ones_like", {"like": x}, {"out": x}, {"out": x}, {"like"})
    with pytest.raises(GradError, match="marked NoGrad"):
        input_gradients(CTX, EagerEmitter(CTX), fwd)


NOGRAD_PROGRAM = """func.func @f(%x: tensor<3xf64>) -> tensor<f64> {
  %0 = "tdflow.ones_like"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  %1 = "tdflow.exp"(%0) : (tensor<3xf64>) -> tensor<3xf64>
  %2 = "tdflow.broadcast_mul"(%1, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %3 = "tdflow.reduce_sum"(%2) {axis = []} : (tensor<3xf64>) -> tensor<f64>
  return %3 : tensor<f64>
}
"""


def test_nograd_op_result_is_a_constant_in_both_modes():
    """A NoGrad op's float result is a constant to autograd: only the direct path counts."""
    xs = normal(3)
    x = tdflow.tensor(xs, requires_grad=True)
    ones = F.ones_like(x)
    assert not ones.requires_grad and ones.grad_fn is None
    F.reduce_sum(F.mul(F.exp(ones), x), axis=[]).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, np.e))
    with pytest.raises(GradError, match="does not require a gradient"):
        F.reduce_sum(ones, axis=[]).backward()
    _, (g,) = tdflow.value_and_grad(NOGRAD_PROGRAM)(xs)
    assert np.array_equal(g, x.grad.numpy())


def test_unused_results_are_zero_gradients():
    """max_pool_2d's ``indice`` and dropout's ``mask`` are i1/i64 and never seeded; an unused
    float result (sparse CE's ``prob``) is a symbolic zero: its gradient emits no kernel."""
    pool = next(c for c in CASES if c.op == "max_pool_2d")
    x = tdflow.tensor(pool.inputs["x"], requires_grad=True)
    y, indice = F.max_pool_2d(x, **pool.attrs)
    assert y.requires_grad and not indice.requires_grad
    F.reduce_sum(y, axis=[]).backward()
    assert x.grad.numpy().sum() == y.numpy().size  # one per window, at its maximum
    d = tdflow.tensor(normal(3, 4), requires_grad=True)
    out, mask = F.dropout(d, rate=0.0)
    assert not mask.requires_grad
    F.reduce_sum(out, axis=[]).backward()
    np.testing.assert_array_equal(d.grad.numpy(), np.ones((3, 4)))
    with pytest.raises(GradError, match="does not require a gradient"):
        F.reduce_sum(F.cast(mask, dtype="f64"), axis=[]).backward()


def test_all_zero_output_gradients_run_nothing():
    from tdflow.runtime.autograd import EagerEmitter

    class Refuse(EagerEmitter):
        def op(self, name, operands, attrs):
            raise AssertionError(f"a zero gradient emitted {name}")

    p = tdflow.tensor(normal(4, 5))
    fwd = _fwd("sparse_softmax_cross_entropy", {"prediction": p, "label": None},
               {"prob": p, "out": None}, {"prob": None, "out": None}, {"prediction"},
               {"depth": 5})
    assert input_gradients(CTX, Refuse(CTX), fwd) == {"prediction": None}


def test_dropout_gradient_uses_the_forward_mask():
    """rate > 0: finite differences are out (each call draws a new mask from the seed's
    generator), so check the gradient against the mask the forward drew."""
    xs = normal(4, 6)
    x = tdflow.tensor(xs, requires_grad=True)
    w = normal(4, 6)
    out, mask = F.dropout(x, rate=0.5, seed=1234)
    keep = mask.numpy()
    assert 0 < keep.sum() < keep.size
    np.testing.assert_array_equal(out.numpy(), xs * keep * 2.0)
    F.reduce_sum(F.mul(out, tdflow.tensor(w)), axis=[]).backward()
    np.testing.assert_array_equal(x.grad.numpy(), w * keep * 2.0)
    _, again = F.dropout(tdflow.tensor(xs), rate=0.5, seed=1234)
    assert not np.array_equal(again.numpy(), keep)  # why the table uses rate 0 only
