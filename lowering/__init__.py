"""tdflow.lowering."""

from .sbp import sbp_pipeline

__all__ = ["sbp_pipeline"]
