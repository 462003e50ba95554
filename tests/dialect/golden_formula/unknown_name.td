// A misspelt attribute on the second line of a code block.
include "prelude.td"

def Fx_ScaleShiftOp : Fx_Op<"scale_shift"> {
  let summary = "y = x * scale + shift";
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$scale,
                   DefaultValuedAttr<F32Attr, "0.">:$shift);
  let formula = [{
    x * scale
      + shfit
  }];
}
