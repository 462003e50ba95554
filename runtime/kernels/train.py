"""CPU kernels of the ops in tdflow/ops/train.td (issue 13)."""
