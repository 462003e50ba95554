// ERROR: 6:22: type mismatch: '%1' is used as tensor<4xf16> but defined as tensor<4xf32>
// NOTE: 7:3: '%1' defined here
// ERROR: 6:22: use of '%1' before its definition (operand #0 of 'tdflow.relu' does not dominate this use)
// NOTE: 7:3: '%1' is defined here
func.func @f(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = "tdflow.relu"(%1) : (tensor<4xf16>) -> tensor<4xf16>
  %1 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf16>
}
