//===- tdflow/ops/canonical.td - the standard canonicalizations -*- tablegen -*-===//
//
// The standard library's rewrite rules, in MLIR's DRR spelling (tdflow/Patterns.td). The
// `canonicalize` pass applies them (and `apply-patterns` applies them with every other loaded
// library's rules), greedily, to a fixpoint. Each rule keeps a program's results: the tests run
// programs before and after and compare. Ops with a rule here are rewritten by their rules
// only; the trait-driven rewrites (Involution, Idempotent) serve the ops without one.
//
// The two C++ predicates below are served by Python functions registered under the records'
// names (tdflow/dialect/patterns/std_natives.py), as a user's would be with @tdflow.native.
//
//===----------------------------------------------------------------------===//

#ifndef TDFLOW_OPS_CANONICAL_TD
#define TDFLOW_OPS_CANONICAL_TD

include "tdflow/Patterns.td"

// Two values of one type (shape and element type).
def TDF_SameType : Constraint<CPred<"$0.getType() == $1.getType()">, "values of the same type">;
// transpose(transpose(x, inner), outer) is x: outer's permutation undoes inner's.
def TDF_InversePerms : Constraint<CPred<"isInversePermutation($0, $1)">,
                                  "permutations that cancel">;

// negative(negative(x)) -> x (negative is an Involution; this rule is how it cancels).
def TDF_NegativeNegative : Pat<(TDF_NegativeOp (TDF_NegativeOp $x)), (replaceWithValue $x)>;

// reshape(reshape(x)) -> reshape(x): only the last shape matters.
def TDF_ReshapeReshape : Pat<(TDF_ReshapeOp (TDF_ReshapeOp $x, $inner), $shape),
                             (TDF_ReshapeOp $x, $shape)>;

// A reshape to the shape the tensor already has is the tensor.
def TDF_RedundantReshape : Pat<(TDF_ReshapeOp:$res $x, $shape), (replaceWithValue $x),
                               [(TDF_SameType $res, $x)]>;

// A cast to the element type the tensor already has is the tensor.
def TDF_RedundantCast : Pat<(TDF_CastOp:$res $x, $dtype, $pin_memory), (replaceWithValue $x),
                            [(TDF_SameType $res, $x)]>;

// Two transposes whose permutations cancel.
def TDF_TransposeTranspose : Pat<(TDF_TransposeOp (TDF_TransposeOp $x, $inner), $outer),
                                 (replaceWithValue $x), [(TDF_InversePerms $inner, $outer)]>;

// x * 1 -> x, the scalar given as a float (has_int_operand false) or as an integer.
def TDF_ScalarMulByOneF : Pat<(TDF_ScalarMulOp:$res $x, ConstBoolAttrFalse, $has_float, $i,
                                                  ConstantAttr<F64Attr, "1.0">),
                              (replaceWithValue $x), [(TDF_SameType $res, $x)]>;
def TDF_ScalarMulByOneI : Pat<(TDF_ScalarMulOp:$res $x, ConstBoolAttrTrue, $has_float,
                                                  ConstantAttr<SI64Attr, "1">, $f),
                              (replaceWithValue $x), [(TDF_SameType $res, $x)]>;

// x + 0 -> x for an integer scalar (a float 0.0 would turn -0.0 into +0.0, so it stays).
def TDF_ScalarAddZeroI : Pat<(TDF_ScalarAddOp:$res $x, ConstBoolAttrTrue, $has_float,
                                                 ConstantAttr<SI64Attr, "0">, $f),
                             (replaceWithValue $x), [(TDF_SameType $res, $x)]>;

// x * ones -> x, the constant on either side (a constant of 1.0 as floating_value).
def TDF_MulByOnes : Pat<(TDF_BroadcastMulOp:$res
                            (either $x, (TDF_ConstantOp $tick, ConstantAttr<F64Attr, "1.0">, $i,
                                                        ConstBoolAttrTrue, $dtype, $shape))),
                        (replaceWithValue $x), [(TDF_SameType $res, $x)]>;

// broadcast_like(constant, like) -> a constant of the result's type with the same fill value
// (`like` lends only its shape): a gradient seed of ones, folded with a mean's 1/n, reaches a
// loss gradient as a constant instead of a launch per step.
def TDF_ConstantOfType : NativeCodeCall<"constantOfType($0, $1)">;
def TDF_BroadcastLikeConstant : Pat<(TDF_BroadcastLikeOp:$res
                                        (TDF_ConstantOp:$c $tick, $f, $i, $isf, $dtype, $shape),
                                        $like, $axes),
                                    (TDF_ConstantOfType $c, $res)>;

#endif // TDFLOW_OPS_CANONICAL_TD
