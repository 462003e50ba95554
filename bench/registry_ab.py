"""CPU times of the paths the per-context registry (issue 19, item 5) touches, for an A/B of two
trees: run it with each tree's tdflow installed (``pip install -e TREE``) and TREE as argument.

    python bench/registry_ab.py .

Prints one JSON line: compile of ``examples/mlp.mlir`` (first call, then the mean of five more),
an eager ``relu`` on 16 float32 elements (the fast path), and eager calls each with a new shape
(the slow path: type inference and kernel selection through the context's kernel table).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
from tdflow.dialect.context import standard_context

import tdflow


def main(tree: str) -> dict[str, float]:
    res = {}
    with open(os.path.join(tree, "examples/mlp.mlir")) as fh:
        src = fh.read()
    t = time.process_time()
    tdflow.compile(src)
    res["compile mlp.mlir, first (ms)"] = (time.process_time() - t) * 1e3
    t = time.process_time()
    for _ in range(5):
        tdflow.compile(src)
    res["compile mlp.mlir, again (ms)"] = (time.process_time() - t) / 5 * 1e3
    F = standard_context().functional
    x = tdflow.tensor(np.ones(16, np.float32))
    for _ in range(200):
        F.relu(x)
    t = time.process_time()
    for _ in range(20000):
        F.relu(x)
    res["eager relu 16 f32 (us)"] = (time.process_time() - t) / 20000 * 1e6
    t = time.process_time()
    for i in range(300):  # the slow path: a new shape each call
        F.relu(tdflow.tensor(np.ones(i + 1, np.float32)))
    res["eager relu, new shape (us)"] = (time.process_time() - t) / 300 * 1e6
    return res


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else ".")))
