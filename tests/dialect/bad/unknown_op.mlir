// an op the dialect does not define (a typo: suggests the close names)
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relus"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
