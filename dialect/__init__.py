"""tdflow.dialect."""
