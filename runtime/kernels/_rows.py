"""The C row loops (:mod:`tdflow.lowering.rows_native`) as the CPU kernels ask for them: one
place that keeps small launches on numpy and installs the runtime's native builder first
(layer norm, softmax, the bound sums, ``fused_scale_tril``, segment sums). A module of its own:
``_util`` sits below ``elementwise``, which installs the builder."""

from __future__ import annotations

from typing import Any


def native_rows_for(size: int) -> Any:
    """The C row loops' ``run`` (:func:`tdflow.lowering.rows_native.native_rows`) for a launch
    of ``size`` elements, or ``None`` (then numpy): small launches keep numpy, so a small plan
    builds and loads no module; imported on first use, after the runtime's native builder.

    >>> native_rows_for(0) is None
    True
    """
    from tdflow.lowering import rows_native

    if size < rows_native.MIN_SIZE:
        return None
    from tdflow.runtime.kernels import elementwise  # noqa: F401 - installs the native builder

    return rows_native.native_rows()
