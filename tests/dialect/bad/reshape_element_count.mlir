// 32 elements cannot be reshaped to 3 x ?
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reshape"(%x) {shape = [3, -1]} : (tensor<4x8xf32>) -> tensor<3x?xf32>
  return %x : tensor<4x8xf32>
}
