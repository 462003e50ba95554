// cast's dtype is written as a type (f16), not a string
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.cast"(%x) {dtype = "f16"} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %x : tensor<4x8xf32>
}
