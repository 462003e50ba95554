// negative is SameOperandsAndResultType: the shape must not change
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.negative"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %x : tensor<4x8xf32>
}
