"""CPU kernels (reduce); filled in progressively."""
