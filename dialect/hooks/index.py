"""Hooks of the ops in tdflow/ops/index.td (issue 13)."""
