module {
  oneflow.job @CrossAttention(%arg0: tensor<2x12x64xf16>, %arg1: tensor<2x5x64xf16>, %arg2: tensor<2x5x64xf16>) -> tensor<2x12x64xf16> {
    %q = "oneflow.input"(%arg0) {data_type = 9 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "q", output_lbns = ["q/out"], scope_symbol_id = 40 : i64, shape = [2 : si64, 12 : si64, 64 : si64]} : (tensor<2x12x64xf16>) -> tensor<2x12x64xf16>
    %k = "oneflow.input"(%arg1) {data_type = 9 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "k", output_lbns = ["k/out"], scope_symbol_id = 40 : i64, shape = [2 : si64, 5 : si64, 64 : si64]} : (tensor<2x5x64xf16>) -> tensor<2x5x64xf16>
    %v = "oneflow.input"(%arg2) {data_type = 9 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "v", output_lbns = ["v/out"], scope_symbol_id = 40 : i64, shape = [2 : si64, 5 : si64, 64 : si64]} : (tensor<2x5x64xf16>) -> tensor<2x5x64xf16>
    %0 = "oneflow.reshape"(%q) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "q_heads", scope_symbol_id = 40 : i64, shape = [2 : si64, 12 : si64, 4 : si64, 16 : si64]} : (tensor<2x12x64xf16>) -> tensor<2x12x4x16xf16>
    %1 = "oneflow.reshape"(%k) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "k_heads", scope_symbol_id = 40 : i64, shape = [2 : si64, 5 : si64, 4 : si64, 16 : si64]} : (tensor<2x5x64xf16>) -> tensor<2x5x4x16xf16>
    %2 = "oneflow.reshape"(%v) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "v_heads", scope_symbol_id = 40 : i64, shape = [2 : si64, 5 : si64, 4 : si64, 16 : si64]} : (tensor<2x5x64xf16>) -> tensor<2x5x4x16xf16>
    %3 = "oneflow.transpose"(%0) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "q_t", perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32], scope_symbol_id = 40 : i64} : (tensor<2x12x4x16xf16>) -> tensor<2x4x12x16xf16>
    %4 = "oneflow.transpose"(%1) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "k_t", perm = [0 : si32, 2 : si32, 3 : si32, 1 : si32], scope_symbol_id = 40 : i64} : (tensor<2x5x4x16xf16>) -> tensor<2x4x16x5xf16>
    %5 = "oneflow.transpose"(%2) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "v_t", perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32], scope_symbol_id = 40 : i64} : (tensor<2x5x4x16xf16>) -> tensor<2x4x5x16xf16>
    %6 = "oneflow.batch_matmul"(%3, %4) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "scores", scope_symbol_id = 40 : i64, transpose_a = false, transpose_b = false} : (tensor<2x4x12x16xf16>, tensor<2x4x16x5xf16>) -> tensor<2x4x12x5xf16>
    %7 = "oneflow.scalar_div"(%6) {device_name = ["@0:0"], device_tag = "cuda", float_operand = 4.000000e+00 : f64, has_float_operand = true, has_int_operand = false, hierarchy = [1], int_operand = 0 : si64, op_name = "scaled", scope_symbol_id = 40 : i64} : (tensor<2x4x12x5xf16>) -> tensor<2x4x12x5xf16>
    %8 = "oneflow.softmax"(%7) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "attn", scope_symbol_id = 40 : i64} : (tensor<2x4x12x5xf16>) -> tensor<2x4x12x5xf16>
    %9 = "oneflow.batch_matmul"(%8, %5) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "mix", scope_symbol_id = 40 : i64, transpose_a = false, transpose_b = false} : (tensor<2x4x12x5xf16>, tensor<2x4x5x16xf16>) -> tensor<2x4x12x16xf16>
    %10 = "oneflow.transpose"(%9) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "back", perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32], scope_symbol_id = 40 : i64} : (tensor<2x4x12x16xf16>) -> tensor<2x12x4x16xf16>
    %11 = "oneflow.reshape"(%10) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "merge", scope_symbol_id = 40 : i64, shape = [2 : si64, 12 : si64, 64 : si64]} : (tensor<2x12x4x16xf16>) -> tensor<2x12x64xf16>
    %out = "oneflow.output"(%11) {data_type = 9 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "out", output_lbns = ["out/out"], scope_symbol_id = 40 : i64, shape = [2 : si64, 12 : si64, 64 : si64]} : (tensor<2x12x64xf16>) -> tensor<2x12x64xf16>
    oneflow.return %out : tensor<2x12x64xf16>
  }
  oneflow.job @CastScale(%arg0: tensor<3x4xsi64>, %arg1: tensor<1xf32>) -> tensor<3x4xf32> {
    %x = "oneflow.input"(%arg0) {data_type = 6 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "ids", output_lbns = ["ids/out"], scope_symbol_id = 41 : i64, shape = [3 : si64, 4 : si64]} : (tensor<3x4xsi64>) -> tensor<3x4xsi64>
    %s = "oneflow.input"(%arg1) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "s", output_lbns = ["s/out"], scope_symbol_id = 41 : i64, shape = [1 : si64]} : (tensor<1xf32>) -> tensor<1xf32>
    %0 = "oneflow.cast"(%x) {device_name = ["@0:0"], device_tag = "cpu", dtype = 2 : i32, hierarchy = [1], op_name = "cast", pin_memory = false, scope_symbol_id = 41 : i64} : (tensor<3x4xsi64>) -> tensor<3x4xf32>
    %1 = "oneflow.scalar_mul_by_tensor"(%0, %s) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "mul", scope_symbol_id = 41 : i64} : (tensor<3x4xf32>, tensor<1xf32>) -> tensor<3x4xf32>
    %out = "oneflow.output"(%1) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "out", output_lbns = ["out/out"], scope_symbol_id = 41 : i64, shape = [3 : si64, 4 : si64]} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    oneflow.return %out : tensor<3x4xf32>
  }
  func.func @SharedInputMatmuls(%x: tensor<3x32xf16>, %w1: tensor<48x32xf16>, %w2: tensor<48x32xf16>, %b1: tensor<48xf16>, %b2: tensor<48xf16>) -> (tensor<3x48xf16>, tensor<3x48xf16>) {
    %0 = "oneflow.matmul"(%x, %w1) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "mm1", scope_symbol_id = 50 : i64, transpose_a = false, transpose_b = true} : (tensor<3x32xf16>, tensor<48x32xf16>) -> tensor<3x48xf16>
    %1 = "oneflow.bias_add"(%0, %b1) {axis = 1 : si32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "ba1", scope_symbol_id = 50 : i64} : (tensor<3x48xf16>, tensor<48xf16>) -> tensor<3x48xf16>
    %2 = "oneflow.matmul"(%x, %w2) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "mm2", scope_symbol_id = 50 : i64, transpose_a = false, transpose_b = true} : (tensor<3x32xf16>, tensor<48x32xf16>) -> tensor<3x48xf16>
    %3 = "oneflow.broadcast_add"(%2, %b2) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "add2", scope_symbol_id = 50 : i64} : (tensor<3x48xf16>, tensor<48xf16>) -> tensor<3x48xf16>
    return %1, %3 : tensor<3x48xf16>, tensor<3x48xf16>
  }
  func.func @BroadcastMatmuls(%x: tensor<2x9x32xf16>, %w1: tensor<32x32xf16>, %w2: tensor<32x32xf16>) -> (tensor<2x9x32xf16>, tensor<2x9x32xf16>) {
    %0 = "oneflow.broadcast_matmul"(%x, %w1) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "bm1", scope_symbol_id = 50 : i64, transpose_a = false, transpose_b = true} : (tensor<2x9x32xf16>, tensor<32x32xf16>) -> tensor<2x9x32xf16>
    %1 = "oneflow.broadcast_matmul"(%x, %w2) {alpha = 1.000000e+00 : f64, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "bm2", scope_symbol_id = 50 : i64, transpose_a = false, transpose_b = true} : (tensor<2x9x32xf16>, tensor<32x32xf16>) -> tensor<2x9x32xf16>
    return %0, %1 : tensor<2x9x32xf16>, tensor<2x9x32xf16>
  }
  func.func @FusedMatmulBias(%x: tensor<4x6xf64>, %w: tensor<3x6xf64>, %b: tensor<3xf64>) -> tensor<4x3xf64> {
    %y = "oneflow.fused_matmul_bias"(%x, %w, %b) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "fmb", scope_symbol_id = 51 : i64} : (tensor<4x6xf64>, tensor<3x6xf64>, tensor<3xf64>) -> tensor<4x3xf64>
    return %y : tensor<4x3xf64>
  }
}
