// A user op library exercising each gradient source: a formula op (derived), a grad-field
// op written with other ops, and an op with a Python rule (grad_hooks.py).
include "tdflow/Base.td"

def G_Dialect : Dialect { let name = "glib"; }

class G_Op<string mnemonic, list<Trait> traits = []> : Op<G_Dialect, mnemonic, traits>;

def G_SoftplusOp : G_Op<"softplus", [NoMemoryEffect, Elementwise]> {
  let summary = "log(1 + exp(beta x)) / beta";
  let formula = [{ log(1.0 + exp(x * beta)) / beta }];
  let arguments = (ins TDF_Tensor:$x, DefaultValuedAttr<F32Attr, "1.">:$beta);
  let results = (outs TDF_Tensor:$y);
}

// OneFlow's style (input/output/attrs and has_*_fn flags), in this library's dialect.
class G_FlowOp<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = G_Dialect;
}

def G_ScaledMatmulOp : G_FlowOp<"scaled_matmul", [NoMemoryEffect]> {
  let summary = "k * a @ b, with its gradient written with matmul";
  let grad = [{
    a: matmul(dout, b, transpose_b=true, alpha=k);
    b: matmul(a, dout, transpose_a=true) * k
  }];
  let input = (ins TDF_Tensor:$a, TDF_Tensor:$b);
  let output = (outs TDF_Tensor:$out);
  let attrs = (ins DefaultValuedAttr<F64Attr, "1.">:$k);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}

def G_CubeOp : G_Op<"cube", [NoMemoryEffect, SameOperandsAndResultType]> {
  let summary = "x * x * x, kernel and gradient rule in grad_hooks.py";
  let arguments = (ins TDF_Tensor:$x);
  let results = (outs TDF_Tensor:$y);
}
