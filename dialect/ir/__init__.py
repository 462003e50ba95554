"""tdflow.dialect.ir."""
