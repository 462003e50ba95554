//===- tdflow/Base.td - the vocabulary of tdflow operator files -*- tablegen -*-===//
//
// Everything an operator file needs, self-contained (no MLIR install required), spelled the
// way MLIR's ODS (mlir/IR/OpBase.td) and OneFlow (OneFlow/OneFlowBase.td) spell it, so that
// definitions copied from either read naturally:
//
//   include "tdflow/Base.td"
//
//   def TDF_LeakyReluOp : TDF_Op<"leaky_relu", [NoMemoryEffect, Elementwise]> {
//     let summary = "leaky rectified linear unit";
//     let input = (ins TDF_Tensor:$x);
//     let output = (outs TDF_Tensor:$y);
//     let attrs = (ins DefaultValuedAttr<F32Attr, "0.">:$alpha);
//     let has_logical_tensor_desc_infer_fn = 1;
//     let has_data_type_infer_fn = 1;
//   }
//
// tdflow reads op records by shape: OneFlow's `input`/`output`/`attrs` dags, or MLIR's
// `arguments`/`results` (attributes inside `arguments`, recognised by deriving from `Attr`).
// Attribute kinds come from the base attribute's name (`F32Attr` -> f32, ...); defaults are
// C++ spellings (`"0."`, `"false"`, `"\"NCHW\""`), exactly as MLIR and OneFlow write them.
//
//===----------------------------------------------------------------------===//

#ifndef TDFLOW_BASE_TD
#define TDFLOW_BASE_TD

//===----------------------------------------------------------------------===//
// Predicates and constraints (MLIR: mlir/IR/Constraints.td)
//===----------------------------------------------------------------------===//

class Pred;

// A predicate written as C++ code; `$_self` stands for the checked entity. tdflow never runs
// it: checks with meaning in Python are implemented by traits and hooks.
class CPred<code pred> : Pred {
  code predExpr = "(" # pred # ")";
}

class CombinedPred<string kind, list<Pred> children> : Pred {
  string predKind = kind;
  list<Pred> predChildren = children;
}
class And<list<Pred> children> : CombinedPred<"and", children>;
class Or<list<Pred> children> : CombinedPred<"or", children>;
class Neg<Pred child> : CombinedPred<"not", [child]>;

def TruePred : CPred<"true">;

class Constraint<Pred pred, string desc = ""> {
  Pred predicate = pred;
  string summary = desc;
}

class TypeConstraint<Pred predicate, string summary = "",
                     string cppTypeParam = "::mlir::Type"> :
    Constraint<predicate, summary> {
  string cppType = cppTypeParam;
}

class AttrConstraint<Pred predicate, string summary = ""> :
    Constraint<predicate, summary>;

//===----------------------------------------------------------------------===//
// Types (MLIR: mlir/IR/CommonTypeConstraints.td)
//===----------------------------------------------------------------------===//

class Type<Pred condition, string descr = "", string cppType = "::mlir::Type"> :
    TypeConstraint<condition, descr, cppType> {
  string description = "";
  code builderCall = "";
}

def AnyType : Type<TruePred, "any type">;
def NoneType : Type<CPred<"::llvm::isa<::mlir::NoneType>($_self)">, "none type">;

// Element types. `tdfDtype` is the MLIR spelling tdflow uses in tensor types.
class ElementType<string dtype, int width, string descr> :
    Type<CPred<"$_self.isa<" # dtype # ">()">, descr> {
  string tdfDtype = dtype;
  int bitwidth = width;
}
def F16  : ElementType<"f16", 16, "16-bit float">;
def BF16 : ElementType<"bf16", 16, "bfloat16 type">;
def F32  : ElementType<"f32", 32, "32-bit float">;
def F64  : ElementType<"f64", 64, "64-bit float">;
def I1   : ElementType<"i1", 1, "1-bit signless integer">;
def I8   : ElementType<"i8", 8, "8-bit signless integer">;
def I16  : ElementType<"i16", 16, "16-bit signless integer">;
def I32  : ElementType<"i32", 32, "32-bit signless integer">;
def I64  : ElementType<"i64", 64, "64-bit signless integer">;
def SI32 : ElementType<"i32", 32, "32-bit signed integer">;
def SI64 : ElementType<"i64", 64, "64-bit signed integer">;
def UI8  : ElementType<"ui8", 8, "8-bit unsigned integer">;
def UI16 : ElementType<"ui16", 16, "16-bit unsigned integer">;
def UI32 : ElementType<"ui32", 32, "32-bit unsigned integer">;
def UI64 : ElementType<"ui64", 64, "64-bit unsigned integer">;

class AnyTypeOf<list<Type> allowed, string descr = ""> :
    Type<TruePred, descr> {
  list<Type> allowedTypes = allowed;
}
def AnyFloat : AnyTypeOf<[F16, BF16, F32, F64], "floating-point">;
// The integer element types tdflow has kernels for: dialect/element_types.py's INT_TYPES (a
// test checks that the two lists agree).
defvar TDF_IntTypes = [I8, I16, I32, I64, UI8, UI16, UI32, UI64];
def AnyInteger : AnyTypeOf<!listconcat([I1], TDF_IntTypes), "integer">;

// A tensor whose element type is one of `allowed` (`AnyType` allows every dtype).
class TensorOf<list<Type> allowed, string descr = "tensor"> :
    Type<CPred<"::llvm::isa<::mlir::TensorType>($_self)">, descr,
         "::mlir::TensorType"> {
  list<Type> allowedTypes = allowed;
}
def AnyTensor : TensorOf<[AnyType], "tensor of any type values">;

// Operand and result modifiers.
class Variadic<Type type> :
    TypeConstraint<type.predicate, "variadic of " # type.summary, type.cppType> {
  Type baseType = type;
  int minSize = 0;
}
class Optional<Type type> :
    TypeConstraint<type.predicate, type.summary, type.cppType> {
  Type baseType = type;
}

//===----------------------------------------------------------------------===//
// Attributes (MLIR: mlir/IR/CommonAttrConstraints.td). storageType is the backing
// mlir::Attribute, returnType the C++ value type the accessor returns.
//===----------------------------------------------------------------------===//

class Attr<Pred condition, string summary = ""> : AttrConstraint<condition, summary> {
  code storageType = ?;
  code returnType = ?;
  code convertFromStorage = "$_self.getValue()";
  string constBuilderCall = ?;
  string defaultValue = ?;     // C++ spelling: "0.", "1e-08", "false", "-1", "\"NCHW\""
  Type valueType = ?;
  bit isOptional = 0;
  Attr baseAttr = ?;           // set by the wrappers below to the attribute they wrap
  string cppNamespace = "";
  string description = "";
}

// An attribute that takes `val` (a C++ expression) when absent.
class DefaultValuedAttr<Attr attr, string val> : Attr<attr.predicate, attr.summary> {
  let storageType = attr.storageType;
  let returnType = attr.returnType;
  let convertFromStorage = attr.convertFromStorage;
  let constBuilderCall = attr.constBuilderCall;
  let defaultValue = val;
  let valueType = attr.valueType;
  let baseAttr = attr;
}

class DefaultValuedOptionalAttr<Attr attr, string val> : DefaultValuedAttr<attr, val> {
  let isOptional = 1;
}

// An attribute that may be absent; its accessor returns std::optional.
class OptionalAttr<Attr attr> : Attr<attr.predicate, attr.summary> {
  let storageType = attr.storageType;
  let returnType = "::std::optional<" # attr.returnType # ">";
  let convertFromStorage = "$_self ? " # returnType # "(" # attr.convertFromStorage #
                           ") : (::std::nullopt)";
  let valueType = attr.valueType;
  let isOptional = 1;
  let baseAttr = attr;
}

// A defaulted string attribute: the default is wrapped in escaped quotes for you.
class DefaultValuedStrAttr<Attr attr, string val> : DefaultValuedAttr<attr, "\"" # val # "\"">;

// An attribute whose value tdflow normalizes once (tdflow.dialect.attr_normalize): it wraps
// `attr`, whose kind, default and accessors it keeps (as MLIR's ConfinedAttr does), and says
// what the value is. Use the classes below.
class TDF_NormalizedAttr<Attr attr, string rule, string operand = "", int extra = 0,
                         int minimum = 0, string note = ""> : Attr<attr.predicate, attr.summary> {
  let storageType = attr.storageType;
  let returnType = attr.returnType;
  let convertFromStorage = attr.convertFromStorage;
  let constBuilderCall = attr.constBuilderCall;
  let defaultValue = attr.defaultValue;
  let valueType = attr.valueType;
  let isOptional = attr.isOptional;
  let baseAttr = attr;
  string normalizeAs = rule;       // "axis", "axes", "pair", "perm" or "dims"
  string normalizeOperand = operand;
  int normalizeExtra = extra;
  int normalizeMinimum = minimum;  // a pair's or dims' least entry; an axis's least rank
  string normalizeNote = note;     // said after a value below `minimum` (a hint)
}

// An axis of operand `operand`: in [-rank, rank) (`extra` widens it: expand_dims inserts at
// rank), made non-negative.
class TDF_AxisAttr<string operand, Attr attr, int extra = 0> :
    TDF_NormalizedAttr<attr, "axis", operand, extra>;
// A list of axes of operand `operand`, each made non-negative, none twice.
class TDF_AxesAttr<string operand, Attr attr> : TDF_NormalizedAttr<attr, "axes", operand>;
// One value per spatial dim of a 2-D window: two entries (an int k given from Python becomes
// [k, k]), each at least `minimum`.
class TDF_PairAttr<Attr attr, int minimum = 0> :
    TDF_NormalizedAttr<attr, "pair", "", 0, minimum>;
// An axis of operand `operand` where a scalar counts as one dim (numpy's cumsum of a 0-d
// array): in [-max(rank, 1), max(rank, 1)), made non-negative.
class TDF_ScanAxisAttr<string operand, Attr attr> :
    TDF_NormalizedAttr<attr, "axis", operand, 0, 1>;
// A permutation of operand `operand`'s dims: `rank` entries, each in [-rank, rank) made
// non-negative, together 0..rank-1.
class TDF_PermAttr<string operand, Attr attr> : TDF_NormalizedAttr<attr, "perm", operand>;
// One entry per dim of operand `operand`, each at least `minimum` (`note`: the hint a smaller
// entry gets).
class TDF_DimsAttr<string operand, Attr attr, int minimum = 0, string note = ""> :
    TDF_NormalizedAttr<attr, "dims", operand, 0, minimum, note>;

class TypedAttrBase<Type attrValType, string attrKind, Pred condition, string descr> :
    Attr<condition, descr> {
  let constBuilderCall = "$_builder.get" # attrKind # "(" # attrValType.builderCall # ", $0)";
  let storageType = "::mlir::" # attrKind;
  let valueType = attrValType;
}

def BoolAttr : Attr<CPred<"::llvm::isa<::mlir::BoolAttr>($_self)">, "bool attribute"> {
  let storageType = [{ ::mlir::BoolAttr }];
  let returnType = [{ bool }];
  let valueType = I1;
  let constBuilderCall = "$_builder.getBoolAttr($0)";
}

class TypedSignedIntegerAttrBase<Type attrValType, string retType, string descr> :
    TypedAttrBase<attrValType, "IntegerAttr",
                  CPred<"::llvm::isa<::mlir::IntegerAttr>($_self)">, descr> {
  let returnType = retType;
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}
def SI32Attr : TypedSignedIntegerAttrBase<SI32, "int32_t", "32-bit signed integer attribute">;
def SI64Attr : TypedSignedIntegerAttrBase<SI64, "int64_t", "64-bit signed integer attribute">;
def I32Attr : TypedSignedIntegerAttrBase<I32, "uint32_t", "32-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getZExtValue()";
}
def I64Attr : TypedSignedIntegerAttrBase<I64, "uint64_t", "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getZExtValue()";
}

class FloatAttrBase<Type attrValType, string descr> :
    TypedAttrBase<attrValType, "FloatAttr",
                  CPred<"::llvm::isa<::mlir::FloatAttr>($_self)">, descr> {
  let returnType = [{ ::llvm::APFloat }];
}
def F32Attr : FloatAttrBase<F32, "32-bit float attribute">;
def F64Attr : FloatAttrBase<F64, "64-bit float attribute">;

class StringBasedAttr<Pred condition, string descr> : Attr<condition, descr> {
  let constBuilderCall = "$_builder.getStringAttr($0)";
  let storageType = [{ ::mlir::StringAttr }];
  let returnType = [{ ::llvm::StringRef }];
  let valueType = NoneType;
}
def StrAttr : StringBasedAttr<CPred<"::llvm::isa<::mlir::StringAttr>($_self)">,
                              "string attribute">;

class ArrayAttrBase<Pred condition, string summary> : Attr<condition, summary> {
  let storageType = [{ ::mlir::ArrayAttr }];
  let returnType = [{ ::mlir::ArrayAttr }];
  let valueType = NoneType;
  let convertFromStorage = "$_self";
  let constBuilderCall = "$_builder.getArrayAttr($0)";
}
// An array whose elements are all `element` attributes.
class TypedArrayAttrBase<Attr element, string summary> :
    ArrayAttrBase<CPred<"::llvm::isa<::mlir::ArrayAttr>($_self)">, summary> {
  Attr elementAttr = element;
}
def BoolArrayAttr : TypedArrayAttrBase<BoolAttr, "1-bit boolean array attribute">;
def I32ArrayAttr : TypedArrayAttrBase<I32Attr, "32-bit integer array attribute">;
def I64ArrayAttr : TypedArrayAttrBase<I64Attr, "64-bit integer array attribute">;
def SI32ArrayAttr : TypedArrayAttrBase<SI32Attr, "signed 32-bit integer array attribute">;
def SI64ArrayAttr : TypedArrayAttrBase<SI64Attr, "signed 64-bit integer array attribute">;
def F32ArrayAttr : TypedArrayAttrBase<F32Attr, "32-bit float array attribute">;
def F64ArrayAttr : TypedArrayAttrBase<F64Attr, "64-bit float array attribute">;
def StrArrayAttr : TypedArrayAttrBase<StrAttr, "string array attribute">;
// A tensor shape (OneFlow: a list of signed 64-bit dims).
def ShapeAttr : TypedArrayAttrBase<SI64Attr, "shape attribute"> {
  let returnType = [{ ::oneflow::Shape }];
}

// A tensor element type (OneFlow's DataType enum), written as a type in programs: `f16`, `i64`.
class DataTypeAttrBase<string descr> :
    Attr<CPred<"::llvm::isa<::mlir::TypeAttr>($_self)">, descr> {
  let storageType = [{ ::mlir::TypeAttr }];
  let returnType = [{ ::oneflow::DataType }];
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall = "::mlir::TypeAttr::get($0)";
}
def OneFlow_DataType : DataTypeAttrBase<"data type attribute">;
def TDF_DataTypeAttr : DataTypeAttrBase<"data type attribute">;
def DTArrayAttr : TypedArrayAttrBase<OneFlow_DataType, "data type array attribute">;
def ShapeArrayAttr : TypedArrayAttrBase<ShapeAttr, "shape array attribute">;

// A name present without a value (`{fused}`); tdflow keeps it as an attribute of kind `other`.
def UnitAttr : Attr<CPred<"::llvm::isa<::mlir::UnitAttr>($_self)">, "unit attribute"> {
  let storageType = [{ ::mlir::UnitAttr }];
  let returnType = [{ bool }];
  let constBuilderCall = "(($0) ? $_builder.getUnitAttr() : nullptr)";
}
// A constant tensor (`dense<[1, 2]> : tensor<2xi64>`, `dense_resource<w> : tensor<...>`);
// tdflow keeps it as an attribute of kind `other`, the IR object itself.
def ElementsAttr : Attr<CPred<"::llvm::isa<::mlir::ElementsAttr>($_self)">,
                        "constant vector/tensor attribute"> {
  let storageType = [{ ::mlir::ElementsAttr }];
  let returnType = [{ ::mlir::ElementsAttr }];
  let convertFromStorage = "$_self";
}
// Dense i32 elements, as OneFlow's `operand_segment_sizes` are spelled.
def I32ElementsAttr : Attr<CPred<"::llvm::isa<::mlir::DenseIntElementsAttr>($_self)">,
                           "32-bit integer elements attribute"> {
  let storageType = [{ ::mlir::DenseIntElementsAttr }];
  let returnType = [{ ::mlir::DenseIntElementsAttr }];
}

//===----------------------------------------------------------------------===//
// Traits (MLIR: mlir/IR/Traits.td, OpBase.td)
//===----------------------------------------------------------------------===//

class Trait;

class NativeTrait<string name, string entityType> : Trait {
  string trait = name;
  string cppNamespace = "::mlir::" # entityType # "Trait";
}

class NativeOpTrait<string name, list<Trait> traits = []> : NativeTrait<name, "Op"> {
  list<Trait> dependentTraits = traits;
}

// A trait with template parameters: `ParamNativeOpTrait<"HasParent", "FuncOp">`.
class ParamNativeOpTrait<string prop, string params, list<Trait> traits = []> :
    NativeOpTrait<prop # "<" # params # ">::Impl", traits>;

// A named group of traits, expanded where it is used (`Pure`).
class TraitList<list<Trait> props> : Trait {
  list<Trait> traits = props;
}

// Interfaces, so that `DeclareOpInterfaceMethods<UserOpCompatibleInterface>` reads as in OneFlow.
class OpInterface<string name> : Trait {
  string cppInterfaceName = name;
  string trait = name # "::Trait";
}
class DeclareOpInterfaceMethods<OpInterface interface, list<string> overridenMethods = []> :
    OpInterface<interface.cppInterfaceName> {
  list<string> alwaysOverriddenMethods = overridenMethods;
}
def UserOpCompatibleInterface : OpInterface<"UserOpCompatible">;
def InferTypeOpInterface : OpInterface<"InferTypeOpInterface">;

// The traits tdflow gives meaning to.
def NoMemoryEffect : NativeOpTrait<"NoMemoryEffect">;          // safe to DCE and CSE
def NoSideEffect : NativeOpTrait<"NoSideEffect">;              // older MLIR spelling, same meaning
def AlwaysSpeculatable : NativeOpTrait<"AlwaysSpeculatableImplTrait">;
def Pure : TraitList<[AlwaysSpeculatable, NoMemoryEffect]>;
def NoGrad : NativeOpTrait<"NoGrad">;                          // no gradient rule, none needed
def CpuOnly : NativeOpTrait<"CpuOnly">;                        // runs on the CPU device only
def SupportNonContiguous : NativeOpTrait<"SupportNonContiguous">;
def SameOperandsAndResultType : NativeOpTrait<"SameOperandsAndResultType">;
def SameOperandsAndResultShape : NativeOpTrait<"SameOperandsAndResultShape">;
def SameOperandsAndResultElementType : NativeOpTrait<"SameOperandsAndResultElementType">;
def SameOperandsElementType : NativeOpTrait<"SameOperandsElementType">;  // operands' dtypes equal
def SameOperandsShape : NativeOpTrait<"SameOperandsShape">;    // operands' shapes equal (no broadcast)
def AttrSizedOperandSegments : NativeOpTrait<"AttrSizedOperandSegments">;
def AttrSizedResultSegments : NativeOpTrait<"AttrSizedResultSegments">;
def Elementwise : NativeOpTrait<"Elementwise">;                // fusable, maps element to element
def Idempotent : NativeOpTrait<"IsIdempotent">;                // f(f(x)) == f(x)
def Involution : NativeOpTrait<"IsInvolution">;                // f(f(x)) == x
// An op the lowering passes create, not one users call: programs may carry it (printed IR
// parses back and verifies), but it has no function in the functional API.
def LoweringOnly : NativeOpTrait<"LoweringOnly">;
// An op of an imported dialect (onnx.*) that is lowered onto standard ops before any pass runs,
// autodiff included: its gradient is the gradient of its lowering, so it needs none of its own.
def LoweredFirst : NativeOpTrait<"LoweredFirst">;
def Commutative : NativeOpTrait<"IsCommutative">;

//===----------------------------------------------------------------------===//
// Dialects and ops (MLIR: mlir/IR/DialectBase.td, OpBase.td)
//===----------------------------------------------------------------------===//

class Dialect {
  string name = ?;
  string summary = ?;
  code description = ?;
  string cppNamespace = name;
  list<string> dependentDialects = [];
}

// Dag operators of operand, result, region and successor lists.
def ins;
def outs;
def region;
def successor;

class Op<Dialect dialect, string mnemonic, list<Trait> props = []> {
  Dialect opDialect = dialect;
  string opName = mnemonic;
  string cppNamespace = dialect.cppNamespace;
  string summary = "";
  code description = "";
  dag arguments = (ins);
  dag results = (outs);
  dag regions = (region);
  dag successors = (successor);
  list<Trait> traits = props;
  string assemblyFormat = ?;
  bit hasVerifier = 0;
  bit hasFolder = 0;
  bit hasCanonicalizer = 0;
  // tdflow's single-source fields (parsed by tdflow's own grammars, never run as code):
  // `formula`, an Elementwise op's scalar math (`[{ x > 0 ? x : x * alpha }]`, or
  // `[{ y = ...; mask = ...; }]` for several results), from which its kernels, fusion and
  // default inference are derived; `signature`, its functional API in OneFlow's
  // functional_api.yaml syntax, one signature per line, first match wins
  // (`[{ Tensor (Tensor x, Float alpha=0.0) }]`); `grad`, its gradient.
  code formula = ?;
  code signature = ?;
  code grad = ?;
}

//===----------------------------------------------------------------------===//
// The tdflow dialect, with OneFlow's op conventions
//===----------------------------------------------------------------------===//

def TDF_Dialect : Dialect {
  let name = "tdflow";
  let summary = "Tensor operators defined in TableGen, in OneFlow's vocabulary.";
  let description = [{
    Ops take and return ranked or unranked tensors (`tensor<4x?xf32>`, `tensor<*xf32>`).
    Each op's shape, dtype and attribute rules are Python hooks declared by its
    `has_*_fn` bits.
  }];
  let cppNamespace = "::tdflow";
}

// Any tensor (OneFlow: `OneFlow_Tensor : TensorOf<[AnyType]>`).
def TDF_Tensor : TensorOf<[AnyType], "tensor of any type values">;
def OneFlow_Tensor : TensorOf<[AnyType], "tensor of any type values">;
def TDF_FloatTensor : TensorOf<[F16, BF16, F32, F64], "tensor of floating-point values">;
def TDF_IntTensor : TensorOf<TDF_IntTypes, "tensor of integer values">;
// A mask: bool or any number type (dropout_grad's `mask` need not have `dy`'s type).
def TDF_MaskTensor : TensorOf<!listconcat([I1], TDF_IntTypes, [F16, BF16, F32, F64]),
                              "mask tensor (bool or any number type)">;

// The base of every tdflow op. Operands, results and attributes are declared in OneFlow's
// `input`, `output` and `attrs` dags (MLIR's `arguments`/`results` are derived from them);
// each `has_*_fn` bit declares a Python hook the op provides (see tdflow.dialect.hooks), and
// loading the dialect checks that every declared hook exists and no undeclared one does.
class TDF_Op<string mnemonic, list<Trait> traits = []> : Op<TDF_Dialect, mnemonic, traits> {
  dag input = (ins);
  dag output = (outs);
  dag attrs = (ins);
  dag ctrl_input = (ins);
  dag ctrl_output = (outs);
  // OneFlow's other argument groups, accepted so its definitions paste unchanged; tdflow reads
  // operands from `input`, results from `output` and attributes from `attrs` only.
  dag op_conf_attrs = (ins);
  dag trait_attrs = (ins);
  dag user_op_attrs = (ins);
  let arguments = !con(input, attrs);
  let results = output;
  int same_output_regst_num = -1;

  bit has_check_fn = 0;
  bit has_logical_tensor_desc_infer_fn = 0;
  bit has_physical_tensor_desc_infer_fn = 0;
  bit has_get_sbp_fn = 0;
  bit has_sbp_signature_infer_fn = 0;
  bit has_data_type_infer_fn = 0;
  bit has_device_and_stream_infer_fn = 0;
  bit has_input_arg_modify_fn = 0;
  bit has_output_arg_modify_fn = 0;
  bit has_output_blob_time_shape_infer_fn = 0;
  bit has_nd_sbp_infer_fn = 0;
  bit has_compute_complexity_fn = 0;
  bit has_get_nd_sbp_fn = 0;
  bit has_enumerate_nd_sbp_signatures_fn = 0;
  bit has_dump_nd_sbp_signature_for_op_conf_fn = 0;
}

// A standard op whose shape, dtype and SBP rules are Python hooks: OneFlow's four user-op
// hooks (logical and physical tensor desc, SBP signatures, data type) declared once here.
// Other hooks (has_check_fn, has_input_arg_modify_fn, ...) the record declares itself.
class TDF_HookedOp<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits> {
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

// An `Elementwise` op with a `formula`: the formula gives its shapes (numpy's broadcast), its
// dtype (what the formula computes) and its SBP signatures (a split of every axis; partial
// sums where it is linear), so it declares none of those four hooks. What a formula cannot say
// the record says with traits (SameOperandsElementType, SameOperandsShape) or with a hook it
// declares itself (has_check_fn, ...).
class TDF_FormulaOp<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits>;

// OneFlow's name for the same base, so definitions pasted from OneFlowUserOps.td load as is.
class OneFlow_BaseOp<string mnemonic, list<Trait> traits = []> : TDF_Op<mnemonic, traits>;

#endif // TDFLOW_BASE_TD
