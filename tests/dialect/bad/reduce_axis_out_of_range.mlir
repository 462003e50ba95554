// axis 5 does not exist in a rank-2 tensor
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reduce_sum"(%x) {axis = [5 : si32]} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %x : tensor<4x8xf32>
}
