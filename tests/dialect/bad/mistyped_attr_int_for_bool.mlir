// keepdims is a bool: write true or false
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.reduce_sum"(%x) {axis = [1 : si32], keepdims = 1} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %x : tensor<4x8xf32>
}
