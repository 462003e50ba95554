// ERROR: 4:22: type mismatch: '%x' is used as tensor<8xf32> but defined as tensor<4xf32>
// NOTE: 3:14: '%x' defined here
func.func @f(%x: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
