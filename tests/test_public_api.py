"""The public spellings users reach for first: ``import tdflow.functional as F`` and friends."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest


def test_functional_import_forms_are_one_module():
    import tdflow
    import tdflow.functional as F
    from tdflow.functional import concat, leaky_relu

    assert tdflow.functional is F
    assert F.leaky_relu is leaky_relu and F.concat is concat
    x = tdflow.tensor(np.array([-2.0, 3.0], np.float32))
    np.testing.assert_allclose(leaky_relu(x, alpha=0.5).numpy(), [-1.0, 3.0])


def test_functional_rejects_a_wrong_argument_with_its_name():
    import tdflow.functional as F

    with pytest.raises(TypeError, match='relu\\(\\): argument "x" must be Tensor, not int'):
        F.relu(3)


def test_import_tdflow_is_cheap_and_cuda_free():
    code = ("import sys, tdflow; tdflow.__version__; "
            "print(sorted(m for m in ('numpy', 'pycuda', 'lark', 'rich') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
