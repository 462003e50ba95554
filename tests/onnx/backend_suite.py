"""ONNX's own backend test suite (``onnx.backend.test``) set up for tdflow, shared by the pytest
module that runs it and ``tools/onnx_filters.py`` that rewrites its filter file.

``backend_filters.json`` maps a regex over test names to the reason tdflow fails those cases;
each matched case runs as an expected failure, so a case that starts passing fails the run
until its entry is removed (the file then stays true).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FILTERS = Path(__file__).with_name("backend_filters.json")

#: BackendTest's class name for each kind -> the kind, as ``load_model_tests`` names it
KINDS = {"OnnxBackendNodeModelTest": "node", "OnnxBackendSimpleModelTest": "simple",
         "OnnxBackendPyTorchConvertedModelTest": "pytorch-converted",
         "OnnxBackendPyTorchOperatorModelTest": "pytorch-operator",
         "OnnxBackendRealModelTest": "light"}


def load_filters() -> dict[str, str]:
    """``{regex: reason}`` of the cases expected to fail."""
    data = json.loads(FILTERS.read_text()) if FILTERS.exists() else {}
    return data.get("expected_failures", {})


def backend_test(module_name: str, with_filters: bool = True):
    """The ``BackendTest`` of tdflow's backend, its expected failures marked."""
    import onnx.backend.test

    from tdflow.onnx.backend import TdflowBackend

    bt = onnx.backend.test.BackendTest(TdflowBackend, module_name)
    if with_filters:
        for pattern in load_filters():
            bt.xfail(f"^(?:{pattern})(?:_cpu|_cuda)?$")
    return bt


def case_name(test_name: str) -> str:
    """``test_abs_cpu`` -> ``test_abs``."""
    return re.sub(r"_(cpu|cuda)$", "", test_name)
