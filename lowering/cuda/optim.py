"""CUDA kernels of the optimizer steps (``sgd_update``, ``adam_update``, in place).

The steps repeat the numpy kernels' arithmetic operation for operation: every attribute and
runtime scalar (a ``learning_rate`` tensor, ``scale_by_tensor``, the bias corrections) is
combined in double precision, as Python floats are, then rounded once to the compute type
(f32 for half models); each multiply, add, divide and square root rounds separately
(``__fmul_rn`` and friends: no fused multiply-add and exact division and sqrt even under
``--use_fast_math``), so a GPU step equals the CPU's bit for bit in f32 and f64. ``skip_if``
is read on the device: a non-zero value leaves every buffer untouched. The float attributes
(learning rate and its scale, ``scale``, ``l1``, ``l2``, ``weight_decay``, the betas, epsilon,
the bias corrections) are ``double`` kernel arguments (:class:`Scalars`), so a schedule that
changes the learning rate every step compiles the step once.

Optional operands: ``ins`` holds only the present ones, so which they are comes from
``operandSegmentSizes`` (a compiled program's op carries it) or, without it, from the count
when that is unambiguous (``model, model_diff`` [``, m, v``] alone).

>>> from tdflow.lowering.cuda.code import TensorSpec, with_defaults
>>> f = TensorSpec((8,), "f32")
>>> code = sgd_update([f, f], [], with_defaults("tdflow.sgd_update", {"learning_rate_val": 0.5}))
>>> code.launches[0].args, code.scalars
(('in0', 'in1', 's0', 's1', 's2'), (('f64', 0.5), ('f64', 1.0), ('f64', 1.0)))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._exact import EXACT, wide
from ._layout import CONVERT_HELPERS, convert, empty_code, index_type, literal, loop
from .code import CudaCodegenError, KernelCode, LaunchSpec, TensorSpec, cuda_generator
from .common import ctype, launch_1d, load, store

_SGD = ("model", "model_diff", "model_copy", "learning_rate", "scale_by_tensor", "skip_if")


_ADAM = ("model", "model_diff", "model_copy", "learning_rate", "scale_by_tensor", "skip_if",
         "bias_correction1", "bias_correction2", "m", "v", "max_v")


_OPTIONAL = {"model_copy", "learning_rate", "scale_by_tensor", "skip_if", "bias_correction1",
             "bias_correction2", "max_v"}


def present_operands(op: str, names: Sequence[str], ins: Sequence[TensorSpec],
                     attrs: Mapping[str, Any]) -> dict[str, int]:
    """``{operand name: index in ins}`` of the present operands.

    >>> f = TensorSpec((4,), "f32")
    >>> present_operands("sgd", _SGD, [f, f, f], {"operandSegmentSizes": [1, 1, 0, 1, 0, 0]})
    {'model': 0, 'model_diff': 1, 'learning_rate': 2}
    """
    seg = attrs.get("operandSegmentSizes")
    if seg is not None and len(seg) == len(names) and sum(int(s) for s in seg) == len(ins):
        present = [n for n, s in zip(names, seg) if int(s)]
    else:
        required = [n for n in names if n not in _OPTIONAL]
        if len(ins) != len(required):
            raise CudaCodegenError(
                f"{op}: {len(ins)} operands without operandSegmentSizes; which optional "
                f"operands are present cannot be told (pass operandSegmentSizes)")
        present = required
    return {n: k for k, n in enumerate(present)}


class Scalars:
    """The step's attribute values as kernel arguments: ``take(v)`` names a ``double``
    parameter ``s<k>`` holding ``v`` (the exact Python float the numpy kernel uses), so a new
    learning rate, momentum or epsilon reuses the compiled kernel. Whether a term exists at all
    (``l1``, ``l2``, ``weight_decay`` non-zero; ``amsgrad``; ``do_bias_correction``) is the
    code's shape and stays baked: a zero term is skipped, not multiplied by zero (0 * NaN).

    >>> sc = Scalars()
    >>> sc.take(0.5), sc.take(1e-8), sc.params(), sc.values
    ('s0', 's1', ['const double s0', 'const double s1'], (('f64', 0.5), ('f64', 1e-08)))
    """

    def __init__(self) -> None:
        self._values: list[tuple[str, float]] = []

    def take(self, v: float) -> str:
        self._values.append(("f64", float(v)))
        return f"s{len(self._values) - 1}"

    def params(self) -> list[str]:
        return [f"const double s{k}" for k in range(len(self._values))]

    def args(self) -> list[str]:
        return [f"s{k}" for k in range(len(self._values))]

    @property
    def values(self) -> tuple[tuple[str, float], ...]:
        return tuple(self._values)


def D(v: float) -> str:  # noqa: N802  (short: the step's formulas read as math)
    """A bit-exact C double literal."""
    return literal(v, "f64")


def _scalar(name: str, spec: TensorSpec | None, fallback: float, sc: Scalars) -> str:
    """C double of a 1-element operand's first value, else the attribute's value (a kernel
    argument)."""
    if spec is None:
        return sc.take(fallback)
    return f"((double){load(spec.dtype, f'{name}[0]')})"


def _params(names: dict[str, int], ins: Sequence[TensorSpec], mutable: set[str]
            ) -> tuple[list[str], list[str]]:
    params, args = [], []
    for n, k in sorted(names.items(), key=lambda kv: kv[1]):
        t = ctype(ins[k].dtype)
        params.append(f"{t}* {n}" if n in mutable else f"const {t}* __restrict__ {n}")
        args.append(f"in{k}")
    return params, args


def _check_like(op: str, names: dict[str, int], ins: Sequence[TensorSpec], which: Sequence[str]
                ) -> TensorSpec:
    model = ins[names["model"]]
    for n in which:
        if n in names and ins[names[n]].shape != model.shape:
            raise CudaCodegenError(f"{op}: '{n}' has shape {ins[names[n]].shape}, 'model' "
                                   f"{model.shape}")
    return model


@cuda_generator("tdflow.sgd_update")
def sgd_update(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
               attrs: Mapping[str, Any]) -> KernelCode:
    """In place: ``model -= lr * (scale * diff + l1 * sign(model) + (l2 + wd) * model)``."""
    op = "tdflow.sgd_update"
    names = present_operands(op, _SGD, ins, attrs)
    model = _check_like(op, names, ins, ("model_diff", "model_copy"))
    if model.numel == 0:
        return empty_code(op)
    spec = {n: ins[k] for n, k in names.items()}
    dt, w = model.dtype, wide(model.dtype)
    l1, l2, wd = (float(attrs[k]) for k in ("l1", "l2", "weight_decay"))
    sv = Scalars()
    lr = _scalar("learning_rate", spec.get("learning_rate"),
                 float(attrs["learning_rate_val"]), sv)
    lr_scale = sv.take(float(attrs["learning_rate_scale"]))
    lines = ["  if (" + _scalar("skip_if", spec["skip_if"], 0.0, sv) + " != 0.0) return;"
             if "skip_if" in spec else "",
             f"  const {w} lr = ({w})({lr} * {lr_scale});",
             f"  const {w} sc = ({w})({sv.take(float(attrs['scale']))}"
             + (f" * {_scalar('scale_by_tensor', spec['scale_by_tensor'], 1.0, sv)}"
                if "scale_by_tensor" in spec else "") + ");",
             f"  {loop('i', model.numel, index_type(model))}",
             f"    const {w} m = {load(dt, 'model[i]')};",
             f"    {w} g = mul(({w}){load(spec['model_diff'].dtype, 'model_diff[i]')}, sc);"]
    if l1:
        lines.append(f"    g = add(g, mul(({w}){sv.take(l1)}, sign_of(m)));")
    if l2 or wd:
        lines.append(f"    g = add(g, mul(({w}){sv.take(l2 + wd)}, m));")
    lines.append(f"    const {w} nm = sub(m, mul(g, lr));")
    lines.append(f"    model[i] = {store(dt, 'nm')};")
    if "model_copy" in spec:
        lines.append(f"    model_copy[i] = {convert(dt, spec['model_copy'].dtype, 'model[i]')};")
    lines += ["  }", "}"]
    params, args = _params(names, ins, {"model", "model_copy"})
    params, args = params + sv.params(), args + sv.args()
    src = (CONVERT_HELPERS + EXACT + f'extern "C" __global__ void sgd_update({", ".join(params)}) {{\n'
           + "\n".join(x for x in lines if x) + "\n")
    grid, block = launch_1d(model.numel)
    return KernelCode(op, src, (LaunchSpec("sgd_update", grid, block, args),),
                      scalars=sv.values)


@cuda_generator("tdflow.adam_update")
def adam_update(ins: Sequence[TensorSpec], outs: Sequence[TensorSpec],
                attrs: Mapping[str, Any]) -> KernelCode:
    """In place, OneFlow's AdamUpdateFunctor (see the op's description and the numpy kernel)."""
    op = "tdflow.adam_update"
    names = present_operands(op, _ADAM, ins, attrs)
    model = _check_like(op, names, ins, ("model_diff", "model_copy", "m", "v", "max_v"))
    amsgrad = bool(attrs["amsgrad"])
    if amsgrad and "max_v" not in names:
        raise CudaCodegenError("adam_update: amsgrad = true needs the 'max_v' operand")
    if model.numel == 0:
        return empty_code(op)
    spec: dict[str, TensorSpec | None] = {n: ins[k] for n, k in names.items()}
    dt, w = model.dtype, wide(model.dtype)
    f = {k: float(attrs[k]) for k in (
        "learning_rate_val", "learning_rate_scale", "bias_correction1_val", "bias_correction2_val",
        "scale", "l1", "l2", "beta1", "beta2", "epsilon", "weight_decay")}
    sv = Scalars()
    if attrs["do_bias_correction"]:
        bc1 = _scalar("bias_correction1", spec.get("bias_correction1"),
                      f["bias_correction1_val"], sv)
        bc2 = _scalar("bias_correction2", spec.get("bias_correction2"),
                      f["bias_correction2_val"], sv)
    else:
        bc1 = bc2 = D(1.0)
    lr = (f"({_scalar('learning_rate', spec.get('learning_rate'), f['learning_rate_val'], sv)}"
          f" * {sv.take(f['learning_rate_scale'])})")
    scale = sv.take(f["scale"]) + (
        f" * {_scalar('scale_by_tensor', spec['scale_by_tensor'], 1.0, sv)}"
        if "scale_by_tensor" in spec else "")
    lines = [f"  if ({_scalar('skip_if', spec['skip_if'], 0.0, sv)} != 0.0) return;"
             if "skip_if" in spec else "",
             f"  const double lr = {lr}, bc1 = {bc1}, bc2 = {bc2};",
             f"  const {w} sc = ({w})({scale}), step_lr = ({w})(lr / bc1);",
             f"  const {w} root_bc2 = ({w})sqrt(bc2), "
             f"lr_wd = ({w})(lr * {sv.take(f['weight_decay'])});",
             f"  const {w} b1 = ({w}){sv.take(f['beta1'])}, c1 = ({w}){sv.take(1.0 - f['beta1'])};",
             f"  const {w} b2 = ({w}){sv.take(f['beta2'])}, c2 = ({w}){sv.take(1.0 - f['beta2'])};",
             f"  const {w} eps = ({w}){sv.take(f['epsilon'])};",
             f"  {loop('i', model.numel, index_type(model))}",
             f"    const {w} x = {load(dt, 'model[i]')};",
             f"    {w} g = mul(({w}){load(spec['model_diff'].dtype, 'model_diff[i]')}, sc);"]
    if f["l1"]:
        lines.append(f"    g = add(g, mul(({w}){sv.take(f['l1'])}, sign_of(x)));")
    if f["l2"]:
        lines.append(f"    g = add(g, mul(({w}){sv.take(f['l2'])}, x));")
    mt, vt = spec["m"].dtype, spec["v"].dtype
    lines += [f"    const {w} nm = add(mul(b1, ({w}){load(mt, 'm[i]')}), mul(c1, g));",
              f"    {w} nv = add(mul(b2, ({w}){load(vt, 'v[i]')}), mul(mul(c2, g), g));",
              f"    m[i] = {store(mt, 'nm')};", f"    v[i] = {store(vt, 'nv')};"]
    if amsgrad:
        xt = spec["max_v"].dtype
        lines += [f"    nv = nan_max(({w}){load(xt, 'max_v[i]')}, nv);",
                  f"    max_v[i] = {store(xt, 'nv')};"]
    lines.append(f"    {w} step = mul(step_lr, div(nm, add(div(root(nv), root_bc2), eps)));")
    if f["weight_decay"]:
        lines.append("    step = add(step, mul(lr_wd, x));")
    lines.append(f"    model[i] = {store(dt, 'sub(x, step)')};")
    if "model_copy" in spec:
        lines.append(f"    model_copy[i] = {convert(dt, spec['model_copy'].dtype, 'model[i]')};")
    lines += ["  }", "}"]
    params, args = _params(names, ins, {"model", "model_copy", "m", "v", "max_v"})
    params, args = params + sv.params(), args + sv.args()
    src = (CONVERT_HELPERS + EXACT + f'extern "C" __global__ void adam_update({", ".join(params)}) {{\n'
           + "\n".join(x for x in lines if x) + "\n")
    grid, block = launch_1d(model.numel)
    return KernelCode(op, src, (LaunchSpec("adam_update", grid, block, args),),
                      scalars=sv.values)
