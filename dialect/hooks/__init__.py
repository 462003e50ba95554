"""tdflow.dialect.hooks."""
