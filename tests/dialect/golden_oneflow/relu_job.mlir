module {
  oneflow.job @GraphToRun_1(%arg0: tensor<1x5xf32> {sbp = #sbp.parallel<[] -> [#sbp.B, #sbp.S<0>]>}, %arg1: tensor<si64>) -> (tensor<1x5xf32>, tensor<si64>) {
    %output = "oneflow.input"(%arg0) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], is_dynamic = false, nd_sbp = ["B"], op_name = "_GraphToRun_1_input.0.0_2", output_lbns = ["_GraphToRun_1_input.0.0_2/out"], scope_symbol_id = 4611686018427412479 : i64, shape = [1 : si64, 5 : si64]} : (tensor<1x5xf32>) -> tensor<1x5xf32>
    %0 = "oneflow.relu"(%output) {device_name = ["@0:0"], device_tag = "cpu", hierarchy = [1], op_name = "relu-0", scope_symbol_id = 4611686018427420671 : i64} : (tensor<1x5xf32>) -> tensor<1x5xf32>
    oneflow.return %0, %arg1 : tensor<1x5xf32>, tensor<si64>
  }
}
module {
  oneflow.job @GraphToRun_2(%arg0: tensor<4xui8>) -> tensor<4xui8> {
    oneflow.return %arg0 : tensor<4xui8>
  }
}
