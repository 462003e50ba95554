// ERROR: 5:3: 'return' has 2 operand(s) but @f returns 1 value(s)
// NOTE: 3:1: @f is declared here
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %x : tensor<4xf32>, tensor<4xf32>
}
