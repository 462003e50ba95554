//===- ops.td - the standard tdflow op library -----------------*- tablegen -*-===//
//
// OneFlow's own definitions (OneFlowUserOps.td) of the starter ops: same names, operands,
// attributes, defaults, traits and `has_*_fn` flags. tdflow adds `Elementwise` where an op maps
// elements to elements (fusion relies on it) and drops MLIR interface boilerplate.
//
// Every op carries the four hooks OneFlow requires of user ops (logical and physical tensor
// desc inference, data type inference, SBP signatures); extra flags declare extra hooks. The
// Python hooks live in tdflow/dialect/hooks/ (see `tdflow verify` for the contract check).
//
// Examples in descriptions use MLIR's generic op syntax, as `tdflow opt` prints it.
//
//===----------------------------------------------------------------------===//

include "tdflow/Base.td"

// One file per op family; the family's name also names its hooks, CPU kernels and CUDA
// generators modules (dialect/hooks/<family>.py, runtime/kernels/<family>.py,
// lowering/cuda/<family>.py).

include "tdflow/ops/elementwise.td"   // arithmetic, comparison, logic, bitwise; broadcast and scalar forms
include "tdflow/ops/math.td"          // unary math functions, activations and their gradients
include "tdflow/ops/reduce.td"        // reduce_*, argmax, top_k, cumsum, cumprod
include "tdflow/ops/softmax.td"       // softmax, log_softmax and the cross-entropy losses
include "tdflow/ops/norm.td"          // layer_norm, normalization (batch norm), group_norm
include "tdflow/ops/linalg.td"        // matmul, batch_matmul
include "tdflow/ops/conv.td"          // conv2d and its gradients
include "tdflow/ops/pool.td"          // max, average and adaptive pooling
include "tdflow/ops/shape.td"         // reshape, transpose, cast, cat, expand, squeeze, constants
include "tdflow/ops/slice.td"         // slice, narrow, pad, tril, triu
include "tdflow/ops/index.td"         // gather/scatter, embedding, one_hot
include "tdflow/ops/random.td"        // dropout
include "tdflow/ops/optim.td"         // sgd_update, adam_update
include "tdflow/ops/boxing.td"        // SBP boxing: all_reduce, reduce_scatter, all_gather, all_to_all, ...
include "tdflow/ops/canonical.td"     // the standard rewrite rules (canonicalize), last
