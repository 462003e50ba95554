module {
  oneflow.job @CastJob(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf64>, tensor<2x3xf32>) {
    %output = "oneflow.input"(%arg0) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "_CastJob_input.0.0_2", output_lbns = ["_CastJob_input.0.0_2/out"], scope_symbol_id = 12 : i64, shape = [2 : si64, 3 : si64]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %0 = "oneflow.cast"(%output) {device_name = ["@0:0"], device_tag = "cpu", dtype = 3 : i32, hierarchy = [1], op_name = "cast-0", pin_memory = false, scope_symbol_id = 12 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf64>
    %1 = "oneflow.cast"(%0) {device_name = ["@0:0"], device_tag = "cpu", dtype = "DT_Float", op_name = "cast-1"} : (tensor<2x3xf64>) -> tensor<2x3xf32>
    %2 = "oneflow.cast"(%1) {device_name = ["@0:0"], device_tag = "cpu", dtype = 3 : si32, op_name = "cast-2"} : (tensor<2x3xf32>) -> tensor<2x3xf64>
    %3:2 = "oneflow.tensor_buffer_to_list_of_tensors_v2"(%output) {device_name = ["@0:0"], device_tag = "cpu", op_name = "tb-0", out_dtypes = [2 : i32, "DT_Float"], out_shapes = [[2 : si64, 3 : si64], [2 : si64, 3 : si64]]} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    oneflow.return %2, %3#1 : tensor<2x3xf64>, tensor<2x3xf32>
  }
}
