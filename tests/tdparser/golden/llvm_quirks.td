// llvm-tblgen behaviours that are easy to get wrong.
class P<int n> { int N = n; }
class Holder<int f> { P p = !if(f, P<!add(f, 100)>, P<!sub(f, 100)>); }
multiclass M<int f> {
  // Only the taken arm of this !if becomes an anonymous record.
  def _h : Holder<f>;
  foreach i = [f] in def _l # i { P q = !if(i, P<!mul(i, 7)>, P<!mul(i, 9)>); }
}
defm A :
  M<1>;  // the defm's location is that of `M`, on this line
class Self { Self me = !cast<Self>(NAME); }
def S : Self;
class Named<int a = 0, int b = 0> { int s = !add(a, b); }
multiclass N {
  foreach t = ["x", "y"] in {
    defvar b = !eq(t, "x");
    def _ # t : Named<b=b>;
  }
}
defm NN : N;
def C { string s = !cond(0: "no", 1: "yes",); list<int> l = [1, 2,]; }
