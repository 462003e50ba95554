// Wrong user kernels for tests/e2e/test_cuda_cli_errors.py (hqerr_hooks.py): a CUDA body that
// does not compile, one whose __syncthreads is divergent, and an op with only a CPU kernel.
include "tdflow/Base.td"

def HqErr_Dialect : Dialect {
  let name = "hqerr";
  let summary = "user ops whose GPU kernels are wrong or missing";
}

class HqErr_Op<string mnemonic> : TDF_Op<mnemonic, [NoMemoryEffect]> {
  let opDialect = HqErr_Dialect;
  let input = (ins TDF_Tensor:$x);
  let output = (outs TDF_Tensor:$y);
  let has_logical_tensor_desc_infer_fn = 1;
  let has_data_type_infer_fn = 1;
}

def HqErr_BadBodyOp : HqErr_Op<"bad_body">;
def HqErr_DivergentOp : HqErr_Op<"divergent">;
def HqErr_CpuOnlyOp : HqErr_Op<"cpu_only">;
