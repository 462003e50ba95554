// relu takes one operand
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"() : () -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
