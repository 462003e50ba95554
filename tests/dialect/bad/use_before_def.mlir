// a use before the definition (dominance)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
