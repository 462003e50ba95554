// cat's max_dim_size must not be negative
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.cat"(%x, %x) {max_dim_size = -1 : si64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %x : tensor<4x8xf32>
}
