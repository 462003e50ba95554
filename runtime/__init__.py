"""tdflow.runtime."""

from . import tensor_ops  # noqa: F401 - installs Python's operators on Tensor
