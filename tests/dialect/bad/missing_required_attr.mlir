// reshape requires its shape attribute
func.func @f(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = "tdflow.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
  return %0 : tensor<32xf32>
}
