// tdflow ops take tensors, not scalars
func.func @f(%x: tensor<4x8xf32>, %s: f32) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%s) : (f32) -> f32
  return %x : tensor<4x8xf32>
}
