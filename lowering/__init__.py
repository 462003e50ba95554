"""tdflow.lowering."""
