"""tdflow.lowering.passes."""
