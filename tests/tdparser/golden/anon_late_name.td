// A def whose name depends on a loop iterator or a multiclass's NAME is parsed with that name
// unresolved, so `P2V<NAME>` in a parent's field is only made when the loop or defm resolves
// the name, after the lets and the body: a let that replaces the field means no record.
class P2V<string p> { string v = !subst("X", "", !subst("_L", "", !subst("_K", "", !subst("_J", "", !subst("_M", "", !subst("Pseudo", "", p)))))); }
class Instruction;
def VADD : Instruction; def VSUB : Instruction; def VMUL : Instruction; def VX : Instruction;
class Base { Instruction BaseInstr = !cast<Instruction>(P2V<NAME>.v); string n = NAME; }
def PseudoVADDX : Base;
let BaseInstr = VX in def PseudoVSUBX : Base;
foreach s = ["VADD", "VSUB"] in {
  let BaseInstr = VX in def "Pseudo" # s # "_L" : Base;
  def "Pseudo" # s : Base { let BaseInstr = VX; }
  def "Pseudo" # s # "_K" : Base;
}
multiclass M<string s> {
  defvar unused = s;
  let BaseInstr = VX in def "" : Base;
  def _K : Base;
  def _J : Base { let BaseInstr = VX; }
}
defm PseudoVMUL : M<"x">;
foreach s = ["VADD"] in
  defm "Pseudo" # s # "_M" : M<s>;
