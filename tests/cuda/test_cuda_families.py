"""Each CUDA generator lives in ``lowering/cuda/<family>.py`` of its op's family (issue 19:
one module name per family in every layer); shared code is in ``_``-prefixed modules or the
package's infrastructure (``code``, ``common``), which register no generators."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import tdflow.lowering.cuda as cuda_pkg
from tdflow.lowering.cuda import generated_ops, generator_for

# The families of the ops that have a generator module (formula ops get theirs from the
# formula, in elementwise.py's fallback); the op lists of docs/architecture's family table.
FAMILIES = {
    "elementwise": "add_n bias_add fused_elementwise",
    "reduce": "reduce_sum reduce_max reduce_min reduce_prod reduce_sum_like argmax top_k cumsum "
              "cumprod cumprod_grad",
    "softmax": "softmax log_softmax softmax_grad softmax_cross_entropy softmax_cross_entropy_grad "
               "sparse_softmax_cross_entropy sparse_softmax_cross_entropy_grad "
               "sparse_softmax_cross_entropy_with_grad",
    "norm": "layer_norm normalization group_norm",
    "linalg": "matmul matmul_bias batch_matmul",
    "conv": "conv2d conv_data_grad conv_filter_grad",
    "pool": "max_pool_2d max_pool_2d_grad avg_pool_2d avg_pool_2d_grad adaptive_avg_pool2d "
            "adaptive_avg_pool2d_grad",
    "shape": "reshape transpose cast cat expand expand_dims squeeze broadcast_like constant "
             "dense_constant ones_like arange",
    "slice": "slice slice_grad narrow narrow_grad pad tril triu fused_scale_tril",
    "index": "gather gather_nd embedding embedding_grad one_hot dim_gather dim_scatter_add "
             "dim_scatter_add_like dim_scatter_max dim_scatter_min dim_scatter_mul "
             "dim_scatter_update scatter_nd_like tensor_scatter_nd_add tensor_scatter_nd_update "
             "unsorted_segment_sum_like",
    "random": "dropout",
    "optim": "sgd_update adam_update",
}
FAMILY_OF = {f"tdflow.{op}": fam for fam, ops in FAMILIES.items() for op in ops.split()}
INFRASTRUCTURE = {"code", "common"}


def _module_of(op: str) -> str:
    return generator_for(op).__module__.rpartition(".")[2]


def test_every_generator_lives_in_its_family_module() -> None:
    wrong = {op: (_module_of(op), FAMILY_OF.get(op)) for op in generated_ops()
             if _module_of(op) != FAMILY_OF.get(op)}
    assert not wrong, f"generators outside their family's module (module, family): {wrong}"


def test_every_family_op_has_its_generator() -> None:
    assert sorted(FAMILY_OF) == generated_ops()


def test_package_modules_are_families_helpers_or_infrastructure() -> None:
    names = {m.name for m in pkgutil.iter_modules([str(Path(cuda_pkg.__file__).parent)])}
    generators = {_module_of(op) for op in generated_ops()}
    public = {n for n in names if not n.startswith("_")} - INFRASTRUCTURE
    assert public == generators, f"modules without generators: {public - generators}"
    assert public <= set(FAMILIES)
    assert not {n for n in names if n.startswith("_")} & generators
