"""CPU kernels (conv); filled in progressively."""
