"""tdflow.lowering."""

from __future__ import annotations

from typing import Any

__all__ = ["sbp_pipeline"]


def __getattr__(name: str) -> Any:
    """``sbp_pipeline`` from :mod:`.sbp`, imported on first use: a CPU ``tdflow lower`` or
    ``run`` never needs the SBP modules.

    >>> from tdflow.lowering import sbp_pipeline
    >>> sbp_pipeline.__module__
    'tdflow.lowering.sbp'
    """
    if name == "sbp_pipeline":
        from .sbp import sbp_pipeline

        return sbp_pipeline
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
