//===- tdflow/ops/norm.td - standard ops (part of ops.td) ------*- tablegen -*-===//
//
// Included by ops.td; the records follow ops.td's conventions.
//
//===----------------------------------------------------------------------===//
