"""CPU kernels of the ops in tdflow/ops/math.td (issue 13)."""
