"""CPU kernels of the ops in tdflow/ops/norm.td (issue 13)."""
