// A user's op library whose op has no formula: a numpy kernel and a hand-written CUDA kernel
// (culib_hooks.py), run on cudasim by tests/cuda/test_user_cuda_kernels.py.
include "tdflow/Base.td"

def CuLib_Dialect : Dialect {
  let name = "culib";
  let summary = "a user's op library with a CUDA kernel";
}

class CuLib_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = CuLib_Dialect;
}

def CuLib_RowScaleOp : CuLib_Op<"row_scale", [NoMemoryEffect]> {
  let summary = "y[i, j] = x[i, j] * s[i] + shift";
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$s);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$shift);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
