"""CPU kernels (linalg); filled in progressively."""
