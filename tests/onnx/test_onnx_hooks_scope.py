"""The onnx dialect's inference hooks belong to the contexts that load ``onnx.td`` (issue 19,
item 5): loading it declares them for those contexts only; the process-wide registry, the
standard context and a user's context never see them, and no entry point registers them."""

from __future__ import annotations

import pytest
from tdflow.dialect.context import load_ops, shipped_hook_modules, standard_context
from tdflow.dialect.hooks.registry import HOOKS
from tdflow.dialect.types import TensorType

from tdflow.onnx import ONNX_TD
from tdflow.onnx.context import onnx_context

KINDS = ("infer_logical_tensor_desc", "infer_data_type")


def test_a_context_with_onnx_td_has_its_hooks_and_the_process_wide_registry_not():
    ctx = onnx_context()
    for kind in KINDS:
        assert ctx.registry.get("onnx.Relu", kind) is not None
        assert HOOKS.get("onnx.Relu", kind) is None
        assert standard_context().registry.get("onnx.Relu", kind) is None
    assert ctx.infer_result_types("onnx.Transpose", {"data": [TensorType((2, 3, 4), "f32")]},
                                  {"perm": [2, 0, 1]}) == [TensorType((4, 2, 3), "f32")]


def test_a_fresh_load_of_onnx_td_gets_the_hooks_without_anything_registered_first():
    ctx = load_ops(ONNX_TD)
    assert ctx.hook_modules == shipped_hook_modules(ONNX_TD) == ("tdflow.onnx.infer",)
    assert ctx.registry.get("onnx.Conv", "infer_logical_tensor_desc") is not None


def test_a_user_library_named_onnx_td_is_not_taken_for_tdflow_s(tmp_path):
    mine = tmp_path / "onnx.td"
    mine.write_text('include "tdflow/Base.td"\n'
                    'def My_Dialect : Dialect { let name = "my"; }\n'
                    'def My_TwiceOp : Op<My_Dialect, "twice", [NoMemoryEffect]> {\n'
                    '  let arguments = (ins TDF_Tensor:$x); let results = (outs TDF_Tensor:$y); }\n')
    assert shipped_hook_modules(mine) == ()
    ctx = load_ops(mine)
    assert ctx.hook_modules == () and ctx.registry is HOOKS


@pytest.mark.parametrize("kind", KINDS)
def test_a_context_built_from_onnx_s_libraries_keeps_the_hooks(kind):
    from tdflow.dialect.context import Context

    onnx_lib = [lib for lib in onnx_context().libraries if lib.name == "onnx"]
    std = standard_context()
    ctx = Context([*std.libraries, *onnx_lib], standard=std.standard)
    assert ctx.registry.get("onnx.MatMul", kind) is not None
