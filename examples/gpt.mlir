func.func @gpt(%tokens: tensor<2x8xi64>, %targets: tensor<2x8xi64>, %wte: tensor<32x16xf32>, %wpe: tensor<8x16xf32>, %h0_ln1_g: tensor<16xf32>, %h0_ln1_b: tensor<16xf32>, %h0_attn_wq: tensor<16x16xf32>, %h0_attn_bq: tensor<16xf32>, %h0_attn_wk: tensor<16x16xf32>, %h0_attn_bk: tensor<16xf32>, %h0_attn_wv: tensor<16x16xf32>, %h0_attn_bv: tensor<16xf32>, %h0_attn_wo: tensor<16x16xf32>, %h0_attn_bo: tensor<16xf32>, %h0_ln2_g: tensor<16xf32>, %h0_ln2_b: tensor<16xf32>, %h0_mlp_w1: tensor<16x64xf32>, %h0_mlp_b1: tensor<64xf32>, %h0_mlp_w2: tensor<64x16xf32>, %h0_mlp_b2: tensor<16xf32>, %h1_ln1_g: tensor<16xf32>, %h1_ln1_b: tensor<16xf32>, %h1_attn_wq: tensor<16x16xf32>, %h1_attn_bq: tensor<16xf32>, %h1_attn_wk: tensor<16x16xf32>, %h1_attn_bk: tensor<16xf32>, %h1_attn_wv: tensor<16x16xf32>, %h1_attn_bv: tensor<16xf32>, %h1_attn_wo: tensor<16x16xf32>, %h1_attn_bo: tensor<16xf32>, %h1_ln2_g: tensor<16xf32>, %h1_ln2_b: tensor<16xf32>, %h1_mlp_w1: tensor<16x64xf32>, %h1_mlp_b1: tensor<64xf32>, %h1_mlp_w2: tensor<64x16xf32>, %h1_mlp_b2: tensor<16xf32>, %lnf_g: tensor<16xf32>, %lnf_b: tensor<16xf32>) -> tensor<f32> {
  %0 = "tdflow.reshape"(%targets) {shape = [16]} : (tensor<2x8xi64>) -> tensor<16xi64>
  %1 = "tdflow.arange"() {dtype = i64, integer_start = 0 : si64, integer_delta = 1 : si64, integer_limit = 8 : si64, nd_sbp = []} : () -> tensor<8xi64>
  %2 = "tdflow.embedding"(%wte, %tokens) : (tensor<32x16xf32>, tensor<2x8xi64>) -> tensor<2x8x16xf32>
  %3 = "tdflow.embedding"(%wpe, %1) : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<8x16xf32>
  %4 = "tdflow.broadcast_add"(%2, %3) : (tensor<2x8x16xf32>, tensor<8x16xf32>) -> tensor<2x8x16xf32>
  %5 = "tdflow.reshape"(%4) {shape = [16, 16]} : (tensor<2x8x16xf32>) -> tensor<16x16xf32>
  %6:3 = "tdflow.layer_norm"(%5, %h0_ln1_b, %h0_ln1_g) {center = true, scale = true, begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, epsilon = 1.000000e-05, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %7 = "tdflow.matmul"(%6#0, %h0_attn_wq) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %8 = "tdflow.bias_add"(%7, %h0_attn_bq) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %9 = "tdflow.reshape"(%8) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %10 = "tdflow.transpose"(%9) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %11 = "tdflow.matmul"(%6#0, %h0_attn_wk) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %12 = "tdflow.bias_add"(%11, %h0_attn_bk) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %13 = "tdflow.reshape"(%12) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %14 = "tdflow.transpose"(%13) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %15 = "tdflow.matmul"(%6#0, %h0_attn_wv) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %16 = "tdflow.bias_add"(%15, %h0_attn_bv) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %17 = "tdflow.reshape"(%16) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %18 = "tdflow.transpose"(%17) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %19 = "tdflow.batch_matmul"(%10, %14) {transpose_b = true} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %20 = "tdflow.fused_scale_tril"(%19) {diagonal = 0 : si64, floating_fill_value = 0xFFF0000000000000 : f64, is_floating_fill_value = true, floating_scale_value = 0.35355339059327373, is_floating_scale_value = true} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %21 = "tdflow.softmax"(%20) : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %22 = "tdflow.batch_matmul"(%21, %18) : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %23 = "tdflow.transpose"(%22) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x2x8x8xf32>) -> tensor<2x8x2x8xf32>
  %24 = "tdflow.reshape"(%23) {shape = [16, 16]} : (tensor<2x8x2x8xf32>) -> tensor<16x16xf32>
  %25 = "tdflow.matmul"(%24, %h0_attn_wo) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %26 = "tdflow.bias_add"(%25, %h0_attn_bo) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %27 = "tdflow.broadcast_add"(%5, %26) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %28:3 = "tdflow.layer_norm"(%27, %h0_ln2_b, %h0_ln2_g) {center = true, scale = true, begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, epsilon = 1.000000e-05, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %29 = "tdflow.matmul"(%28#0, %h0_mlp_w1) : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %30 = "tdflow.bias_add"(%29, %h0_mlp_b1) {axis = 1 : si32} : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %31 = "tdflow.gelu"(%30) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %32 = "tdflow.matmul"(%31, %h0_mlp_w2) : (tensor<16x64xf32>, tensor<64x16xf32>) -> tensor<16x16xf32>
  %33 = "tdflow.bias_add"(%32, %h0_mlp_b2) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %34 = "tdflow.broadcast_add"(%27, %33) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %35:3 = "tdflow.layer_norm"(%34, %h1_ln1_b, %h1_ln1_g) {center = true, scale = true, begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, epsilon = 1.000000e-05, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %36 = "tdflow.matmul"(%35#0, %h1_attn_wq) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %37 = "tdflow.bias_add"(%36, %h1_attn_bq) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %38 = "tdflow.reshape"(%37) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %39 = "tdflow.transpose"(%38) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %40 = "tdflow.matmul"(%35#0, %h1_attn_wk) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %41 = "tdflow.bias_add"(%40, %h1_attn_bk) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %42 = "tdflow.reshape"(%41) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %43 = "tdflow.transpose"(%42) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %44 = "tdflow.matmul"(%35#0, %h1_attn_wv) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %45 = "tdflow.bias_add"(%44, %h1_attn_bv) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %46 = "tdflow.reshape"(%45) {shape = [2, 8, 2, 8]} : (tensor<16x16xf32>) -> tensor<2x8x2x8xf32>
  %47 = "tdflow.transpose"(%46) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x8x2x8xf32>) -> tensor<2x2x8x8xf32>
  %48 = "tdflow.batch_matmul"(%39, %43) {transpose_b = true} : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %49 = "tdflow.fused_scale_tril"(%48) {diagonal = 0 : si64, floating_fill_value = 0xFFF0000000000000 : f64, is_floating_fill_value = true, floating_scale_value = 0.35355339059327373, is_floating_scale_value = true} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %50 = "tdflow.softmax"(%49) : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %51 = "tdflow.batch_matmul"(%50, %47) : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %52 = "tdflow.transpose"(%51) {perm = [0 : si32, 2 : si32, 1 : si32, 3 : si32]} : (tensor<2x2x8x8xf32>) -> tensor<2x8x2x8xf32>
  %53 = "tdflow.reshape"(%52) {shape = [16, 16]} : (tensor<2x8x2x8xf32>) -> tensor<16x16xf32>
  %54 = "tdflow.matmul"(%53, %h1_attn_wo) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %55 = "tdflow.bias_add"(%54, %h1_attn_bo) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %56 = "tdflow.broadcast_add"(%34, %55) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %57:3 = "tdflow.layer_norm"(%56, %h1_ln2_b, %h1_ln2_g) {center = true, scale = true, begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, epsilon = 1.000000e-05, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %58 = "tdflow.matmul"(%57#0, %h1_mlp_w1) : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %59 = "tdflow.bias_add"(%58, %h1_mlp_b1) {axis = 1 : si32} : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %60 = "tdflow.gelu"(%59) : (tensor<16x64xf32>) -> tensor<16x64xf32>
  %61 = "tdflow.matmul"(%60, %h1_mlp_w2) : (tensor<16x64xf32>, tensor<64x16xf32>) -> tensor<16x16xf32>
  %62 = "tdflow.bias_add"(%61, %h1_mlp_b2) {axis = 1 : si32} : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16x16xf32>
  %63 = "tdflow.broadcast_add"(%56, %62) : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %64:3 = "tdflow.layer_norm"(%63, %lnf_b, %lnf_g) {center = true, scale = true, begin_norm_axis = 1 : si64, begin_params_axis = 1 : si64, epsilon = 1.000000e-05, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>)
  %65 = "tdflow.matmul"(%64#0, %wte) {transpose_b = true} : (tensor<16x16xf32>, tensor<32x16xf32>) -> tensor<16x32xf32>
  %66:2 = "tdflow.sparse_softmax_cross_entropy"(%65, %0) {depth = 32 : si64} : (tensor<16x32xf32>, tensor<16xi64>) -> (tensor<16x32xf32>, tensor<16xf32>)
  %67 = "tdflow.reduce_sum"(%66#1) {axis = [0 : si32]} : (tensor<16xf32>) -> tensor<f32>
  %68 = "tdflow.scalar_mul"(%67) {has_float_operand = true, float_operand = 6.250000e-02} : (tensor<f32>) -> tensor<f32>
  return %68 : tensor<f32>
}
