//===- tdflow/ops.td - the standard op library, by include ----*- tablegen -*-===//
//
// `include "tdflow/ops.td"` gives a file (a pattern file, a library extending the standard
// ops) every standard op. The library itself lives next to the package (tdflow/ops.td, the
// repository's ops.td): this file pulls it in by a path relative to itself, which holds both
// in a checkout (dialect/include/tdflow -> ops.td at the root) and in the installed package
// (tdflow/dialect/include/tdflow -> tdflow/ops.td). A context that loads such a file next to
// the standard library keeps one copy of each op (the same definition read twice).
//
//===----------------------------------------------------------------------===//

#ifndef TDFLOW_OPS_TD
#define TDFLOW_OPS_TD

include "../../../ops.td"

#endif // TDFLOW_OPS_TD
