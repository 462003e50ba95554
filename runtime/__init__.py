"""tdflow.runtime."""

from . import (
    library,  # noqa: F401 - gives every Context ``functional`` and its load check
    tensor_ops,  # noqa: F401 - installs Python's operators on Tensor
)
