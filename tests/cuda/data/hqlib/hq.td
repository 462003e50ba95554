// A user's op library for tests/cuda/test_cuda_user_journeys.py: a formula op with attributes
// and a broadcast tensor operand, a formula op with two results, and an op without a formula
// that brings a hand-written CUDA kernel (hq_hooks.py).
include "tdflow/Base.td"

def Hq_Dialect : Dialect {
  let name = "hq";
  let summary = "a user's op library run on cudasim";
}

class Hq_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Hq_Dialect;
}

def Hq_SoftClipOp : Hq_Op<"soft_clip", [NoMemoryEffect, Elementwise]> {
  let summary = "y = clip(x * alpha, -lim, lim) + beta, lim broadcast against x";
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$lim);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$alpha, DefaultValuedAttr<F32Attr, "0.">:$beta);
  let formula = [{ min(max(x * alpha, -lim), lim) + beta }];
}

def Hq_SplitPosOp : Hq_Op<"split_pos", [NoMemoryEffect, Elementwise]> {
  let summary = "p = max(x, 0) * scale and n = tanh(min(x, 0))";
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$p, TDF_Tensor:$n);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$scale);
  let formula = [{ p = max(x, 0) * scale; n = tanh(min(x, 0)); }];
}

def Hq_RowSumPlusOp : Hq_Op<"row_sum_plus", [NoMemoryEffect]> {
  let summary = "y[i] = sum_j x[i, j] + shift";
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$shift);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
