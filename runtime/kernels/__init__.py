"""tdflow.runtime.kernels."""
