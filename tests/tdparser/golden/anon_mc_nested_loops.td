// Loops in a multiclass body over lists llvm-tblgen knows are expanded when it parses the body,
// outer loop first: per element, the inner loop's list (NFSet<lmul>) and then, per inner element,
// the instances that need both iterators (Seg<lmul, nf>).
class X { int x = 0; }
class L<int v> { int value = v; }
def M1 : L<1>; def M2 : L<2>;
class NFSet<L m> { list<int> Lst = !if(!eq(m.value, 1), [2, 3], [2]); }
class Seg<L m, int nf> { int RC = !add(m.value, nf); }
class P<int r> : X { int R = r; }
defvar EEW = [8, 16];
multiclass MC {
  foreach eew = EEW in {
    foreach lmul = [M1, M2] in {
      defvar LI = lmul.value;
      let x = 1 in {
        foreach nf = NFSet<lmul>.Lst in {
          defvar vreg = Seg<lmul, nf>.RC;
          def nf # "E" # eew # "_" # LI : P<vreg>;
        }
      }
    }
  }
}
defm A : MC;
