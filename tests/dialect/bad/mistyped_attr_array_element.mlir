// an array of si32 with a string in it
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.transpose"(%x) {perm = [1, "0"]} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %x : tensor<4x8xf32>
}
