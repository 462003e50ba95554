// both operands of broadcast_mul must have the same element type
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %0 = "tdflow.broadcast_mul"(%x, %y) : (tensor<4x8xf32>, tensor<4x8xf16>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
