// a use of a value nobody defines
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
