"""ONNX's backend conformance suite on tdflow's CPU backend: the node tests (1,884 in onnx
1.23), the simple, pytorch-converted and pytorch-operator model tests and the light model zoo
("real" in onnx's runner: placeholder weights, so also see test_light_zoo.py). Cases tdflow
cannot run yet are listed, each with its reason, in backend_filters.json and run as expected
failures; the summary line ``onnx node tests: N/M passed`` is printed by conftest.py."""

from __future__ import annotations

from backend_suite import backend_test

globals().update(backend_test(__name__).enable_report().test_cases)
