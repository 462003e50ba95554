// ERROR: 5:22: '%0#2' does not exist: '%0' has 2 result(s)
func.func @f(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0:2 = "tdflow.split"(%x) : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  // only #0 and #1 exist
  %1 = "tdflow.relu"(%0#2) : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
