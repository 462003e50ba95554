// exactly one of has_int_operand and has_float_operand must be set
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.scalar_add"(%x) {float_operand = 2.0} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
