"""CUDA C code generation: one :class:`KernelCode` per op at static shapes and dtypes.

See :mod:`tdflow.lowering.cuda.code` for the contract generators follow, and ``docs/cuda.md``.
"""

from tdflow.lowering.cuda.code import (
    CudaCodegenError,
    KernelCode,
    LaunchSpec,
    TensorSpec,
    cuda_generator,
    generate,
    generated_ops,
    generator_for,
    translation_unit,
)

__all__ = ["CudaCodegenError", "KernelCode", "LaunchSpec", "TensorSpec", "cuda_generator",
           "generate", "generated_ops", "generator_for", "translation_unit"]
