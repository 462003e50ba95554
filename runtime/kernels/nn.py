"""CPU kernels (nn); filled in progressively."""
