"""Independent numpy references for the example programs (written without tdflow)."""

from __future__ import annotations

import numpy as np


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x.astype(np.float64) @ w1 + b1, 0)
    return softmax(h @ w2 + b2)


def conv2d_nchw(x, k, pad):
    """Direct convolution by explicit loops over the kernel window (float64)."""
    n, c, h, w = x.shape
    f, _, kh, kw = k.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, w + 2 * pad - kw + 1
    out = np.zeros((n, f, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + oh, j:j + ow]  # n c oh ow
            out += np.einsum("nchw,fc->nfhw", patch, k[:, :, i, j])
    return out


def max_pool_2x2(y):
    n, c, h, w = y.shape
    return y.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def cnn(x, k, kb, w, b):
    y = np.maximum(conv2d_nchw(x, k, 1) + kb[None, :, None, None], 0)
    p = max_pool_2x2(y)
    return softmax(p.reshape(p.shape[0], -1) @ w + b)
