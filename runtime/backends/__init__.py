"""tdflow.runtime.backends."""
