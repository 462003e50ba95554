// only one dim of a reshape may be -1
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reshape"(%x) {shape = [-1, -1]} : (tensor<4x8xf32>) -> tensor<?x?xf32>
  return %x : tensor<4x8xf32>
}
