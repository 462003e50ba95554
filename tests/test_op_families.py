"""Each standard op has one home: its family.

The family of an op is the stem of the ``.td`` file that defines it
(``dialect/include/tdflow/ops/<family>.td``); its hooks live in ``dialect/hooks/<family>.py`` (or,
when several families share one, in a ``_`` module the family registers it from), its
CPU kernels in ``runtime/kernels/<family>.py`` and its CUDA generator in
``lowering/cuda/<family>.py``. Ops whose kernels and generators are derived from their
``formula`` have none written by hand (``runtime/kernels/formula.py`` derives them). A new op
therefore has an obvious place in every layer, and this test says where a misplaced one belongs.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest
from tdflow.dialect.context import standard_context
from tdflow.dialect.hooks.registry import HOOKS
from tdflow.lowering.cuda.code import generated_ops, generator_for
from tdflow.runtime.kernels.registry import kernel_table

ROOT = Path(__file__).resolve().parents[1]
FAMILY_DIR = ROOT / "dialect" / "include" / "tdflow" / "ops"
# Modules of a layer that are its machinery, not a family's ops.
INFRASTRUCTURE = {
    "hooks": {"registry", "context", "standard"},
    "kernels": {"registry", "device", "formula"},
    "cuda": {"code", "common"},
}
# The CPU kernels of the boxing ops need the communicator, so they live with it.
KERNEL_HOME = {"boxing": "tdflow.distributed.boxing_kernels"}

_CTX = standard_context()
OPS = sorted(_CTX.ops)


def family_of(op: str) -> str:
    loc = _CTX.ops[op].location
    path = Path(str(getattr(loc, "file", loc)).split(":")[0])
    assert path.parent.resolve() == FAMILY_DIR.resolve(), (
        f"{op} is defined in {path}, not in a family file dialect/include/tdflow/ops/<family>.td")
    return path.stem


FAMILIES = sorted({family_of(op) for op in OPS})


def test_every_standard_op_is_defined_in_a_family_file():
    assert len(OPS) >= 150
    assert {"elementwise", "math", "reduce", "softmax", "norm", "linalg", "conv", "pool", "shape",
            "slice", "index", "random", "optim", "boxing"} <= set(FAMILIES)


@pytest.mark.parametrize("op", OPS)
def test_hooks_kernels_and_generator_live_in_the_op_s_family(op):
    family = family_of(op)
    wrong = []
    for kind, fn in HOOKS.for_op(op).items():
        # a hook several families share lives in a ``_`` module; the family registers it
        if fn.__module__ != f"tdflow.dialect.hooks.{family}" \
                and not fn.__module__.startswith("tdflow.dialect.hooks._"):
            wrong.append(f"hook {kind} {fn.__qualname__} is in {fn.__module__}, "
                         f"expected tdflow.dialect.hooks.{family}")
    home = KERNEL_HOME.get(family, f"tdflow.runtime.kernels.{family}")
    for k in kernel_table("cpu").candidates(op):
        module = k.fn.__module__
        if module not in (home, "tdflow.runtime.kernels.formula"):
            wrong.append(f"CPU kernel {k.name} is in {module}, expected {home}")
    if op in generated_ops():
        gen = generator_for(op)
        if gen.__module__ != f"tdflow.lowering.cuda.{family}":
            wrong.append(f"CUDA generator of {op} is in {gen.__module__}, "
                         f"expected tdflow.lowering.cuda.{family}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer,package", [("hooks", "tdflow.dialect.hooks"),
                                           ("kernels", "tdflow.runtime.kernels"),
                                           ("cuda", "tdflow.lowering.cuda")])
def test_every_public_module_of_a_layer_is_a_family(layer, package):
    """A module in a layer is a family's, a ``_`` helper shared by families, or the layer's
    machinery: nothing named after history."""
    import importlib

    pkg = importlib.import_module(package)
    names = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    stray = sorted(n for n in names
                   if not n.startswith("_") and n not in FAMILIES and n not in INFRASTRUCTURE[layer])
    assert not stray, f"{package}: modules that are no family's: {stray}"
