module {
  oneflow.job @TwoDeviceVariables() {
    %a = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0", "@1:1"], device_tag = "cuda", hierarchy = [2, 1], op_name = "emb", output_lbns = ["emb/out"], parallel = #sbp.parallel<[] -> [#sbp.B, #sbp.S<0>]>, scope_symbol_id = 14 : i64, shape = [6 : si64, 3 : si64], trainable = false} : () -> tensor<6x3xf32>
    %b = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0", "@1:1"], device_tag = "cuda", hierarchy = [2, 1], op_name = "proj", output_lbns = ["proj/out"], parallel = #sbp.parallel<[] -> [#sbp.B, #sbp.P]>, scope_symbol_id = 14 : i64, shape = [3 : si64, 7 : si64], trainable = false} : () -> tensor<3x7xf32>
    oneflow.return
  }
}
module {
  oneflow.job @NestedNdSbp() {
    %a = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0", "@1:1"], device_tag = "cuda", hierarchy = [2, 1], op_name = "emb", output_lbns = ["emb/out"], parallel = #sbp.parallel<[] -> [[#sbp.B, #sbp.S<1>]]>, scope_symbol_id = 15 : i64, shape = [6 : si64, 3 : si64], trainable = true} : () -> tensor<6x3xf32>
    %b = "oneflow.variable"() {data_type = 2 : i32, device_name = ["@0:0", "@1:1"], device_tag = "cuda", hierarchy = [2, 1], op_name = "proj", output_lbns = ["proj/out"], parallel = #sbp.parallel<[] -> [[#sbp.S<0>, #sbp.P]]>, scope_symbol_id = 15 : i64, shape = [3 : si64, 7 : si64], trainable = true} : () -> tensor<3x7xf32>
    oneflow.return
  }
}
