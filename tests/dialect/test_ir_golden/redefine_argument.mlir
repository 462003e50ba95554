// ERROR: 4:3: redefinition of SSA value '%x'
// NOTE: 3:14: previously defined here
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %x = "tdflow.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
