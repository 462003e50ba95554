"""Eager mode: call ops one by one from Python, then compare with the compiled program.

    python examples/eager.py

The functional API has one function per op of ``ops.td`` (``matmul``, ``bias_add``, ``relu``,
``softmax``...), with the op's attributes as keyword arguments. Eager calls run the same
inference hooks and the same CPU kernels as ``tdflow.compile``, so the forward pass of
``examples/mlp.mlir`` written here gives the compiled program's numbers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import tdflow

F = tdflow.functional
tensor = tdflow.tensor

HERE = Path(__file__).resolve().parent


def mlp(x, w1, b1, w2, b2):
    """The forward pass of examples/mlp.mlir, one op at a time."""
    h = F.relu(F.bias_add(F.matmul(x, w1), b1, axis=1))
    return F.softmax(F.bias_add(F.matmul(h, w2), b2, axis=1))


def main() -> None:
    rng = np.random.default_rng(0)
    shapes = {"x": (64, 784), "w1": (784, 256), "b1": (256,), "w2": (256, 10), "b2": (10,)}
    arrays = {k: (rng.standard_normal(s) * 0.05).astype(np.float32) for k, s in shapes.items()}

    # Eager: tensors in, tensors out; every call is checked by the op's hooks.
    probs = mlp(*(tensor(a) for a in arrays.values()))
    print(f"eager:    {probs.shape} {probs.dtype}, row sums {probs.numpy().sum(axis=1)[:3]}")

    # The same computation, compiled from examples/mlp.mlir.
    compiled = tdflow.compile(HERE / "mlp.mlir")
    expected = compiled(**arrays)
    print(f"compiled: {expected.shape} {expected.dtype}, max |eager - compiled| = "
          f"{np.abs(probs.numpy() - expected).max():.2e}")

    # Mistakes are reported at the call, naming the argument or listing the signatures.
    for bad in (lambda: F.relu(3), lambda: F.matmul(probs, tensor(arrays["w1"]))):
        try:
            bad()
        except (TypeError, ValueError) as exc:
            print(f"error:    {type(exc).__name__}: {str(exc).splitlines()[0]}")


if __name__ == "__main__":
    main()
