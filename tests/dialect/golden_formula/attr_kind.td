// Attributes that are not numbers cannot be used in math; conditions must be truth values.
include "prelude.td"

def Fx_LayoutOp : Fx_Op<"layout"> {
  let input = (ins TDF_Tensor:$x, Variadic<TDF_Tensor>:$rest);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<StrAttr, "\"NCHW\"">:$data_format,
                   DefaultValuedAttr<F32Attr, "0.5">:$alpha);
  let formula = [{ alpha ? x * data_format : rest }];
}

def Fx_ArityOp : Fx_Op<"arity"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let formula = [{
    // comments are allowed
    pow(x) + exp(x, x)
  }];
}
