"""Kernels and the gradient rule of grad_ops.td's ops that have no formula."""

import numpy as np
from tdflow.dialect.grad import grad_rule
from tdflow.dialect.hooks import infer_data_type, infer_logical_tensor_desc
from tdflow.runtime.kernels.registry import register_kernel


@register_kernel("glib.scaled_matmul", "cpu")
def scaled_matmul(attrs, inputs, outs):
    return [np.matmul(inputs[0], inputs[1]) * attrs["k"]]


@register_kernel("glib.cube", "cpu")
def cube(attrs, inputs, outs):
    x = inputs[0]
    return [x * x * x]


@grad_rule("glib.cube", saves=("x",))
def cube_grad(g, fwd):
    x, dy = fwd.inputs["x"], fwd.douts["y"]
    return {"x": g.op("tdflow.fused_elementwise", [[x, dy]], {"expr": "mul(mul(3.0, mul(in0, in0)), in1)"})[0]}


@infer_logical_tensor_desc("glib.scaled_matmul")
def scaled_matmul_shape(ctx):
    a, b = ctx.input_shape("a"), ctx.input_shape("b")
    ctx.set_output_shape("out", (a[0], b[1]))


@infer_data_type("glib.scaled_matmul")
def scaled_matmul_dtype(ctx):
    ctx.set_output_dtype("out", ctx.input_dtype("a"))
