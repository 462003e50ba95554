// a use whose written type differs from the definition
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.tanh"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %x : tensor<4x8xf32>
}
