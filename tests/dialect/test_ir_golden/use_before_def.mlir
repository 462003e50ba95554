// ERROR: 4:22: use of '%1' before its definition (operand #0 of 'tdflow.relu' does not dominate this use)
// NOTE: 5:3: '%1' is defined here
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
