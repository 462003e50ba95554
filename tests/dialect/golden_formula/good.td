// Formula-only ops that check: their trees and admitted dtypes are in good.out.
include "prelude.td"

def Fx_LeakyOp : Fx_Op<"leaky"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "0.01">:$alpha);
  let formula = [{ x > 0 ? x : x * alpha }];
}

def Fx_ClampOp : Fx_Op<"clamp"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI64Attr, "0">:$lo, DefaultValuedAttr<SI64Attr, "6">:$hi);
  let formula = [{ min(max(x, lo), hi) }];
}

def Fx_SplitOp : Fx_Op<"split"> {
  let input = (ins TDF_Tensor:$x, TDF_Tensor:$y);
  let output = (outs TDF_Tensor:$hi, TDF_Tensor:$is_x);
  let formula = [{
    hi = max(x, y);
    is_x = x >= y   // the trailing ';' is optional
  }];
}

def Fx_WrapOp : Fx_Op<"wrap"> {
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<SI32Attr, "7">:$n);
  let formula = [{ x % n + f32(x) * 1e-3 - .5 }];
}
