// Class instances whose arguments llvm-tblgen only knows when it resolves a prototype (they
// name a loop iterator or a multiclass argument) are made in the order of the record's fields,
// not the order the arguments are written (RISCV's SubRegSet<n, m>, X86's X86VectorVTInfo).
class Idx<int n> { int i = n; }
class Lst<int n> { int l = n; }
class Tuple<int indices, int regs> { int SubRegs = regs; int SubRegIndices = indices; }
foreach m = [1, 2] in
  foreach n = [3, 4] in
    def T # m # n : Tuple<Idx<!mul(m, n)>.i, Lst<!add(m, n)>.l>;
class VT<int n, string e> { int num = n; string elt = e; }
class Pair<VT a, VT b> { string second = b.elt; string first = a.elt; }
multiclass ForSize<VT from, VT to> { def rr : Pair<from, to>; }
multiclass ForType<string e> {
  defm x4 : ForSize<VT<4, e>, VT<8, e>>;
  defm x8 : ForSize<VT<8, e>, VT<16, e>>;
}
defm F : ForType<"f32">;
