// perm must be a permutation of 0..rank-1
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.transpose"(%x) {perm = [0 : si32, 0 : si32]} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %x : tensor<4x8xf32>
}
