// 4x8 and 3x8 do not broadcast
func.func @f(%x: tensor<4x8xf32>, %y: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.broadcast_add"(%x, %y) : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
