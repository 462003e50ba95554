// A user's op library for bench/runtime_bench.py: ten activation functions of a dialect of its
// own ("uact"), each a formula-only Elementwise op (no hooks, no kernels, no Python).
// The bench checks each against numpy, then times load_ops on this file.

include "tdflow/Base.td"

def UAct_Dialect : Dialect {
  let name = "uact";
  let summary = "a user's activation functions";
}

// The ops of this file: TDF_Op in the uact dialect, pure and elementwise.
class UAct_Op<string mnemonic> : TDF_Op<mnemonic, [NoMemoryEffect, Elementwise]> {
  let opDialect = UAct_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
}

def UAct_HardSigmoidOp : UAct_Op<"hard_sigmoid"> {
  let summary = "piecewise-linear sigmoid: relu6(x + 3) / 6";
  let description = [{
    `%y = "uact.hard_sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let formula = [{ min(max(x + 3.0, 0.0), 6.0) / 6.0 }];
}

def UAct_HardSwishOp : UAct_Op<"hard_swish"> {
  let summary = "x * hard_sigmoid(x) (MobileNetV3)";
  let description = [{
    `%y = "uact.hard_swish"(%x) : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let formula = [{ x * min(max(x + 3.0, 0.0), 6.0) / 6.0 }];
}

def UAct_SoftsignOp : UAct_Op<"softsign"> {
  let summary = "x / (1 + |x|)";
  let description = [{
    `%y = "uact.softsign"(%x) : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let formula = [{ x / (1.0 + abs(x)) }];
}

def UAct_MishOp : UAct_Op<"mish"> {
  let summary = "x * tanh(softplus(x)) (Misra 2019)";
  let description = [{
    `%y = "uact.mish"(%x) : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let formula = [{ x * tanh(log(1.0 + exp(x))) }];
}

def UAct_CeluOp : UAct_Op<"celu"> {
  let summary = "continuously differentiable ELU: max(0, x) + min(0, alpha * (exp(x / alpha) - 1))";
  let description = [{
    `%y = "uact.celu"(%x) {alpha = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$alpha);
  let formula = [{ max(x, 0.0) + min(alpha * (exp(x / alpha) - 1.0), 0.0) }];
}

def UAct_SeluOp : UAct_Op<"selu"> {
  let summary = "self-normalizing ELU with the constants of Klambauer et al. 2017";
  let description = [{
    `%y = "uact.selu"(%x) : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let formula = [{ 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (exp(x) - 1.0)) }];
}

def UAct_EluOp : UAct_Op<"elu"> {
  let summary = "exponential linear unit";
  let description = [{
    `%y = "uact.elu"(%x) {alpha = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$alpha);
  let formula = [{ x > 0 ? x : alpha * (exp(x) - 1.0) }];
}

def UAct_SoftplusOp : UAct_Op<"softplus"> {
  let summary = "log(1 + exp(beta * x)) / beta, linear above threshold (as PyTorch)";
  let description = [{
    `%y = "uact.softplus"(%x) {beta = 1.0 : f32, threshold = 20.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$beta,
                   DefaultValuedAttr<F32Attr, "20.">:$threshold);
  let formula = [{ x * beta > threshold ? x : log(1.0 + exp(x * beta)) / beta }];
}

def UAct_ClampOp : UAct_Op<"clamp"> {
  let summary = "x limited to [lo, hi]";
  let description = [{
    `%y = "uact.clamp"(%x) {lo = -1.0 : f32, hi = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let attrs = (ins DefaultValuedAttr<F32Attr, "-1.">:$lo, DefaultValuedAttr<F32Attr, "1.">:$hi);
  let formula = [{ min(max(x, lo), hi) }];
}

def UAct_SwishOp : UAct_Op<"swish"> {
  let summary = "x * sigmoid(beta * x) (SiLU when beta = 1)";
  let description = [{
    `%y = "uact.swish"(%x) {beta = 1.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$beta);
  let formula = [{ x * sigmoid(beta * x) }];
}
