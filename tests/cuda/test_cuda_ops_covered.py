"""Every op of the standard library runs on the GPU devices: each has a CUDA code generator
(its formula, or a generator module) and a kernel on ``cuda`` and ``cudasim`` that admits
exactly the dtypes its CPU kernel admits."""

from __future__ import annotations

from tdflow.dialect import standard_dialect
from tdflow.lowering.cuda import generator_for
from tdflow.runtime.kernels.registry import kernel_table


def test_every_standard_op_has_a_generator_and_gpu_kernels() -> None:
    missing = []
    for op in standard_dialect():
        cpu = kernel_table("cpu").candidates(op.name)
        if not cpu:
            continue  # nothing to run on any device (none today)
        if op.name.startswith("tdflow.boxing_"):
            continue  # collectives over the host communicator (tdflow.distributed): cpu only
        if generator_for(op.name, op) is None:
            missing.append(op.name)
            continue
        for device in ("cudasim", "cuda"):
            gpu = kernel_table(device).candidates(op.name)
            assert gpu, f"{op.name}: no {device} kernel"
            assert gpu[0].dtypes == cpu[0].dtypes, f"{op.name} on {device}: other dtypes"
    assert not missing, f"ops without a CUDA generator: {missing}"
