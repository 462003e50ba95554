// a constant's shape cannot have negative dims
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.constant"() {dtype = f32, shape = [4, -8]} : () -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
