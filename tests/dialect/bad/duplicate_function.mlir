// two functions with one name
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
