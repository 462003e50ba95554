"""tdflow.runtime."""
