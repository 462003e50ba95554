// llvm-tblgen parses a multiclass body when it is defined: class instances whose arguments are
// known then (Operand<32>, both arms of an if, a loop over a literal list per element) are made
// there, in source order between the anonymous defs it names, not at the first defm.
class Operand<int t> { int T = t; }
class Pat<Operand o, string n> { Operand op = o; string nm = n; }
class Ps<string n, Operand o> { string nm = n; Operand op = o; }
def i32v { int x = 0; }
multiclass M<int w, Operand dflt = Operand<7>> {
  defvar unused = dflt;
  def _B : Ps<NAME # _B, Operand<32>>;
  def : Pat<Operand<w>, NAME>;
  def : Pat<Operand<16>, NAME>;
  if !eq(w, 1) then { def _one : Ps<NAME, Operand<99>>; } else { def _other : Ps<NAME, Operand<98>>; }
  foreach i = [1, 2] in def _L # i : Ps<NAME, Operand<!add(i, 40)>>;
  def _C : Ps<NAME, Operand<!if(!eq(w, 1), 50, 51)>> { Operand extra = Operand<60>; }
}
def first : Ps<"f", Operand<1>>;
defm A : M<1>;
defm : M<2>;
defm B : M<3>;
