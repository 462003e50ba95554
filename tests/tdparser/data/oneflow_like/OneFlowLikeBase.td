// A small, self-contained base in the style of OneFlow's OneFlowBase.td on top of MLIR's
// OpBase.td: just enough ODS vocabulary (dialect, traits, type and attribute constraints, dags)
// for OneFlowLikeUserOps.td to be written the way OneFlow writes its user ops. Written for
// tdflow's differential tests; it includes nothing.

#ifndef ONEFLOW_LIKE_BASE
#define ONEFLOW_LIKE_BASE

//===----------------------------------------------------------------------===//
// ODS core (a trimmed OpBase.td)
//===----------------------------------------------------------------------===//

def ins;
def outs;

class Pred;
class CPred<code pred> : Pred { code predExpr = "(" # pred # ")"; }
class CombinedPred<string kind, list<Pred> children> : Pred {
  string combiner = kind;
  list<Pred> predicates = children;
}
class And<list<Pred> children> : CombinedPred<"and", children>;
class Or<list<Pred> children> : CombinedPred<"or", children>;

class Constraint<Pred pred, string desc = ""> {
  Pred predicate = pred;
  string summary = desc;
}

class Trait;
class NativeTrait<string name> : Trait { string trait = name; }
class PredTrait<string desc, Pred pred> : Trait {
  string summary = desc;
  Pred predicate = pred;
}
class InterfaceTrait<string name> : NativeTrait<name>;
class DeclareOpInterfaceMethods<InterfaceTrait iface, list<string> overridden = []>
    : InterfaceTrait<iface.trait> {
  list<string> alwaysOverriddenMethods = overridden;
}

def NoMemoryEffect : NativeTrait<"NoMemoryEffect">;
def Pure : NativeTrait<"Pure">;
def SameOperandsAndResultType : NativeTrait<"SameOperandsAndResultType">;
def AttrSizedOperandSegments : NativeTrait<"AttrSizedOperandSegments">;
def AttrSizedResultSegments : NativeTrait<"AttrSizedResultSegments">;
def UserOpCompatibleInterface : InterfaceTrait<"UserOpCompatible">;
def AlternativeOpTypeNameInterface : InterfaceTrait<"AlternativeOpTypeName">;
def NCHWCompatibleInterface : InterfaceTrait<"NCHWCompatible">;

class TypeConstraint<Pred pred, string desc = "", string cppClass = "::mlir::Type">
    : Constraint<pred, desc> {
  string cppType = cppClass;
}
class Type<Pred pred, string desc = "", string cppClass = "::mlir::Type">
    : TypeConstraint<pred, desc, cppClass> {
  string builderCall = "";
}
def AnyType : Type<CPred<"true">, "any type">;

class Variadic<Type type> : TypeConstraint<type.predicate, "variadic of " # type.summary,
                                           type.cppType> {
  Type baseType = type;
  int minSize = 0;
}
class Optional<Type type> : TypeConstraint<type.predicate, "optional " # type.summary,
                                           type.cppType> {
  Type baseType = type;
}

class AttrConstraint<Pred pred, string desc = ""> : Constraint<pred, desc>;
class Attr<Pred condition, string descr = ""> : AttrConstraint<condition, descr> {
  code storageType = ?;
  code returnType = ?;
  code convertFromStorage = "$_self.getValue()";
  string constBuilderCall = ?;
  string defaultValue = ?;
  string valueType = ?;
  bit isOptional = 0;
  Attr baseAttr = ?;
}
class DefaultValuedAttr<Attr attr, string val> : Attr<attr.predicate, attr.summary> {
  let storageType = attr.storageType;
  let returnType = attr.returnType;
  let convertFromStorage = attr.convertFromStorage;
  let constBuilderCall = attr.constBuilderCall;
  let defaultValue = val;
  let valueType = attr.valueType;
  let baseAttr = attr;
}
class OptionalAttr<Attr attr> : Attr<attr.predicate, attr.summary> {
  let storageType = attr.storageType;
  let returnType = "::std::optional<" # attr.returnType # ">";
  let convertFromStorage = "$_self ? " # returnType # "(" # attr.convertFromStorage #
                           ") : (::std::nullopt)";
  let isOptional = 1;
  let baseAttr = attr;
}

class TypedAttrBase<string bitwidthKind, string attrKind, Pred condition, string descr>
    : Attr<condition, descr> {
  let valueType = bitwidthKind;
  let storageType = "::mlir::" # attrKind;
}
class SignlessIntegerAttrBase<int width, string descr>
    : TypedAttrBase<"I" # width, "IntegerAttr",
        CPred<"::llvm::isa<::mlir::IntegerAttr>($_self) && ::llvm::cast<::mlir::IntegerAttr>"
              "($_self).getType().isSignlessInteger(" # width # ")">, descr> {
  let returnType = !cond(!eq(width, 1): "bool", !le(width, 32): "uint32_t",
                         true: "uint64_t");
  let constBuilderCall = "$_builder.getIntegerAttr($_builder.getIntegerType(" # width #
                         "), $0)";
}
class SignedIntegerAttrBase<int width, string descr>
    : TypedAttrBase<"SI" # width, "IntegerAttr",
        CPred<"::llvm::cast<::mlir::IntegerAttr>($_self).getType().isSignedInteger(" #
              width # ")">, descr> {
  let returnType = !if(!gt(width, 32), "int64_t", "int32_t");
}
class FloatAttrBase<string kind, string descr>
    : TypedAttrBase<kind, "FloatAttr", CPred<"::llvm::isa<::mlir::FloatAttr>($_self)">, descr> {
  let returnType = "::llvm::APFloat";
}

def BoolAttr : TypedAttrBase<"I1", "BoolAttr", CPred<"::llvm::isa<::mlir::BoolAttr>($_self)">,
                             "bool attribute"> {
  let returnType = [{ bool }];
  let constBuilderCall = "$_builder.getBoolAttr($0)";
}
def SI32Attr : SignedIntegerAttrBase<32, "32-bit signed integer attribute">;
def SI64Attr : SignedIntegerAttrBase<64, "64-bit signed integer attribute">;
def I64Attr : SignlessIntegerAttrBase<64, "64-bit signless integer attribute">;
def F32Attr : FloatAttrBase<"F32", "32-bit float attribute">;
def F64Attr : FloatAttrBase<"F64", "64-bit float attribute">;
def StrAttr : Attr<CPred<"::llvm::isa<::mlir::StringAttr>($_self)">, "string attribute"> {
  let storageType = [{ ::mlir::StringAttr }];
  let returnType = [{ ::llvm::StringRef }];
  let valueType = "none";
  let constBuilderCall = "$_builder.getStringAttr($0)";
}
class TypedArrayAttrBase<Attr element, string summary>
    : Attr<And<[CPred<"::llvm::isa<::mlir::ArrayAttr>($_self)">, element.predicate]>,
           summary> {
  let storageType = [{ ::mlir::ArrayAttr }];
  let returnType = [{ ::mlir::ArrayAttr }];
  Attr elementAttr = element;
}
def SI32ArrayAttr : TypedArrayAttrBase<SI32Attr, "32-bit signed integer array attribute">;
def SI64ArrayAttr : TypedArrayAttrBase<SI64Attr, "64-bit signed integer array attribute">;
def F32ArrayAttr : TypedArrayAttrBase<F32Attr, "32-bit float array attribute">;
def StrArrayAttr : TypedArrayAttrBase<StrAttr, "string array attribute">;

//===----------------------------------------------------------------------===//
// The dialect and its op base classes
//===----------------------------------------------------------------------===//

class Dialect {
  string name = ?;
  string cppNamespace = ?;
  string summary = ?;
  code description = ?;
  list<string> dependentDialects = [];
  bit usePropertiesForAttributes = 1;
}

def OneFlow_Dialect : Dialect {
  let name = "oneflow";
  let summary = "A OneFlow-like dialect for tdflow's tests";
  let cppNamespace = "::mlir::oneflow";
  let dependentDialects = ["func::FuncDialect"];
}

class Op<Dialect dialect, string mnemonic, list<Trait> props = []> {
  Dialect opDialect = dialect;
  string opName = mnemonic;
  string cppNamespace = dialect.cppNamespace;
  string summary = "";
  code description = "";
  dag arguments = (ins);
  dag results = (outs);
  dag regions = (ins);
  string assemblyFormat = ?;
  bit hasVerifier = 0;
  bit hasCanonicalizer = 0;
  bit hasFolder = 0;
  list<Trait> traits = props;
}

def OneFlow_Tensor : Type<CPred<"::llvm::isa<::mlir::TensorType>($_self)">, "a tensor">;
def OneFlow_TensorBuffer : Type<CPred<"::llvm::isa<::mlir::TensorType>($_self) && "
                                      "isTensorBuffer($_self)">, "a tensor of tensor buffers">;

def OneFlow_IsOpConfCompatible : NativeTrait<"IsOpConfCompatible">;
def OneFlow_IsImportCompatible : NativeTrait<"IsImportCompatible">;

// Every op: its own traits, then the ones every OneFlow op has.
class OneFlow_BaseOp<string mnemonic, list<Trait> traits = []>
    : Op<OneFlow_Dialect, mnemonic,
         !listconcat(traits, [OneFlow_IsOpConfCompatible, OneFlow_IsImportCompatible])> {
  dag op_conf = (ins StrAttr:$op_name, StrAttr:$device_tag, StrArrayAttr:$device_name,
                     OptionalAttr<I64Attr>:$scope_symbol_id,
                     OptionalAttr<SI64ArrayAttr>:$hierarchy);
  dag input = (ins);
  dag output = (outs);
  dag ctrl_input = (ins);
  dag ctrl_output = (outs);
  dag attrs = (ins);
  dag trait_attrs = (ins);
  dag user_op_conf = (ins StrArrayAttr:$input_sizes, StrArrayAttr:$output_sizes);
  let arguments = !con(input, !con(ctrl_input, !con(op_conf, !con(attrs, user_op_conf))));
  let results = !con(output, ctrl_output);

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
  bit has_dump_nd_sbp_signature_for_op_conf_fn = 0;
}

// The common case: every shape/type/sbp hook declared.
class OneFlow_InferredOp<string mnemonic, list<Trait> traits = []>
    : OneFlow_BaseOp<mnemonic, !listconcat([DeclareOpInterfaceMethods<UserOpCompatibleInterface>],
                                           traits)> {
  let has_logical_tensor_desc_infer_fn = 1;
  let has_physical_tensor_desc_infer_fn = 1;
  let has_get_sbp_fn = 1;
  let has_data_type_infer_fn = 1;
}

class OneFlow_UnaryBaseOp<string mnemonic, list<Trait> traits = []>
    : OneFlow_InferredOp<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let summary = "elementwise " # mnemonic;
  let input = (ins OneFlow_Tensor:$x);
  let output = (outs OneFlow_Tensor:$y);
}

// Ops whose gradient is a separate op taking the forward input and the output gradient.
class OneFlow_GradOp<string forward, list<Trait> traits = []>
    : OneFlow_InferredOp<forward # "_grad", traits> {
  let summary = "gradient of " # forward;
  let input = (ins OneFlow_Tensor:$x, OneFlow_Tensor:$dy);
  let output = (outs OneFlow_Tensor:$dx);
}

#endif // ONEFLOW_LIKE_BASE
