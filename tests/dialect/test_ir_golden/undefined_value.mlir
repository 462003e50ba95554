// ERROR: 4:22: use of undefined value '%y'
// ERROR: 5:25: use of undefined value '%z#1'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "tdflow.add"(%0, %z#1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
