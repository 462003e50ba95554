// A class instance in a parent class's field whose arguments become known when llvm-tblgen
// parses the multiclass (AMDGPU's getMTBUFAsmOps<addrKindCopy>) or expands a loop of its body
// (RISCV's GetVRegNoV0<vreg>): made at the multiclass definition, before later defs.
class Info<int n> { int v = n; }
class Kind<int k, int copy = k> { int f = Info<copy>.v; string s = "x"; }
class Reg<int r> { int w = Info<!add(r, 100)>.v; }
multiclass Loads<string op> {
  def _A : Kind<1>;
  def _B : Kind<2>;
  foreach r = [5, 6] in
    def _R # r : Reg<r>;
}
def before : Kind<3>;
defm load : Loads<"ld">;
defm store : Loads<"st">;
