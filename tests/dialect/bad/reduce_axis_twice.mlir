// axis 1 and -1 are the same dim
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reduce_sum"(%x) {axis = [1 : si32, -1 : si32]} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %x : tensor<4x8xf32>
}
