// the verifier reports every error, not just the first
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "tdflow.relu"(%x) {alpha = 1.0} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "tdflow.sigmod"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "tdflow.reshape"(%0) {shape = [5, -1]} : (tensor<4x8xf32>) -> tensor<?x?xf32>
  %3 = "tdflow.matmul"(%0, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
