// an op of a dialect that is not loaded
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "arith.addf"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
