//===- tdflow/Patterns.td - declarative rewrite rules (DRR) ----*- tablegen -*-===//
//
// The vocabulary of rewrite patterns, spelled as MLIR's mlir/IR/PatternBase.td spells it, so
// a pattern file written for mlir-tblgen reads unchanged once its includes name tdflow's:
//
//   include "tdflow/Patterns.td"
//   include "tdflow/ops.td"          // the standard ops (or your own op library)
//   def : Pat<(TDF_ReluOp (TDF_ReluOp $x)), (TDF_ReluOp $x)>;
//
// A source pattern is a dag of ops whose leaves bind values (`$x`), check constraints
// (`F32Attr:$a`, `AnyTensor:$t`) or match constants (`ConstantAttr<F32Attr, "1.0">`); a result
// pattern builds the replacement. C++ snippets (CPred, NativeCodeCall) are never run: tdflow
// checks the constraints it knows itself and calls a Python function registered under the
// record's name for the others (`@tdflow.native("SameType")`).
//
// Pred, CPred and Constraint come from tdflow/Base.td (MLIR's mlir/IR/Constraints.td).
//
//===----------------------------------------------------------------------===//

#ifndef TDFLOW_PATTERNS_TD
#define TDFLOW_PATTERNS_TD

include "tdflow/Base.td"

//===----------------------------------------------------------------------===//
// Constant attributes (MLIR: mlir/IR/CommonAttrConstraints.td)
//===----------------------------------------------------------------------===//

// An attribute of kind `attribute` equal to `val` (its .td spelling: "1.0", "true", "\"NCHW\"").
// In a source pattern it matches that constant; in a result pattern it builds it.
class ConstantAttr<Attr attribute, string val> : AttrConstraint<
    CPred<"$_self == " # !subst("$0", val, attribute.constBuilderCall)>,
    "constant attribute " # val> {
  Attr attr = attribute;
  string value = val;
}

class ConstF32Attr<string val> : ConstantAttr<F32Attr, val>;
def ConstBoolAttrFalse : ConstantAttr<BoolAttr, "false">;
def ConstBoolAttrTrue : ConstantAttr<BoolAttr, "true">;
def ConstUnitAttr : ConstantAttr<UnitAttr, "true">;

// A constant string attribute: the value is wrapped in escaped quotes for you.
class ConstantStrAttr<Attr attribute, string val>
    : ConstantAttr<attribute, "\"" # val # "\"">;

//===----------------------------------------------------------------------===//
// Patterns (MLIR: mlir/IR/PatternBase.td)
//===----------------------------------------------------------------------===//

// The marker of a pattern's added benefit: `(addBenefit 2)`. A pattern's benefit is the number
// of ops in its source pattern plus this; higher benefits are tried first.
def addBenefit;

// Rewrite `source` into `results`: the last results replace the source root's results (the
// ones before them build auxiliary ops). `preds` are extra constraints over bound names,
// `(TypesAreIdentical $a, $b)`; `supplemental_results` are built alongside the replacement.
class Pattern<dag source, list<dag> results, list<dag> preds = [],
  list<dag> supplemental_results = [],
  dag benefitAdded = (addBenefit 0)> {
  dag sourcePattern = source;
  list<dag> resultPatterns = results;
  list<dag> constraints = preds;
  list<dag> supplementalPatterns = supplemental_results;
  dag benefitDelta = benefitAdded;
}

// The common case of one result pattern.
class Pat<dag pattern, dag result, list<dag> preds = [],
  list<dag> supplemental_results = [],
  dag benefitAdded = (addBenefit 0)> :
  Pattern<pattern, [result], preds, supplemental_results, benefitAdded>;

// A call to native code, as a leaf matcher or a value builder: `expr` is C++ for mlir-tblgen;
// tdflow calls the Python function registered under the record's name instead. `$0`, `$1`, ...
// are the dag's arguments; `returns` is how many values it produces.
class NativeCodeCall<string expr, int returns = 1> {
  string expression = expr;
  int numReturns = returns;
}

class NativeCodeCallVoid<string expr> : NativeCodeCall<expr, 0>;

// Matches an op that folds to a constant, binding the constant attribute to `$0`.
def ConstantLikeMatcher : NativeCodeCall<"::mlir::success("
    "::mlir::matchPattern($_self->getResult(0), ::mlir::m_Constant(&$0)))">;

//===----------------------------------------------------------------------===//
// Directives
//===----------------------------------------------------------------------===//

// (replaceWithValue $x): replace the root's result with an already bound value.
def replaceWithValue;
// (location $a, ...): the location of a built op (a bound op's, or a fused one).
def location;
// (returnType $x, "type"): the result types of a built op, taken from values or natives.
def returnType;
// (either $a, $b): match two operands in either order.
def either;
// (variadic $a, $b): the values of one variadic operand.
def variadic;

// The bound value has no uses.
def HasNoUseOf: Constraint<
    CPred<"$_self.use_empty()">, "has no use">;

#endif // TDFLOW_PATTERNS_TD
