// An unclosed parenthesis: the error is at the end of the code block's text.
include "prelude.td"

def Fx_SoftplusOp : Fx_Op<"softplus"> {
  let summary = "log(1 + exp(x))";
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let formula = [{ log(1.0 + exp(x) }];
}

def Fx_BadTokenOp : Fx_Op<"bad_token"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let formula = [{ x ** 2 }];
}
