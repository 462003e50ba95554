"""A GPT-style decoder, eagerly (tdflow.functional, autograd) and as an MLIR program.

Token + position embedding, ``layers`` pre-LayerNorm blocks (causal multi-head
self-attention, then a GELU MLP of 4x the width, each added to the residual stream), a final
LayerNorm and a head tied to the token embedding (``logits = h @ wte^T``); the loss is the
mean cross-entropy of next-token prediction.

    python examples/gpt.py --write-mlir        # rewrite examples/gpt.mlir (EXAMPLE's config)
    tdflow verify examples/gpt.mlir

The model is written once, :func:`loss`, against an *op namespace*: ``tdflow.functional``
runs it eagerly on tensors (and records the tape), the dialect's ``Builder`` (whose methods
have the same names, operands and attributes) writes the same ops into a function. So the two
modes run the same ops with the same attributes in the same order, and
``tests/e2e/test_gpt.py`` checks that their gradients agree bit for bit.

>>> cfg = Config(batch=2, context=4, layers=1, width=8, heads=2, vocab=5)
>>> p = init_params(cfg, seed=0)
>>> list(p)[:4], p["wte"].shape, p["h0_mlp_w1"].shape
(['wte', 'wpe', 'h0_ln1_g', 'h0_ln1_b'], (5, 8), (8, 32))
>>> tokens = np.array([[0, 1, 2, 3], [4, 3, 2, 1]], np.int64)
>>> eager = float(Eager(p, cfg).grads(tokens, tokens)[0])
>>> graph = float(tdflow.value_and_grad(program(cfg), wrt=list(p))(tokens, tokens, *p.values())[0])
>>> eager == graph, round(eager, 2)      # near ln(5) = 1.61 at initialisation
(True, 1.58)
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import tdflow

__all__ = ["EXAMPLE", "Config", "Eager", "init_params", "logits", "loss", "param_shapes",
           "program", "sbp_program"]

F = tdflow.functional
MLIR_PATH = Path(__file__).resolve().with_name("gpt.mlir")
EPSILON = 1e-5  # LayerNorm's, as PyTorch's default
INIT_STD = 0.02  # GPT-2's initialisation of every weight matrix and embedding


@dataclass(frozen=True)
class Config:
    """The sizes of a model and of the batches it is trained on."""

    batch: int
    context: int
    layers: int
    width: int
    heads: int
    vocab: int

    def __post_init__(self) -> None:
        if self.width % self.heads:
            raise ValueError(f"width {self.width} is not a multiple of heads {self.heads}")

    @property
    def d_head(self) -> int:
        return self.width // self.heads


# examples/gpt.mlir is this configuration's training loss
EXAMPLE = Config(batch=2, context=8, layers=2, width=16, heads=2, vocab=32)


def param_shapes(cfg: Config) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Each parameter's name and shape, in the program's argument order."""
    c, v = cfg.width, cfg.vocab
    yield "wte", (v, c)
    yield "wpe", (cfg.context, c)
    for i in range(cfg.layers):
        for name, shape in (("ln1_g", (c,)), ("ln1_b", (c,)),
                            ("attn_wq", (c, c)), ("attn_bq", (c,)),
                            ("attn_wk", (c, c)), ("attn_bk", (c,)),
                            ("attn_wv", (c, c)), ("attn_bv", (c,)),
                            ("attn_wo", (c, c)), ("attn_bo", (c,)),
                            ("ln2_g", (c,)), ("ln2_b", (c,)),
                            ("mlp_w1", (c, 4 * c)), ("mlp_b1", (4 * c,)),
                            ("mlp_w2", (4 * c, c)), ("mlp_b2", (c,))):
            yield f"h{i}_{name}", shape
    yield "lnf_g", (c,)
    yield "lnf_b", (c,)


def init_params(cfg: Config, seed: int) -> dict[str, np.ndarray]:
    """GPT-2's initialisation, float32, from ``seed``: weights and embeddings N(0, 0.02),
    biases and LayerNorm shifts 0, LayerNorm scales 1."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg):
        kind = name.rsplit("_", 1)[-1]
        if kind.startswith("b"):
            params[name] = np.zeros(shape, np.float32)
        elif kind == "g":
            params[name] = np.ones(shape, np.float32)
        else:
            params[name] = (rng.standard_normal(shape) * INIT_STD).astype(np.float32)
    return params


# --- the model, on an op namespace (tdflow.functional or a Builder) ------------------------

def _dense(ops: Any, x: Any, w: Any, b: Any) -> Any:
    return ops.bias_add(ops.matmul(x, w), b, axis=1)


def _layer_norm(ops: Any, x: Any, g: Any, b: Any) -> Any:
    y, _mean, _inv_variance = ops.layer_norm(x, beta=b, gamma=g, center=True, scale=True,
                                             begin_norm_axis=1, begin_params_axis=1,
                                             epsilon=EPSILON)
    return y


def _attention(ops: Any, p: dict[str, Any], pre: str, x: Any, cfg: Config, batch: int,
               t: int) -> Any:
    """Causal multi-head self-attention of ``x`` ``[batch * t, width]``."""
    h, d = cfg.heads, cfg.d_head

    def heads(y: Any) -> Any:  # [batch * t, width] -> [batch, heads, t, d_head]
        return ops.transpose(ops.reshape(y, shape=[batch, t, h, d]), perm=[0, 2, 1, 3])

    q, k, v = (heads(_dense(ops, x, p[f"{pre}attn_w{n}"], p[f"{pre}attn_b{n}"])) for n in "qkv")
    scores = ops.batch_matmul(q, k, transpose_b=True)  # [batch, heads, t, t]
    # q k^T / sqrt(d_head), with -inf above the diagonal: a token sees itself and the past
    scores = ops.fused_scale_tril(scores, diagonal=0, floating_fill_value=-math.inf,
                                  is_floating_fill_value=True,
                                  floating_scale_value=1.0 / math.sqrt(d),
                                  is_floating_scale_value=True)
    y = ops.batch_matmul(ops.softmax(scores), v)  # [batch, heads, t, d_head]
    y = ops.reshape(ops.transpose(y, perm=[0, 2, 1, 3]), shape=[batch * t, cfg.width])
    return _dense(ops, y, p[f"{pre}attn_wo"], p[f"{pre}attn_bo"])


def block(ops: Any, p: dict[str, Any], i: int, x: Any, cfg: Config, batch: int, t: int) -> Any:
    """Transformer block ``i`` (pre-LayerNorm) on the residual stream ``[batch * t, width]``."""
    pre = f"h{i}_"
    a = _layer_norm(ops, x, p[pre + "ln1_g"], p[pre + "ln1_b"])
    x = ops.broadcast_add(x, _attention(ops, p, pre, a, cfg, batch, t))
    m = _layer_norm(ops, x, p[pre + "ln2_g"], p[pre + "ln2_b"])
    m = ops.gelu(_dense(ops, m, p[pre + "mlp_w1"], p[pre + "mlp_b1"]))
    return ops.broadcast_add(x, _dense(ops, m, p[pre + "mlp_w2"], p[pre + "mlp_b2"]))


def logits(ops: Any, p: dict[str, Any], tokens: Any, cfg: Config, batch: int, t: int) -> Any:
    """Next-token scores ``[batch * t, vocab]`` for ``tokens`` ``[batch, t]`` (``t <=
    cfg.context``)."""
    positions = ops.arange(dtype="i64", integer_start=0, integer_delta=1, integer_limit=t,
                           nd_sbp=[])
    x = ops.broadcast_add(ops.embedding(p["wte"], tokens), ops.embedding(p["wpe"], positions))
    x = ops.reshape(x, shape=[batch * t, cfg.width])
    for i in range(cfg.layers):
        x = block(ops, p, i, x, cfg, batch, t)
    x = _layer_norm(ops, x, p["lnf_g"], p["lnf_b"])
    return ops.matmul(x, p["wte"], transpose_b=True)  # the head is the token embedding


def loss(ops: Any, p: dict[str, Any], tokens: Any, targets: Any, cfg: Config, batch: int,
         t: int) -> Any:
    """Mean cross-entropy of ``targets`` ``[batch, t]`` (the next tokens), a 0-d value."""
    labels = ops.reshape(targets, shape=[batch * t])
    _, per_token = ops.sparse_softmax_cross_entropy(logits(ops, p, tokens, cfg, batch, t),
                                                    labels, depth=cfg.vocab)
    total = ops.reduce_sum(per_token, axis=[0])
    return ops.scalar_mul(total, has_float_operand=True, float_operand=1.0 / (batch * t))


# --- eager -------------------------------------------------------------------------------

class Eager:
    """The parameters as tensors that require gradients."""

    def __init__(self, params: dict[str, np.ndarray], cfg: Config) -> None:
        self.cfg = cfg
        self.p = {k: tdflow.tensor(v.copy(), requires_grad=True) for k, v in params.items()}

    def grads(self, tokens: np.ndarray, targets: np.ndarray) -> tuple[float, dict[str, Any]]:
        """The mean loss of a batch and each parameter's gradient (numpy arrays)."""
        for t in self.p.values():
            t.grad = None
        batch, t = tokens.shape
        value = loss(F, self.p, tdflow.tensor(tokens), tdflow.tensor(targets), self.cfg,
                     batch, t)
        value.backward()
        return float(value.numpy()), {k: v.grad.numpy() for k, v in self.p.items()}

    def logits(self, tokens: np.ndarray) -> np.ndarray:
        """Scores ``[batch, t, vocab]`` (no tape)."""
        batch, t = tokens.shape
        with tdflow.no_grad():
            out = logits(F, self.p, tdflow.tensor(tokens), self.cfg, batch, t)
        return out.numpy().reshape(batch, t, self.cfg.vocab)


# --- graph -------------------------------------------------------------------------------

def program(cfg: Config) -> str:
    """``@gpt(tokens, targets, *params) -> loss`` as MLIR text, for ``cfg``'s batch and
    context (the same ops as eager mode: :func:`loss` on the dialect's ``Builder``)."""
    from tdflow.dialect import standard_dialect
    from tdflow.dialect.types import TensorType

    b = standard_dialect().Builder()
    shapes = dict(param_shapes(cfg))
    idx = TensorType((cfg.batch, cfg.context), "i64")
    types = [idx, idx] + [TensorType(s, "f32") for s in shapes.values()]
    with b.func("gpt", types, None, arg_names=["tokens", "targets", *shapes]) as f:
        tokens, targets, *params = f.args
        p = dict(zip(shapes, params))
        b.ret(loss(b, p, tokens, targets, cfg, cfg.batch, cfg.context))
    return str(b.module)


def sbp_program(cfg: Config, hierarchy: tuple[int, int], dtype: str = "f32") -> str:
    """:func:`program` for ``hierarchy = (dp, tp)`` ranks (``dp * tp`` in all) in OneFlow's
    SBP: the batch split over the data-parallel mesh axis (``tokens``, ``targets``:
    ``[S(0), B]``), every MLP tensor-parallel over the other (Megatron: ``mlp_w1`` and
    ``mlp_b1`` column-split ``[B, S(1)]``/``[B, S(0)]``, ``mlp_w2`` row-split ``[B, S(0)]``,
    so the second matmul gives a partial sum that ``infer-sbp`` reduces), the rest
    broadcast; ``dtype`` ``"f64"`` for a float64 program. ``infer-sbp`` derives everything
    else, the backward pass included.

    Each ``reshape`` is pinned (OneFlow's ``parallel`` attribute) to keep the batch split:
    its ``get_sbp`` hook offers no split when a split axis is merged with the next ones
    (``[batch, t] -> [batch * t]``), which is right only when ``dp`` divides the batch
    (checked here).

    >>> text = sbp_program(Config(batch=2, context=4, layers=1, width=8, heads=2, vocab=5), (2, 1))
    >>> "hierarchy = [2, 1]" in text, text.count("#sbp.S<1>")
    (True, 1)
    """
    from tdflow.dialect.ir.attrs import ArrayAttr, IntegerAttr, OpaqueAttr
    from tdflow.dialect.ir.parser import parse_module

    dp, tp = hierarchy
    if cfg.batch % dp:
        raise ValueError(f"batch {cfg.batch} does not split evenly over {dp} data-parallel ranks")

    def nd(*sbp: str) -> ArrayAttr:
        return ArrayAttr(tuple(OpaqueAttr(f"#sbp.{s}") for s in sbp))

    megatron = {"mlp_w1": ("B", "S<1>"), "mlp_b1": ("B", "S<0>"), "mlp_w2": ("B", "S<0>")}
    text = program(cfg)
    module = parse_module(text if dtype == "f32" else text.replace("f32", dtype))
    func = module.funcs[0]
    func.arg_attrs = [{"sbp": nd("S<0>", "B") if a.name in ("tokens", "targets")
                       else nd(*megatron.get(a.name.split("_", 1)[-1], ("B", "B")))}
                      for a in func.args]
    func.attributes["hierarchy"] = ArrayAttr((IntegerAttr(dp), IntegerAttr(tp)))
    keep = "[#sbp.S<0>, #sbp.B]"
    for op in func.body:
        if op.name == "tdflow.reshape":
            op.attributes["parallel"] = OpaqueAttr(f"#sbp.parallel<[{keep}] -> [{keep}]>")
    return str(module)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="gpt", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-mlir", action="store_true",
                    help=f"write {MLIR_PATH.name} ({EXAMPLE}); else print the program")
    args = ap.parse_args(argv)
    text = program(EXAMPLE)
    if args.write_mlir:
        MLIR_PATH.write_text(text)
        print(f"wrote {MLIR_PATH} ({len(text.splitlines())} lines)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
