// is_floating_value needs a floating-point dtype
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.constant"() {dtype = i32, floating_value = 1.5, is_floating_value = true, shape = [4, 8]} : () -> tensor<4x8xi32>
  return %x : tensor<4x8xf32>
}
