// relu is SameOperandsAndResultType: f32 in, f16 out
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %x : tensor<4x8xf32>
}
