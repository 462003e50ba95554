"""The lowering passes, one per module, registered here by their kebab-case name.

Each entry maps a pass name to ``(module, class)``; the module is imported only when a pipeline
names the pass, so listing passes (for errors and ``--help``) stays cheap.

>>> sorted(PASSES)[:3]
['apply-patterns', 'autodiff', 'canonicalize']
"""

from __future__ import annotations

PASSES: dict[str, tuple[str, str]] = {
    "autodiff": ("tdflow.lowering.passes.autodiff", "AutodiffPass"),
    "infer-shapes": ("tdflow.lowering.passes.infer_shapes", "InferShapesPass"),
    "canonicalize": ("tdflow.lowering.passes.canonicalize", "CanonicalizePass"),
    "fuse-elementwise": ("tdflow.lowering.passes.fuse_elementwise", "FuseElementwisePass"),
    "select-kernels": ("tdflow.lowering.passes.select_kernels", "SelectKernelsPass"),
    "plan-memory": ("tdflow.lowering.passes.plan_memory", "PlanMemoryPass"),
    "apply-patterns": ("tdflow.lowering.passes.apply_patterns", "ApplyPatternsPass"),
    "infer-sbp": ("tdflow.lowering.passes.infer_sbp", "InferSbpPass"),
    "physicalize": ("tdflow.lowering.passes.physicalize", "PhysicalizePass"),
}
