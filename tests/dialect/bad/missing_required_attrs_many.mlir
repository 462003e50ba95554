// cast requires dtype, transpose requires perm
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %1 = "tdflow.transpose"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %x : tensor<4x8xf32>
}
