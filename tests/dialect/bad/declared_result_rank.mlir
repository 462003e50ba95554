// a keepdims reduction keeps the rank
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reduce_max"(%x) {axis = [1 : si32], keepdims = true} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %x : tensor<4x8xf32>
}
