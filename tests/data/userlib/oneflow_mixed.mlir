// OneFlow ops (served by the standard ops of the same shape), mylib and tdflow ops together.
func.func @f(%x: tensor<4x3xf32>, %w: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %0 = "oneflow.matmul"(%x, %w) {transpose_a = false, transpose_b = false, alpha = 1.0 : f64, op_name = "matmul-0", device_tag = "cpu", device_name = ["@0:0"]} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = "mylib.scale_shift"(%0) {scale = 2.0 : f32, shift = 1.0 : f32} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = "oneflow.relu"(%1) {op_name = "relu-0", device_tag = "cpu", device_name = ["@0:0"], hierarchy = [1], scope_symbol_id = 4611686018427420671 : i64} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %3 = "tdflow.sigmoid"(%2) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
