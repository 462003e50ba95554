// ERROR: 5:3: type of return operand #0 (tensor<4xf32>) does not match the function result type (tensor<4xf16>) of @f
// NOTE: 3:1: @f is declared here
func.func @f(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
