"""CPU kernels (pool); filled in progressively."""
