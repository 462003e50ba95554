"""ONNX's recurrent layers (RNN, GRU, LSTM) unrolled over their sequence into tdflow ops.

The input projection of every step is one matmul over the whole sequence; each step then adds
its recurrent matmul and applies the gate activations (ops with formulas, which the
fuse-elementwise pass merges). Forward, reverse and bidirectional, both layouts, peepholes,
``clip``, GRU's ``linear_before_reset`` and LSTM's ``input_forget`` follow ONNX's operator
definitions; the sequence length must be known when the model is compiled, and
``sequence_lens`` (if given) must equal it for every batch entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import Lowerer, Node, rule
from .common import reshape, transpose
from .linalg import matmul

# activation -> (default alpha, default beta); None: the activation takes no parameter
_ACTIVATIONS: dict[str, tuple[float | None, float | None]] = {
    "Sigmoid": (None, None), "Tanh": (None, None), "Relu": (None, None),
    "Softsign": (None, None), "Softplus": (None, None), "LeakyRelu": (0.01, None),
    "ThresholdedRelu": (1.0, None), "Elu": (1.0, None), "HardSigmoid": (0.2, 0.5),
    "Affine": (1.0, 0.0), "ScaledTanh": (1.0, 1.0),
}
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def _add(cx: Lowerer, a: Any, b: Any) -> Any:
    return cx.op("tdflow.broadcast_add", [a, b])


def _mul(cx: Lowerer, a: Any, b: Any) -> Any:
    return cx.op("tdflow.broadcast_mul", [a, b])


def _cols(cx: Lowerer, x: Any, k: int, width: int) -> Any:
    """Columns ``k*width .. (k+1)*width`` of the 2-D ``x`` (one gate's block)."""
    rows, cols = cx.shape_of(x)
    if width == cols:
        return x
    return cx.op("tdflow.slice", [x], {"start": [0, k * width], "stop": [rows, (k + 1) * width],
                                       "step": [1, 1]})


def _row(cx: Lowerer, x: Any, i: int) -> Any:
    """``x[i]`` of a stacked tensor, its leading dim dropped."""
    shape = list(cx.shape_of(x))
    if shape[0] != 1:
        start = [i] + [0] * (len(shape) - 1)
        x = cx.op("tdflow.slice", [x], {"start": start, "stop": [i + 1, *shape[1:]],
                                        "step": [1] * len(shape)})
    return reshape(cx, x, shape[1:])


class _Activation:
    """One gate activation of an RNN, with its ``alpha``/``beta``."""

    def __init__(self, cx: Lowerer, name: str, alpha: float | None, beta: float | None):
        if name not in _ACTIVATIONS:
            cx.unsupported(f"activation '{name}' (supported: {', '.join(_ACTIVATIONS)})")
        da, db = _ACTIVATIONS[name]
        self.cx, self.name = cx, name
        self.alpha = da if alpha is None else alpha
        self.beta = db if beta is None else beta

    def __call__(self, x: Any) -> Any:
        cx, n = self.cx, self.name
        s = lambda v: cx.scalar(v, x)  # noqa: E731
        if n in ("Sigmoid", "Tanh", "Relu"):
            return cx.op(f"tdflow.{n.lower()}", [x])
        if n == "Softsign":
            den = _add(cx, cx.op("tdflow.abs", [x]), s(1.0))
            return cx.op("tdflow.broadcast_div", [x, den])
        if n == "Softplus":
            return cx.op("tdflow.softplus", [x])
        if n == "LeakyRelu":
            return cx.op("tdflow.leaky_relu", [x], {"alpha": self.alpha})
        if n == "ThresholdedRelu":
            keep = cx.op("tdflow.broadcast_greater", [x, s(self.alpha)])
            return cx.op("tdflow.where", [keep, x, s(0.0)])
        if n == "Elu":
            neg = _mul(cx, cx.op("tdflow.broadcast_sub", [cx.op("tdflow.exp", [x]), s(1.0)]),
                       s(self.alpha))
            return cx.op("tdflow.where", [cx.op("tdflow.broadcast_greater", [x, s(0.0)]), x, neg])
        if n == "HardSigmoid":
            y = _add(cx, _mul(cx, x, s(self.alpha)), s(self.beta))
            y = cx.op("tdflow.broadcast_maximum", [y, s(0.0)])
            return cx.op("tdflow.broadcast_minimum", [y, s(1.0)])
        if n == "Affine":
            return _add(cx, _mul(cx, x, s(self.alpha)), s(self.beta))
        # ScaledTanh
        return _mul(cx, cx.op("tdflow.tanh", [_mul(cx, x, s(self.beta))]), s(self.alpha))


def _activations(cx: Lowerer, n: Node, num_dir: int) -> list[list[_Activation]]:
    """The activations of each direction."""
    per = len(_DEFAULT_ACTS[n.op_type])
    names = [a if isinstance(a, str) else a.decode() for a in (n.attrs.get("activations") or [])]
    names = names or _DEFAULT_ACTS[n.op_type] * num_dir
    if len(names) == per and num_dir == 2:
        names = names * 2
    elif len(names) == 2 * per and num_dir == 1:  # RNN's schema default: [Tanh, Tanh]
        names = names[:per]
    if len(names) != per * num_dir:
        cx.unsupported(f"{len(names)} activations; expected {per * num_dir}")
    alphas = list(n.attrs.get("activation_alpha") or [])
    betas = list(n.attrs.get("activation_beta") or [])
    aligned_a, aligned_b = len(alphas) == len(names), len(betas) == len(names)
    acts = []
    for i, name in enumerate(names):
        da, db = _ACTIVATIONS.get(name, (None, None))
        a = alphas[i] if aligned_a else (alphas.pop(0) if da is not None and alphas else None)
        b = betas[i] if aligned_b else (betas.pop(0) if db is not None and betas else None)
        acts.append(_Activation(cx, name, a, b))
    return [acts[d * per:(d + 1) * per] for d in range(num_dir)]


def _clip(cx: Lowerer, x: Any, clip: float | None) -> Any:
    if clip is None:
        return x
    x = cx.op("tdflow.broadcast_minimum", [x, cx.scalar(clip, x)])
    return cx.op("tdflow.broadcast_maximum", [x, cx.scalar(-clip, x)])


def _cell(cx: Lowerer, kind: str, xw: Any, h: Any, c: Any, r: Any, rb: Any, p: Any,
          acts: list[_Activation], hidden: int, clip: float | None, n: Node) -> tuple[Any, Any]:
    """One step: ``(h, c)`` from the step's input projection ``xw`` (input bias included)."""
    rec = matmul(cx, h, r, transpose_b=True)  # [B, G*H]
    if kind == "RNN":
        return acts[0](_clip(cx, _add(cx, _add(cx, xw, rec), rb), clip)), None
    if kind == "GRU":
        f, g = acts
        z = f(_clip(cx, _add(cx, _add(cx, _cols(cx, xw, 0, hidden), _cols(cx, rec, 0, hidden)),
                              _cols(cx, rb, 0, hidden)), clip))
        rr = f(_clip(cx, _add(cx, _add(cx, _cols(cx, xw, 1, hidden), _cols(cx, rec, 1, hidden)),
                               _cols(cx, rb, 1, hidden)), clip))
        if n.attrs.get("linear_before_reset"):
            inner = _mul(cx, rr, _add(cx, _cols(cx, rec, 2, hidden), _cols(cx, rb, 2, hidden)))
        else:
            inner = _add(cx, matmul(cx, _mul(cx, rr, h), _rows(cx, r, 2, hidden),
                                    transpose_b=True), _cols(cx, rb, 2, hidden))
        ht = g(_clip(cx, _add(cx, _cols(cx, xw, 2, hidden), inner), clip))
        one_minus_z = cx.op("tdflow.broadcast_sub", [cx.scalar(1.0, z), z])
        return _add(cx, _mul(cx, one_minus_z, ht), _mul(cx, z, h)), None
    f, g, hact = acts
    pre = _add(cx, _add(cx, xw, rec), rb)
    gate = lambda k: _cols(cx, pre, k, hidden)  # noqa: E731
    pi, po, pf = (None, None, None) if p is None else (_cols(cx, p, k, hidden) for k in range(3))
    i_in = gate(0) if pi is None else _add(cx, gate(0), _mul(cx, pi, c))
    i = f(_clip(cx, i_in, clip))
    if n.attrs.get("input_forget"):
        fg = cx.op("tdflow.broadcast_sub", [cx.scalar(1.0, i), i])
    else:
        f_in = gate(2) if pf is None else _add(cx, gate(2), _mul(cx, pf, c))
        fg = f(_clip(cx, f_in, clip))
    ct = g(_clip(cx, gate(3), clip))
    c = _add(cx, _mul(cx, fg, c), _mul(cx, i, ct))
    o_in = gate(1) if po is None else _add(cx, gate(1), _mul(cx, po, c))
    o = f(_clip(cx, o_in, clip))
    return _mul(cx, o, hact(c)), c


def _rows(cx: Lowerer, w: Any, k: int, width: int) -> Any:
    """Rows ``k*width .. (k+1)*width`` of the 2-D weight ``w`` (one gate's block)."""
    rows, cols = cx.shape_of(w)
    if rows == width:
        return w
    return cx.op("tdflow.slice", [w], {"start": [k * width, 0], "stop": [(k + 1) * width, cols],
                                       "step": [1, 1]})


@rule("RNN", "GRU", "LSTM")
def recurrent(cx: Lowerer, n: Node) -> list:
    kind = n.op_type
    gates = _GATES[kind]
    x, w, r = n.input(0), n.input(1), n.input(2)
    layout = int(n.attrs.get("layout") or 0)
    if layout == 1:
        x = transpose(cx, x, [1, 0, 2])
    seq, batch, _ = cx.shape_of(x)
    num_dir, gh, _ = cx.shape_of(w)
    hidden = gh // gates
    direction = n.attrs.get("direction") or "forward"
    direction = direction.decode() if isinstance(direction, bytes) else direction
    dirs = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(direction)
    if dirs is None or len(dirs) != num_dir:
        cx.unsupported(f"direction '{direction}' with {num_dir} weight directions")
    if n.has_input(4):
        lens = cx.need_const(n.input(4), "sequence_lens")
        if np.any(np.asarray(lens) != seq):
            cx.unsupported("sequence_lens shorter than the sequence (ragged batches)")
    clip = n.attrs.get("clip")
    acts = _activations(cx, n, num_dir)
    dtype_like = x
    zeros = cx.constant(np.zeros((batch, hidden), _np_dtype(cx, dtype_like)))
    h0s = [zeros] * num_dir
    c0s = [zeros] * num_dir
    if n.has_input(5):
        h0 = n.input(5)
        h0 = transpose(cx, h0, [1, 0, 2]) if layout == 1 else h0
        h0s = [_row(cx, h0, d) for d in range(num_dir)]
    if kind == "LSTM" and n.has_input(6):
        c0 = n.input(6)
        c0 = transpose(cx, c0, [1, 0, 2]) if layout == 1 else c0
        c0s = [_row(cx, c0, d) for d in range(num_dir)]
    peep = n.input(7) if kind == "LSTM" and n.has_input(7) else None

    flat_x = reshape(cx, x, [seq * batch, cx.shape_of(x)[2]])
    ys, hs, cs = [], [], []
    for d, backwards in enumerate(dirs):
        wd, rd = _row(cx, w, d), _row(cx, r, d)
        xw = matmul(cx, flat_x, wd, transpose_b=True)  # [S*B, G*H]
        rb = None
        if n.has_input(3):
            bd = reshape(cx, _row(cx, n.input(3), d), [1, 2 * gh])
            xw = _add(cx, xw, _cols(cx, bd, 0, gh))
            rb = _cols(cx, bd, 1, gh)
        else:
            rb = cx.constant(np.zeros((1, gh), _np_dtype(cx, dtype_like)))
        xw = reshape(cx, xw, [seq, batch * gh])
        pd = None if peep is None else reshape(cx, _row(cx, peep, d), [1, 3 * hidden])
        h, c = h0s[d], c0s[d]
        steps: list[Any] = [None] * seq
        for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
            xt = reshape(cx, _row(cx, xw, t) if seq > 1 else xw, [batch, gh])
            h, c = _cell(cx, kind, xt, h, c, rd, rb, pd, acts[d], hidden, clip, n)
            steps[t] = reshape(cx, h, [1, 1, batch, hidden])
        ys.append(steps[0] if seq == 1 else cx.op("tdflow.cat", [steps], {"axis": 0}))
        hs.append(reshape(cx, h, [1, batch, hidden]))
        if c is not None:
            cs.append(reshape(cx, c, [1, batch, hidden]))
    cat = lambda vs, axis: vs[0] if len(vs) == 1 else cx.op("tdflow.cat", [vs], {"axis": axis})  # noqa: E731
    y, yh = cat(ys, 1), cat(hs, 0)
    yc = cat(cs, 0) if cs else None
    if layout == 1:
        y = transpose(cx, y, [2, 0, 1, 3])
        yh = transpose(cx, yh, [1, 0, 2])
        yc = transpose(cx, yc, [1, 0, 2]) if yc is not None else None
    outs = [y, yh] + ([yc] if kind == "LSTM" else [])
    return outs[:max(n.num_outputs, 1)]


def _np_dtype(cx: Lowerer, v: Any) -> Any:
    from tdflow.dialect.types import DTYPES

    return DTYPES[cx.type_of(v).dtype]
