module {
  func.func @PoolIndices(%x: tensor<2x4x20x20xf32>) -> tensor<2x4x10x10xsi64> {
    %y, %indice = "oneflow.max_pool_2d"(%x) {
      ceil_mode = false,
      data_format = "channels_first",
      device_name = ["@0:0"],
      device_tag = "cpu",
      dilation = [1 : si32, 1 : si32],
      hierarchy = [1],
      kernel_size = [3 : si32, 3 : si32],
      op_name = "pool-with-indices",
      padding = [1 : si32, 1 : si32],
      return_indices = true,
      scope_symbol_id = 11 : i64,
      stride = [2 : si32, 2 : si32]
    } : (tensor<2x4x20x20xf32>) -> (tensor<2x4x10x10xf32>, tensor<2x4x10x10xsi64>)
    return %indice : tensor<2x4x10x10xsi64>
  }
  oneflow.job @SortAndGather(%arg0: tensor<6xf32>) -> (tensor<6xsi32>, tensor<6xf32>) {
    %x = "oneflow.input"(%arg0) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "in", output_lbns = ["in/out"], scope_symbol_id = 2 : i64, shape = [6 : si64]} : (tensor<6xf32>) -> tensor<6xf32>
    %0 = "oneflow.relu"(%x) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "relu", scope_symbol_id = 2 : i64} : (tensor<6xf32>) -> tensor<6xf32>
    %1 = "oneflow.tanh"(%0) {device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], op_name = "tanh", scope_symbol_id = 2 : i64} : (tensor<6xf32>) -> tensor<6xf32>
    %2 = "oneflow.arg_sort"(%1) {device_name = ["@0:0"], device_tag = "cuda", direction = "DESCENDING", hierarchy = [1], op_name = "order", scope_symbol_id = 2 : i64} : (tensor<6xf32>) -> tensor<6xsi32>
    %3 = "oneflow.dim_gather"(%1, %2) {device_name = ["@0:0"], device_tag = "cuda", dim = 0 : si32, hierarchy = [1], op_name = "sorted", scope_symbol_id = 2 : i64} : (tensor<6xf32>, tensor<6xsi32>) -> tensor<6xf32>
    %o1 = "oneflow.output"(%2) {data_type = 5 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "out_order", output_lbns = ["out_order/out"], scope_symbol_id = 2 : i64, shape = [6 : si64]} : (tensor<6xsi32>) -> tensor<6xsi32>
    %o2 = "oneflow.output"(%3) {data_type = 2 : i32, device_name = ["@0:0"], device_tag = "cuda", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "out_sorted", output_lbns = ["out_sorted/out"], scope_symbol_id = 2 : i64, shape = [6 : si64]} : (tensor<6xf32>) -> tensor<6xf32>
    oneflow.return %o1, %o2 : tensor<6xsi32>, tensor<6xf32>
  }
}
