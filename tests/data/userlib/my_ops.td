// A user's op library with its own dialect, as OneFlow declares `OneFlow_Dialect` and
// `OneFlow_BaseOp`: the ops are `mylib.<mnemonic>` and sit next to the standard `tdflow` ops.
//
//   tdflow verify --ops my_ops.td --hooks my_hooks.py mixed.mlir
//   tdflow run --ops my_ops.td --hooks my_hooks.py mixed.mlir --output out.npz
include "tdflow/Base.td"

def MyLib_Dialect : Dialect {
  let name = "mylib";
  let summary = "a user's op library (tests of --ops/--hooks)";
}

// The library's op base class: every op of it lives in the `mylib` dialect.
class MyLib_Op<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let opDialect = MyLib_Dialect;
}

def MyLib_ScaleShiftOp : MyLib_Op<"scale_shift", [NoMemoryEffect]> {
  let summary = "y = x * scale + shift";
  let grad = [{ x: dy * scale }];
  let description = [{
    Scales and shifts every element; the hooks and the numpy kernel are in my_hooks.py, the
    gradient is the `grad` field.

    ```mlir
    %y = "mylib.scale_shift"(%x) {scale = 2.0 : f32, shift = 1.0 : f32}
        : (tensor<4x2xf32>) -> tensor<4x2xf32>
    ```
  }];
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let attrs = (ins DefaultValuedAttr<F32Attr, "1.">:$scale,
                   DefaultValuedAttr<F32Attr, "0.">:$shift);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}
