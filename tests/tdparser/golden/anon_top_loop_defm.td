// A defm in a top-level foreach: llvm-tblgen resolves and adds its records one by one, so the
// instances a record's final resolution makes come before the next record's (IntrinsicsAMDGPU's
// TypeInfoGen after each image intrinsic's profile).
class Prof<int d> { int dim = d; }
class Gen<int a> { int g = a; }
class Intr<Prof p> { Prof P = p; int t = Gen<!mul(P.dim, 10)>.g; }
multiclass Dims<int base> {
  foreach d = [1, 2, 3] in
    def _D # d : Intr<Prof<!add(base, d)>>;
}
foreach s = [10, 20] in
  defm img # s : Dims<s>;
if 1 then
  defm one : Dims<30>;
