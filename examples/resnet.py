"""A small ResNet for the 8x8 digits: one definition, run eagerly or built as an MLIR program.

    python examples/resnet.py --write-mlir     # (re)writes examples/resnet.mlir (batch 64)

The network, NCHW, for images ``[N, 1, 8, 8]``:

====================  ===========================================================  =========
stage                 ops                                                          output
====================  ===========================================================  =========
stem                  conv 3x3 1->16 -> batch norm -> relu                         16x8x8
block1 (identity)     conv 3x3 -> bn -> relu -> conv 3x3 -> bn, + x, relu          16x8x8
block2 (stride 2)     conv 3x3/2 -> bn -> relu -> conv 3x3 -> bn,                  32x4x4
                      + (conv 1x1/2 -> bn)(x), relu
block3 (identity)     as block1, 32 channels                                       32x4x4
head                  adaptive_avg_pool2d to 1x1 -> reshape -> linear 32->10       10
====================  ===========================================================  =========

Convolutions have no bias (the batch norm after each one has ``beta``). Parameters are a
dict of float32 numpy arrays (:func:`init_params`: He-initialised filters, ``gamma = 1``,
``beta = 0``, the linear layer as PyTorch's ``nn.Linear`` initialises it); the batch norms'
moving statistics are a second dict (:func:`init_stats`: mean 0, variance 1), updated in place
by every training-mode forward.

:func:`forward` is written once against an *op namespace*: ``tdflow.functional`` runs it
eagerly (autograd records it when the parameters require gradients), an op builder
(``standard_dialect().Builder()``) turns the same calls into IR (:func:`program`). The two
modes therefore run the same ops with the same attributes, which is what lets their
gradients agree bit for bit.

>>> p, s = init_params(0), init_stats()
>>> len(p), p["stem_conv"].shape, p["fc_w"].shape, len(s), s["block2_proj_bn_var"][:2]
(26, (16, 1, 3, 3), (10, 32), 16, array([1., 1.], dtype=float32))
>>> print(program(4).splitlines()[1][:60])
  %0 = "tdflow.conv2d"(%x, %stem_conv) {filters = 16 : si32,
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["BATCH", "BLOCKS", "MLIR_PATH", "N_CLASSES", "PARAMS", "STATS", "forward",
           "init_params", "init_stats", "loss", "main", "program"]

BATCH = 64  # digits.BATCH: the batch resnet.mlir is written for
N_CLASSES = 10
STEM = 16
# (name, in channels, out channels, stride): a 1x1-conv projection where the shape changes
BLOCKS = (("block1", 16, 16, 1), ("block2", 16, 32, 2), ("block3", 32, 32, 1))
FEATURES = BLOCKS[-1][2]
EPSILON = 1e-5
MOMENTUM = 0.9  # OneFlow's convention: moving = moving * 0.9 + batch * 0.1 (PyTorch's 0.1)
MLIR_PATH = Path(__file__).resolve().with_name("resnet.mlir")


def _needs_projection(c_in: int, c_out: int, stride: int) -> bool:
    return stride != 1 or c_in != c_out


def _layers() -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, int]]]:
    """The convolutions (name, filter shape) and batch norms (name, channels), in order."""
    convs = [("stem_conv", (STEM, 1, 3, 3))]
    norms = [("stem_bn", STEM)]
    for name, c_in, c_out, stride in BLOCKS:
        convs += [(f"{name}_conv1", (c_out, c_in, 3, 3)), (f"{name}_conv2", (c_out, c_out, 3, 3))]
        norms += [(f"{name}_bn1", c_out), (f"{name}_bn2", c_out)]
        if _needs_projection(c_in, c_out, stride):
            convs.append((f"{name}_proj", (c_out, c_in, 1, 1)))
            norms.append((f"{name}_proj_bn", c_out))
    return convs, norms


_CONVS, _NORMS = _layers()
# Parameter names in the order the programs take them (and value_and_grad returns gradients)
PARAMS = tuple([c for c, _ in _CONVS] + [f"{n}_{w}" for n, _ in _NORMS for w in ("gamma", "beta")]
               + ["fc_w", "fc_b"])
# Moving statistics, mean and variance of each batch norm
STATS = tuple(f"{n}_{s}" for n, _ in _NORMS for s in ("mean", "var"))


def init_params(seed: int) -> dict[str, np.ndarray]:
    """He-initialised (fan-in, for relu) filters, ``gamma = 1``, ``beta = 0``, and the
    linear layer uniform in ``+-1/sqrt(32)`` (PyTorch's default); float32, from ``seed``."""
    rng = np.random.default_rng(seed)
    p: dict[str, np.ndarray] = {}
    for name, shape in _CONVS:
        fan_in = shape[1] * shape[2] * shape[3]
        p[name] = (rng.standard_normal(shape) * np.sqrt(2 / fan_in)).astype(np.float32)
    for name, c in _NORMS:
        p[f"{name}_gamma"] = np.ones(c, np.float32)
        p[f"{name}_beta"] = np.zeros(c, np.float32)
    bound = 1 / np.sqrt(FEATURES)
    p["fc_w"] = rng.uniform(-bound, bound, (N_CLASSES, FEATURES)).astype(np.float32)
    p["fc_b"] = rng.uniform(-bound, bound, N_CLASSES).astype(np.float32)
    return {k: p[k] for k in PARAMS}


def init_stats() -> dict[str, np.ndarray]:
    """Moving mean 0 and moving variance 1 for every batch norm (PyTorch's start)."""
    return {k: (np.zeros if k.endswith("_mean") else np.ones)(c, np.float32)
            for name, c in _NORMS for k in (f"{name}_mean", f"{name}_var")}


# --- the model, over an op namespace --------------------------------------------------------

def conv(ops: Any, x: Any, w: Any, shape: tuple[int, ...], stride: int) -> Any:
    """``conv2d`` without bias; 3x3 filters are padded by 1 (8x8 stays 8x8 at stride 1)."""
    k = shape[2]
    return ops.conv2d(x, w, filters=shape[0], padding_before=[k // 2, k // 2],
                      data_format="channels_first", kernel_size=[k, k],
                      strides=[stride, stride], dilation_rate=[1, 1])


def batch_norm(ops: Any, x: Any, p: Mapping[str, Any], s: Mapping[str, Any], name: str,
               training: bool) -> Any:
    """``normalization`` over the channels; training mode updates ``s`` in place."""
    y, _, _ = ops.normalization(x, s[f"{name}_mean"], s[f"{name}_var"], p[f"{name}_gamma"],
                                p[f"{name}_beta"], axis=1, epsilon=EPSILON, momentum=MOMENTUM,
                                training=training)
    return y


def block(ops: Any, x: Any, p: Mapping[str, Any], s: Mapping[str, Any], name: str, c_in: int,
          c_out: int, stride: int, training: bool) -> Any:
    """A basic residual block: ``relu(bn(conv(relu(bn(conv(x))))) + shortcut(x))``."""
    h = conv(ops, x, p[f"{name}_conv1"], (c_out, c_in, 3, 3), stride)
    h = ops.relu(batch_norm(ops, h, p, s, f"{name}_bn1", training))
    h = conv(ops, h, p[f"{name}_conv2"], (c_out, c_out, 3, 3), 1)
    h = batch_norm(ops, h, p, s, f"{name}_bn2", training)
    if _needs_projection(c_in, c_out, stride):
        x = conv(ops, x, p[f"{name}_proj"], (c_out, c_in, 1, 1), stride)
        x = batch_norm(ops, x, p, s, f"{name}_proj_bn", training)
    return ops.relu(ops.broadcast_add(h, x))


def forward(ops: Any, p: Mapping[str, Any], s: Mapping[str, Any], x: Any, batch: int,
            training: bool) -> Any:
    """Logits ``[batch, 10]`` of images ``x`` ``[batch, 1, 8, 8]``.

    ``ops`` is ``tdflow.functional`` (``p``, ``s``, ``x`` tensors) or an op builder (IR
    values); ``training`` picks batch statistics (moving ones updated) or the moving ones.
    """
    h = conv(ops, x, p["stem_conv"], _CONVS[0][1], 1)
    h = ops.relu(batch_norm(ops, h, p, s, "stem_bn", training))
    for name, c_in, c_out, stride in BLOCKS:
        h = block(ops, h, p, s, name, c_in, c_out, stride, training)
    h = ops.adaptive_avg_pool2d(h, data_format="channels_first", output_size=[1, 1])
    h = ops.reshape(h, shape=[batch, FEATURES])
    # linear as OneFlow's functor builds it: x @ w.T + b
    return ops.bias_add(ops.matmul(h, p["fc_w"], transpose_b=True), p["fc_b"], axis=1)


def loss(ops: Any, logits: Any, labels: Any, batch: int) -> Any:
    """Mean cross-entropy, as ``F.cross_entropy`` computes it (a 0-d result)."""
    _, per_row = ops.sparse_softmax_cross_entropy(logits, labels, depth=N_CLASSES)
    total = ops.reduce_sum(per_row, axis=[0])
    return ops.scalar_mul(total, has_float_operand=True, float_operand=1.0 / batch)


# --- the program ----------------------------------------------------------------------------

def program(batch: int = BATCH, training: bool = True) -> str:
    """The model as MLIR text for ``batch`` images: with ``training``, ``@resnet_loss(x,
    labels, *PARAMS, *STATS)`` returns the mean loss (batch statistics; the moving ones are
    written in place); else ``@resnet(x, *PARAMS, *STATS)`` returns the logits (moving
    statistics)."""
    from tdflow.dialect import standard_dialect
    from tdflow.dialect.types import TensorType

    b = standard_dialect().Builder()
    params, stats = init_params(0), init_stats()  # for their shapes only
    names = ["x"] + (["labels"] if training else []) + list(PARAMS) + list(STATS)
    types = [TensorType((batch, 1, 8, 8), "f32")] + (
        [TensorType((batch,), "i64")] if training else []) + [
        TensorType(a.shape, "f32") for a in (*params.values(), *stats.values())]
    with b.func("resnet_loss" if training else "resnet", types, None, arg_names=names) as f:
        v = dict(zip(names, f.args))
        logits = forward(b, v, v, v["x"], batch, training)
        b.ret(loss(b, logits, v["labels"], batch) if training else logits)
    return str(b.module)


def header(batch: int = BATCH) -> str:
    return (f"// Generated by `python examples/resnet.py --write-mlir`; do not edit.\n"
            f"// The small ResNet of examples/resnet.py (stem, {len(BLOCKS)} basic blocks, "
            f"global average pool, linear) for a batch of {batch} 8x8 digits:\n"
            f"// the mean training loss (batch-norm statistics of the batch; the moving ones "
            f"are updated in place).\n")


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="resnet", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-mlir", action="store_true",
                    help=f"write the training program for batch {BATCH} to {MLIR_PATH.name}")
    args = ap.parse_args(argv)
    text = header() + program(BATCH)
    if args.write_mlir:
        MLIR_PATH.write_text(text)
        print(f"wrote {MLIR_PATH}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
