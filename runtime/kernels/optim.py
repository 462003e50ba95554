"""CPU kernels (optim); filled in progressively."""
