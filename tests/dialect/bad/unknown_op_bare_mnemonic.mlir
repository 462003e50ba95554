// an op name without its dialect prefix
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "leaky_relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
