// A two-result op: one result assigned twice, the other never; a typo in a function name.
include "prelude.td"

def Fx_ReluMaskOp : Fx_Op<"relu_mask"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y, TDF_Tensor:$mask);
  let formula = [{
    y = mxa(x, 0);   // relu
    y = x > 0;
  }];
}

def Fx_TwoOp : Fx_Op<"two"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y, TDF_Tensor:$z);
  let formula = [{ x * 2 }];
}
