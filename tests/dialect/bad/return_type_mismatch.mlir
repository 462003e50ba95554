// the returned type differs from the function's result type
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf16> {
  return %x : tensor<4x8xf32>
}
