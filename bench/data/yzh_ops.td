// The OneFlow tutorial's user dialect ("yzh"), for bench/runtime_bench.py's fused chain across
// dialects: two formula-only Elementwise ops (no hooks, no kernels, no Python).

include "tdflow/Base.td"

def Yzh_Dialect : Dialect { let name = "yzh"; }
class Yzh_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = Yzh_Dialect;
}

def Yzh_LeakyReluYzhOp : Yzh_Op<"leaky_relu_yzh", [NoMemoryEffect, Elementwise]> {
  let summary = "leaky relu, the OneFlow tutorial's op";
  let description = [{
    `%y = "yzh.leaky_relu_yzh"(%x) {alpha = 0.1 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$alpha);
  let formula = [{ x > 0 ? x : x * alpha }];
}

def Yzh_SoftClipOp : Yzh_Op<"soft_clip", [NoMemoryEffect, Elementwise]> {
  let summary = "x squashed smoothly into (-limit, limit)";
  let description = [{
    `%y = "yzh.soft_clip"(%x, %limit) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>`
  }];
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$limit);
  let output = (outs TDF_Tensor:$y);
  let formula = [{ limit * tanh(x / limit) }];
}
