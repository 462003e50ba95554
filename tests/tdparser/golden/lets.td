// Body lets, top-level `let ... in`, nested lets and bit-range lets.
class R { int a = 0; string s = "x"; bits<8> enc = 0; list<int> l = []; }
let a = 5 in def L1 : R;
let a = 6, s = "outer" in {
  def L2 : R;
  let s = "inner" in def L3 : R;
  def L4 : R { let s = "body"; }
}
def L5 : R { let enc{3-0} = 0b1010; let enc{7} = 1; }
let l = [1, 2] in def L6 : R;
